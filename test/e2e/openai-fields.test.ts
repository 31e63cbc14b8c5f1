/**
 * The OpenAI fields of issue 11 end to end: a REAL `tsserve start` serving tiny-lm (random
 * weights, byte-level tokens), every field sent through the official `openai` client, exact
 * outputs. Greedy texts of tiny-lm are fixed by its seeded weights (tools/models/tiny-lm-weights.ts).
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import OpenAI from 'openai';
import { delta, openaiClient, Scrape, tinyLmVariants } from './generation-helpers.js';
import { call, post, removeStores, startTsserve, tempDir } from './harness.js';
import { configArgs } from './config-args.js';
import type { Tsserve } from './harness.js';

/** vLLM's sampling extensions the client's types do not know. */
interface Extras {
  readonly top_k?: number;
  readonly min_p?: number;
  readonly repetition_penalty?: number;
  readonly stop_token_ids?: number[];
  readonly min_tokens?: number;
  readonly include_stop_str_in_output?: boolean;
  readonly ignore_eos?: boolean;
  readonly stream_options?: { include_usage?: boolean; continuous_usage_stats?: boolean };
}
type Body = OpenAI.Completions.CompletionCreateParamsNonStreaming & Extras;
type StreamBody = OpenAI.Completions.CompletionCreateParamsStreaming & Extras;
type ChatBody = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming & Extras;

/** The 400 the client raised: its status and the body's error object. */
async function refusal(p: Promise<unknown>): Promise<{ status: number | undefined; error: unknown }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof OpenAI.APIError) {
      const err = e as { readonly status: number | undefined; readonly error: unknown };
      return { status: err.status, error: err.error };
    }
    throw e;
  }
  throw new Error('expected the request to be refused');
}

/** Writes `request` on a raw socket to `base`'s host and port; resolves with all it read once the server closes. */
function exchange(base: string, request: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const url = new URL(base);
    let out = '';
    const s = net.connect({ host: url.hostname, port: Number(url.port) }, () => {
      s.write(request);
    });
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      out += d;
    });
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

describe('OpenAI fields (real tsserve start, tiny-lm, openai client)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: Tsserve;
  let client: OpenAI;
  const greedy = { model: 'tiny-lm', temperature: 0, ignore_eos: true } as const;

  before(async () => {
    dir = tempDir('oaf');
    // tiny-pool: max_model_len 1024 in 8 blocks of 16, refused at its config check as vLLM refuses it.
    const store = tinyLmVariants(path.join(dir, 'store'), {
      'tiny-lm': {},
      'tiny-short': { maxModelLen: 40 },
      'tiny-pool': { numBlocks: 8 },
    });
    server = await startTsserve({
      store,
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
    client = openaiClient(server);
  });

  after(() => {
    server?.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  const text = async (body: Partial<Body>): Promise<string> => {
    const r = await client.completions.create({ ...greedy, prompt: 'Hello', max_tokens: 24, ...body } as Body);
    return r.choices[0]!.text;
  };

  // tiny-lm's greedy continuation of "Hello" repeats itself: "fjfjf", "idz" twice, "z;" twice.
  const GREEDY = 'Iz;idz;jfaz8fjfjfNfjmidi';

  it('should return completions logprobs consistent with greedy choices, streaming or not', async () => {
    const r = await client.completions.create({ ...greedy, prompt: 'Hello', max_tokens: 12, logprobs: 3 } as Body);
    const c = r.choices[0]!;
    expect(c.text).to.equal(GREEDY.slice(0, 12));
    const lp = c.logprobs!;
    expect(lp.tokens).to.deep.equal([...GREEDY.slice(0, 12)]);
    expect(lp.text_offset).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    lp.top_logprobs!.forEach((top, i) => {
      const entries = Object.entries(top);
      expect(entries.length, `step ${i}`).to.equal(3); // the chosen token is among the 3 best
      const best = entries.reduce((a, b) => (b[1] > a[1] ? b : a));
      expect(best[0], `step ${i}`).to.equal(lp.tokens![i]);
      expect(best[1], `step ${i}`).to.equal(lp.token_logprobs![i]);
      expect(lp.token_logprobs![i]!).to.be.below(0);
    });
    const chunks: OpenAI.Completions.Completion[] = [];
    for await (const ch of await client.completions.create({
      ...greedy,
      prompt: 'Hello',
      max_tokens: 12,
      logprobs: 3,
      stream: true,
    } as StreamBody))
      chunks.push(ch);
    const streamed = {
      tokens: [] as string[],
      token_logprobs: [] as number[],
      top_logprobs: [] as unknown[],
      text_offset: [] as number[],
    };
    for (const ch of chunks) {
      const l = ch.choices[0]?.logprobs;
      if (l === undefined || l === null) continue;
      streamed.tokens.push(...l.tokens!);
      streamed.token_logprobs.push(...l.token_logprobs!);
      streamed.top_logprobs.push(...l.top_logprobs!);
      streamed.text_offset.push(...l.text_offset!);
    }
    expect(streamed).to.deep.equal(lp);
  });

  it('should return chat logprobs with top_logprobs, token bytes and the chosen token first under greedy', async () => {
    const r = await client.chat.completions.create({
      ...greedy,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 3,
      logprobs: true,
      top_logprobs: 2,
    } as ChatBody);
    const c = r.choices[0]!;
    expect(c.message.content).to.equal('itm');
    const content = c.logprobs!.content!;
    expect(content.map((e) => [e.token, e.bytes, e.top_logprobs.length])).to.deep.equal([
      ['i', [105], 2],
      ['t', [116], 2],
      ['m', [109], 2],
    ]);
    for (const e of content) {
      expect(e.top_logprobs[0]).to.deep.equal({ token: e.token, logprob: e.logprob, bytes: e.bytes });
      expect(e.top_logprobs[1]!.logprob).to.be.below(e.logprob);
    }
    const plain = await client.chat.completions.create({
      ...greedy,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 3,
    } as ChatBody);
    expect(plain.choices[0]!.logprobs).to.equal(null);
  });

  it("should take X-Request-Id as the base of the answer's id on the real engine: two requests in flight with one id, and the prompts of a list under one id, all finish", async () => {
    const ask = (
      prompt: string | string[],
    ): Promise<{ data: OpenAI.Completions.Completion; request_id: string | null }> =>
      client.completions
        .create({ ...greedy, prompt, max_tokens: 24 } as Body, { headers: { 'X-Request-Id': 'e2e-same' } })
        .withResponse();
    const answers = await Promise.all([ask('Hello'), ask('Hello'), ask(['Hello', 'Hello'])]);
    const seen = answers.map((r) => [r.data.id, r.request_id, r.data.choices.map((c) => c.text)]);
    expect(seen).to.deep.equal([
      ['cmpl-e2e-same', 'e2e-same', [GREEDY]],
      ['cmpl-e2e-same', 'e2e-same', [GREEDY]],
      ['cmpl-e2e-same', 'e2e-same', [GREEDY, GREEDY]],
    ]);
  });

  it('should change a repeating greedy output with frequency, presence and repetition penalties', async () => {
    expect(await text({})).to.equal(GREEDY);
    // The 6th token would repeat "z" (already in the output): penalised, another token wins.
    expect(await text({ frequency_penalty: 2 })).to.equal('Iz;idbajftmhljfy2x?^mOw/');
    expect(await text({ presence_penalty: 2 })).to.equal('Iz;idbajftmhljfy2x?^mOw/');
    expect(await text({ repetition_penalty: 1.5 } as Partial<Body>)).to.equal('Iz;idbajftmhp^idzasi[q*n');
    // A negative frequency penalty rewards repeats.
    expect(await text({ frequency_penalty: -2 })).to.equal('Iz;idz;z;iz;z;z;z;z;z;z;');
  });

  it('should reproduce a seeded sample and force a token with logit_bias', async () => {
    const a = await text({ temperature: 1, seed: 5 });
    expect(a).to.equal('evdz,krftIqiq!idz/mi_!ag');
    expect(await text({ temperature: 1, seed: 5 })).to.equal(a);
    expect(await text({ temperature: 1, seed: 6 })).to.equal('b"lFid!xz;rK)*iijftFzvTz');
    expect(await text({ logit_bias: { 65: 100 }, max_tokens: 6 })).to.equal('AAAAAA');
    // "I" pushed down: the runner-up "b" (its top_logprobs' second) leads.
    expect(await text({ logit_bias: { 73: -100 }, max_tokens: 4 })).to.equal('b9qi');
    // min_p 1 keeps only the most likely token: sampling becomes greedy.
    expect(await text({ temperature: 1, seed: 5, min_p: 1 } as Partial<Body>)).to.equal(GREEDY);
  });

  it("should sample among the prompt's ids under a tiny repetition_penalty (1e-300 overflowed the logits: every token was PAD, text empty)", async () => {
    const r = await client.completions.create({
      ...greedy,
      temperature: 1,
      seed: 3,
      prompt: 'Hello Hello',
      max_tokens: 6,
      logprobs: 1,
      repetition_penalty: 1e-300,
    } as Body);
    const c = r.choices[0]!;
    // The seen ids with a positive logit tie (2, 5 or 3 of them): each is log(1/k).
    expect([c.text, c.logprobs!.tokens, c.logprobs!.token_logprobs]).to.deep.equal([
      'o  ell',
      ['o', ' ', ' ', 'e', 'l', 'l'],
      [-Math.LN2, -Math.log(5), -Math.LN2, -Math.LN2, -Math.log(5), -Math.log(3)],
    ]);
  });

  it('should stop on stop_token_ids after min_tokens and keep the stop string with include_stop_str_in_output', async () => {
    const r = await client.completions.create({
      ...greedy,
      prompt: 'Hello',
      max_tokens: 24,
      stop_token_ids: [59],
    } as Body);
    expect([
      r.choices[0]!.text,
      r.choices[0]!.finish_reason,
      (r.choices[0] as unknown as { stop_reason: unknown }).stop_reason,
    ]).to.deep.equal(['Iz', 'stop', 59]);
    expect(await text({ stop_token_ids: [59], include_stop_str_in_output: true } as Partial<Body>)).to.equal('Iz;');
    expect(await text({ stop: ['dz'] })).to.equal('Iz;i');
    expect(await text({ stop: ['dz'], include_stop_str_in_output: true } as Partial<Body>)).to.equal('Iz;idz');
    // ";" is banned until 5 tokens exist, which changes the path; the next ";" after that stops.
    expect(await text({ stop_token_ids: [59], min_tokens: 5 } as Partial<Body>)).to.equal('Izhpy2Im^idz');
  });

  it('should refuse with a 400 a request whose stop_token_ids and min_tokens ban every token, and finish the requests beside it', async () => {
    const before = await Scrape.of(server);
    // Three requests running on the engine when the bad one arrives (a banned-out sequence used to
    // put id -1 into the batched run and fail all of them with a 500; the frontend refuses it now).
    const beside = [0, 1, 2].map(() =>
      client.completions.create({ ...greedy, prompt: 'Hello', max_tokens: 48 } as Body),
    );
    const everyId = Array.from({ length: 259 }, (_v, i) => i);
    expect(
      await refusal(
        client.completions.create({
          model: 'tiny-lm',
          prompt: 'a',
          max_tokens: 5,
          min_tokens: 5,
          stop_token_ids: everyId,
        } as Body),
      ),
    ).to.deep.equal({
      status: 400,
      error: {
        message:
          "stop_token_ids with the model's EOS and suppressed ids cover all 259 token ids, so nothing could be sampled before min_tokens (5); leave at least one id out",
        type: 'invalid_request_error',
        param: 'stop_token_ids',
        code: null,
      },
    });
    // Streamed, the same 400 (it was a 200 whose only event was the error, then [DONE]), on both routes.
    const banned = {
      error: {
        message:
          "stop_token_ids with the model's EOS and suppressed ids cover all 259 token ids, so nothing could be sampled before min_tokens (1); leave at least one id out",
        type: 'invalid_request_error',
        param: 'stop_token_ids',
        code: null,
      },
    };
    expect(
      await post(`${server.inference}/v1/completions`, {
        model: 'tiny-lm',
        prompt: 'a',
        max_tokens: 5,
        min_tokens: 1,
        stop_token_ids: everyId,
        stream: true,
      }),
    ).to.deep.include({ status: 400, json: banned });
    expect(
      await post(`${server.inference}/v1/chat/completions`, {
        model: 'tiny-lm',
        messages: [{ role: 'user', content: 'a' }],
        max_tokens: 5,
        min_tokens: 1,
        stop_token_ids: everyId,
        stream: true,
      }),
    ).to.deep.include({ status: 400, json: banned });
    const done = await Promise.all(beside);
    expect(done.map((r) => [r.choices[0]!.finish_reason, r.usage!.completion_tokens])).to.deep.equal([
      ['length', 48],
      ['length', 48],
      ['length', 48],
    ]);
    const after = await Scrape.of(server);
    expect(
      delta(before, after, 'ts_request_success_total', { model_name: 'tiny-lm', finished_reason: 'length' }),
    ).to.equal(3);
    expect(
      delta(before, after, 'ts_request_success_total', { model_name: 'tiny-lm', finished_reason: 'error' }),
    ).to.equal(0);
  });

  it('should answer a list of prompts with n choices each, indexed prompt × n + i, and echo the prompts', async () => {
    const r = await client.completions.create({ ...greedy, prompt: ['Hello', 'Hi'], n: 2, max_tokens: 4 } as Body);
    expect(r.choices.map((c) => [c.index, c.text])).to.deep.equal([
      [0, 'Iz;i'],
      [1, 'Iz;i'],
      [2, 'b5bb'],
      [3, 'b5bb'],
    ]);
    expect(r.usage).to.deep.equal({
      prompt_tokens: 9,
      completion_tokens: 16,
      total_tokens: 25,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    const e = await client.completions.create({
      ...greedy,
      prompt: ['Hello', 'Hi'],
      max_tokens: 4,
      echo: true,
    } as Body);
    expect(e.choices.map((c) => c.text)).to.deep.equal(['HelloIz;i', 'Hib5bb']);
    const streamed = ['', ''];
    for await (const ch of await client.completions.create({
      ...greedy,
      prompt: ['Hello', 'Hi'],
      max_tokens: 4,
      echo: true,
      stream: true,
    } as StreamBody)) {
      for (const c of ch.choices) streamed[c.index] += c.text;
    }
    expect(streamed).to.deep.equal(['HelloIz;i', 'Hib5bb']);
  });

  it('should refuse every unsupported field by name with a 400', async () => {
    const msgs = [{ role: 'user' as const, content: 'Hi' }];
    expect(
      await refusal(
        client.chat.completions.create({
          model: 'tiny-lm',
          messages: msgs,
          tools: [{ type: 'function', function: { name: 'f' } }],
        }),
      ),
    ).to.deep.equal({
      status: 400,
      error: {
        message: "Unsupported parameter: 'tools' is not supported by this server.",
        type: 'invalid_request_error',
        param: 'tools',
        code: 'unsupported_parameter',
      },
    });
    for (const [field, value] of [
      ['response_format', { type: 'json_object' }],
      ['tool_choice', 'auto'],
      ['parallel_tool_calls', true],
      ['functions', []],
      ['prediction', { type: 'content', content: 'x' }],
      ['reasoning_effort', 'low'],
      ['store', true],
      ['metadata', {}],
      ['service_tier', 'auto'],
    ] as const) {
      expect(
        await refusal(
          client.chat.completions.create({ model: 'tiny-lm', messages: msgs, [field]: value } as unknown as ChatBody),
        ),
        field,
      ).to.deep.equal({
        status: 400,
        error: {
          message: `Unsupported parameter: '${field}' is not supported by this server.`,
          type: 'invalid_request_error',
          param: field,
          code: 'unsupported_parameter',
        },
      });
    }
    for (const field of ['suffix', 'best_of']) {
      expect(
        await refusal(
          client.completions.create({ model: 'tiny-lm', prompt: 'x', [field]: field === 'suffix' ? 'y' : 2 } as Body),
        ),
        field,
      ).to.deep.equal({
        status: 400,
        error: {
          message: `Unsupported parameter: '${field}' is not supported by this server.`,
          type: 'invalid_request_error',
          param: field,
          code: 'unsupported_parameter',
        },
      });
    }
  });

  it('should refuse more than 64 stop strings with a 400 and take 64 (each is searched for after every token)', async () => {
    const stops = (k: number): string[] => Array.from({ length: k }, (_v, i) => `\u4e00${i}`);
    expect(
      await refusal(client.completions.create({ ...greedy, prompt: 'Hello', max_tokens: 4, stop: stops(65) } as Body)),
    ).to.deep.equal({
      status: 400,
      error: {
        message: 'stop takes at most 64 strings, got 65',
        type: 'invalid_request_error',
        param: 'stop',
        code: null,
      },
    });
    const r = await client.completions.create({ ...greedy, prompt: 'Hello', max_tokens: 4, stop: stops(64) } as Body);
    expect([r.choices[0]!.text, r.choices[0]!.finish_reason]).to.deep.equal([GREEDY.slice(0, 4), 'length']);
  });

  it("should default max_tokens to 16 for completions (OpenAI's and vLLM's; it was the rest of max_model_len), to the rest for chat, and refuse an overflow with vLLM's message", async () => {
    // tiny-short: max_model_len 40; "Hello" is 6 tokens with BOS, 34 left; "x" x 30 is 31, 9 left.
    const r = await client.completions.create({
      model: 'tiny-short',
      prompt: 'Hello',
      temperature: 0,
      ignore_eos: true,
    } as Body);
    expect([r.usage!.completion_tokens, r.choices[0]!.finish_reason]).to.deep.equal([16, 'length']);
    const capped = await client.completions.create({
      model: 'tiny-short',
      prompt: 'x'.repeat(30),
      temperature: 0,
      ignore_eos: true,
    } as Body);
    expect([capped.usage!.completion_tokens, capped.choices[0]!.finish_reason]).to.deep.equal([9, 'length']);
    const c = await client.chat.completions.create({
      model: 'tiny-short',
      messages: [{ role: 'user', content: 'Hi' }],
      temperature: 0,
      ignore_eos: true,
    } as ChatBody);
    expect([c.usage!.prompt_tokens, c.usage!.completion_tokens]).to.deep.equal([20, 20]);
    expect(
      await refusal(client.completions.create({ model: 'tiny-short', prompt: 'Hello', max_tokens: 35 })),
    ).to.deep.equal({
      status: 400,
      error: {
        message:
          "'max_tokens' or 'max_completion_tokens' is too large: 35. This model's maximum context length is 40 tokens and your request has 6 input tokens (35 > 40 - 6).",
        type: 'invalid_request_error',
        param: 'max_tokens',
        code: null,
      },
    });
    expect(await refusal(client.completions.create({ model: 'tiny-short', prompt: 'x'.repeat(39) }))).to.deep.equal({
      status: 400,
      error: {
        message:
          "This model's maximum context length is 40 tokens. However, your request has 40 input tokens. Please reduce the length of the input messages.",
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
  });

  it('should report cached_tokens equal to the prefix-cache hits of the request', async () => {
    const prompt = `cache me: ${'abcdefghij'.repeat(5)}`; // 61 tokens with BOS
    const before = await Scrape.of(server);
    const first = await client.completions.create({ ...greedy, prompt, max_tokens: 2 } as Body);
    const mid = await Scrape.of(server);
    const second = await client.completions.create({ ...greedy, prompt, max_tokens: 2 } as Body);
    const after = await Scrape.of(server);
    const L = { model_name: 'tiny-lm', engine: '0' };
    expect(first.usage!.prompt_tokens_details).to.deep.equal({ cached_tokens: 0 });
    expect(delta(before, mid, 'ts_prefix_cache_hits_total', L)).to.equal(0);
    // Three full blocks of 16 (<= P - 1 = 60).
    expect(second.usage!.prompt_tokens_details).to.deep.equal({ cached_tokens: 48 });
    expect(delta(mid, after, 'ts_prefix_cache_hits_total', L)).to.equal(48);
  });

  it('should put usage on every chunk with continuous_usage_stats', async () => {
    const usages: unknown[] = [];
    for await (const ch of await client.completions.create({
      ...greedy,
      prompt: 'Hello',
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    } as StreamBody)) {
      usages.push([ch.choices.length, ch.usage?.completion_tokens, ch.usage?.prompt_tokens]);
    }
    expect(usages).to.deep.equal([
      [1, 1, 6],
      [1, 2, 6],
      [1, 3, 6],
      [0, 3, 6],
    ]);
  });

  it("should count no completion token in a chat stream's role chunk with continuous_usage_stats (it counted the first output's)", async () => {
    const usages: unknown[] = [];
    const body = {
      ...greedy,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    };
    for await (const ch of await client.chat.completions.create(
      body as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    )) {
      usages.push([
        ch.choices[0]?.delta.role ?? null,
        ch.usage?.completion_tokens,
        ch.usage?.prompt_tokens,
        ch.usage?.total_tokens,
      ]);
    }
    expect(usages).to.deep.equal([
      ['assistant', 0, 20, 20],
      [null, 1, 20, 21],
      [null, 2, 20, 22],
      [null, 3, 20, 23],
      [null, 3, 20, 23],
    ]);
  });

  it('should serve /tokenize, /detokenize (an exact round trip), /version, /health and max_model_len in /v1/models', async () => {
    const t = await post(`${server.inference}/tokenize`, { model: 'tiny-lm', prompt: 'h\u00e9llo' });
    expect(t).to.deep.include({
      status: 200,
      json: { count: 7, max_model_len: 1024, tokens: [256, 104, 195, 169, 108, 108, 111], token_strs: null },
    });
    const d = await post(`${server.inference}/detokenize`, {
      model: 'tiny-lm',
      tokens: [256, 104, 195, 169, 108, 108, 111],
    });
    expect(d).to.deep.include({ status: 200, json: { prompt: 'h\u00e9llo' } });
    const chat = await post(`${server.inference}/tokenize`, {
      model: 'tiny-lm',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect((chat.json as { count: number }).count).to.equal(20);
    const strs = await post(`${server.inference}/tokenize`, {
      model: 'tiny-lm',
      prompt: 'a\u00e9',
      add_special_tokens: false,
      return_token_strs: true,
    });
    expect(strs.json).to.deep.equal({
      count: 3,
      max_model_len: 1024,
      tokens: [97, 195, 169],
      token_strs: ['a', 'bytes:\\xc3', 'bytes:\\xa9'],
    });
    expect(await post(`${server.inference}/detokenize`, { model: 'tiny-lm', tokens: [259] })).to.deep.include({
      status: 400,
      json: {
        error: {
          message: 'tokens must be a list of token ids in 0..258',
          type: 'invalid_request_error',
          param: 'tokens',
          code: null,
        },
      },
    });
    expect(await call('GET', `${server.inference}/version`)).to.deep.equal({ status: 200, json: { version: '0.1.0' } });
    expect((await call('GET', `${server.inference}/health`)).status).to.equal(200);
    const models = await client.models.list();
    expect(models.data.map((m) => [m.id, (m as unknown as { max_model_len: number }).max_model_len])).to.deep.equal([
      ['tiny-lm', 1024],
      ['tiny-short', 40],
    ]);
  });

  it('should not serve a model whose KV pool cannot hold its max_model_len (listed at 1024, it refused every request past 128)', async () => {
    const file = path.join(dir, 'store', 'tiny-pool', 'model-config.yaml');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const line = lines.findIndex((l) => l.trimStart().startsWith('maxModelLen:'));
    const col = lines[line]!.indexOf(':') + 3;
    // The server's JSON log lines that name the model: one, the start-up skip with the problem.
    const said = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{') && l.includes('tiny-pool'))
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(said).to.deep.equal([
      {
        ...said[0],
        level: 'error',
        msg: `model tiny-pool skipped: invalid model config for tiny-pool:\n  ${file}:${line + 1}:${col}: engine.maxModelLen: The model's max seq len (1024) is larger than the maximum number of tokens that can be stored in KV cache (128: numBlocks 8 × blockSize 16). Try increasing engine.kvCacheBytes or engine.numBlocks, or decreasing engine.maxModelLen to 128.`,
      },
    ]);
    expect(
      (await client.models.list()).data.map((m) => [m.id, (m as unknown as { max_model_len: number }).max_model_len]),
    ).to.deep.equal([
      ['tiny-lm', 1024],
      ['tiny-short', 40],
    ]);
    expect(await post(`${server.inference}/tokenize`, { model: 'tiny-pool', prompt: 'hi' })).to.deep.include({
      status: 404,
      json: {
        error: {
          message: 'The model `tiny-pool` does not exist.',
          type: 'not_found_error',
          param: 'model',
          code: 'model_not_found',
        },
      },
    });
  });

  it('should stream to an HTTP/1.0 client without a trailer, closing the connection at the end (the Trailer header threw and the server exited)', async () => {
    const body = JSON.stringify({ ...greedy, prompt: 'Hello', max_tokens: 3, stream: true });
    const raw = await exchange(
      server.inference,
      `POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const [head, ...events] = raw
      .split('\r\n\r\n')
      .join('\n\n')
      .split('\n\n')
      .filter((e) => e !== '');
    const headers = head!.split('\r\n');
    expect(headers[0]).to.equal('HTTP/1.1 200 OK');
    expect(headers.filter((h) => /^(trailer|connection|transfer-encoding):/i.test(h))).to.deep.equal([
      'Connection: close',
    ]);
    expect(
      events.map((e) =>
        e === 'data: [DONE]'
          ? e
          : (JSON.parse(e.slice('data: '.length)) as { choices: { text: string }[] }).choices[0]!.text,
      ),
    ).to.deep.equal(['I', 'z', ';', 'data: [DONE]']);
    // Still serving.
    expect((await client.models.list()).data.map((m) => m.id)).to.deep.equal(['tiny-lm', 'tiny-short']);
  });

  it("should close a streamed answer's connection when the client sent Connection: close (the stream forced keep-alive and held the socket 65 s)", async () => {
    const body = JSON.stringify({ ...greedy, prompt: 'Hello', max_tokens: 2, stream: true });
    // Resolves when the server closes the connection; the test's timeout is the deadline.
    const raw = await exchange(
      server.inference,
      `POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    const head = raw.slice(0, raw.indexOf('\r\n\r\n')).split('\r\n');
    expect(head.filter((h) => /^(connection|trailer|transfer-encoding):/i.test(h))).to.deep.equal([
      'Trailer: Server-Timing',
      'Connection: close',
      'Transfer-Encoding: chunked',
    ]);
    // Chunked: the events' data lines, then the final chunk and its Server-Timing trailer.
    const data = raw.split('\n').filter((l) => l.startsWith('data: '));
    expect(
      data.map((l) =>
        l === 'data: [DONE]'
          ? l
          : (JSON.parse(l.slice('data: '.length)) as { choices: { text: string }[] }).choices[0]!.text,
      ),
    ).to.deep.equal(['I', 'z', 'data: [DONE]']);
    expect(raw).to.match(/\r\n0\r\nServer-Timing: [^\r]+\r\n\r\n$/);
  });

  it("should answer models.retrieve with the listed object, and unknown models and /v1 paths in OpenAI's error shape", async () => {
    const one = await client.models.retrieve('tiny-short');
    expect(one).to.deep.equal({
      id: 'tiny-short',
      object: 'model',
      created: one.created,
      owned_by: 'tsserve',
      root: 'tiny-short',
      parent: null,
      max_model_len: 40,
    });
    expect(await refusal(client.models.retrieve('nope'))).to.deep.equal({
      status: 404,
      error: {
        message: 'The model `nope` does not exist.',
        type: 'not_found_error',
        param: 'model',
        code: 'model_not_found',
      },
    });
    expect(await refusal(client.moderations.create({ model: 'tiny-lm', input: 'x' }))).to.deep.equal({
      status: 404,
      error: { message: 'Invalid URL (POST /v1/moderations)', type: 'not_found_error', param: null, code: null },
    });
    // A generation model on the embeddings route (served for handler: embedding models) is named as such.
    expect(await refusal(client.embeddings.create({ model: 'tiny-lm', input: 'x' }))).to.deep.equal({
      status: 400,
      error: {
        message: 'The model `tiny-lm` does not serve /v1/embeddings.',
        type: 'invalid_request_error',
        param: 'model',
        code: null,
      },
    });
    // A model id that is not valid percent-encoding is the client's error (it was a 500 server_error).
    expect(await call('GET', `${server.inference}/v1/models/%ZZ`)).to.deep.equal({
      status: 400,
      json: {
        error: { message: "Failed to decode param '%ZZ'", type: 'invalid_request_error', param: null, code: null },
      },
    });
    // A body refused for its encoding is the client's error (type was server_error).
    expect(await post(`${server.inference}/v1/completions`, '{}', { 'content-encoding': 'br' })).to.deep.include({
      status: 415,
      json: {
        error: {
          message: 'unsupported Content-Encoding "br" (send identity or gzip)',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    });
    // Outside /v1 and /v2 the TorchServe shape stays.
    expect(await call('GET', `${server.inference}/nowhere`)).to.deep.equal({
      status: 404,
      json: {
        code: 404,
        type: 'ResourceNotFoundException',
        message: 'Requested resource is not found, please refer to API document.',
      },
    });
  });
});
