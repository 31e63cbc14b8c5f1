/**
 * The generation frontend end to end: a REAL `tsserve start` serving tiny-lm under several
 * engine settings, the official `openai` client, and exact deltas of the vLLM-style families
 * on /metrics (P = prompt tokens from the response usage, k = max_tokens).
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import type OpenAI from 'openai';
import { configArgs } from './config-args.js';
import { delta, openaiClient, Scrape, tinyLmVariants } from './generation-helpers.js';
import type { VllmExtras } from './generation-helpers.js';
import { call, generateStore, post, removeStores, startTsserve, tempDir } from './harness.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';

const BLOCK = 16;
const PER_REQUEST = [
  'ts_time_to_first_token_seconds',
  'ts_e2e_request_latency_seconds',
  'ts_request_queue_time_seconds',
  'ts_request_prefill_time_seconds',
  'ts_request_decode_time_seconds',
  'ts_request_inference_time_seconds',
  'ts_request_time_per_output_token_seconds',
  'ts_request_prompt_tokens',
  'ts_request_generation_tokens',
  'ts_request_params_n',
  'ts_request_params_max_tokens',
];

type CompletionBody = OpenAI.Completions.CompletionCreateParamsNonStreaming & VllmExtras;
type StreamBody = OpenAI.Completions.CompletionCreateParamsStreaming & VllmExtras;

describe('generation frontend (real tsserve start, tiny-lm, openai client)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: Tsserve;
  let client: OpenAI;
  let initial: Scrape;
  const L = (model: string): Record<string, string> => ({ model_name: model, engine: '0' });

  before(async () => {
    dir = tempDir('gen');
    const store = tinyLmVariants(path.join(dir, 'store'), {
      'tiny-lm': {},
      'tiny-sat': { maxNumSeqs: 2 },
      // Rows of 16 × 2^k positions, so the 8 blocks, not the rows' half of the budget, run out first;
      // max_model_len what 8 blocks hold (a longer one is refused at the config check, as vLLM refuses it).
      'tiny-small': { numBlocks: 8, rowGrowStep: 16, maxModelLen: 128 },
      'tiny-nocache': { enablePrefixCaching: false },
      'tiny-crash': {}, // its worker is SIGKILLed by one test
    });
    fs.mkdirSync(path.join(dir, 'logs'));
    server = await startTsserve({
      store,
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics', '--log-stats-interval', '1'],
      logDir: path.join(dir, 'logs'),
    });
    client = openaiClient(server);
    initial = await Scrape.of(server); // before any request: what start-up pre-created
  });

  after(() => {
    server?.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it('should list the generation models and pre-create every series at 0', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id).sort()).to.deep.equal([
      'tiny-crash',
      'tiny-lm',
      'tiny-nocache',
      'tiny-sat',
      'tiny-small',
    ]);
    const s = initial;
    for (const r of ['stop', 'length', 'abort', 'error']) {
      expect(s.has('ts_request_success_total', { ...L('tiny-sat'), finished_reason: r }), r).to.equal(true);
      expect(s.get('ts_request_success_total', { ...L('tiny-sat'), finished_reason: r }), r).to.equal(0);
    }
    expect(
      s.get('ts_cache_config_info', {
        ...L('tiny-small'),
        block_size: '16',
        num_blocks: '8',
        enable_prefix_caching: 'True',
      }),
    ).to.equal(1);
    expect(s.get('ts_cache_config_info', { ...L('tiny-nocache'), enable_prefix_caching: 'False' })).to.equal(1);
    expect(s.get('ts_num_requests_running', L('tiny-sat'))).to.equal(0);
  });

  it('should count N sequential requests exactly in every family', async () => {
    const N = 4;
    const k = 5;
    const before = await Scrape.of(server);
    const P: number[] = [];
    for (let i = 0; i < N; i++) {
      const body: CompletionBody = {
        model: 'tiny-lm',
        prompt: `Request number ${i}: tell me a story`,
        max_tokens: k,
        ignore_eos: true,
      };
      const r = await client.completions.create(body);
      expect(r.choices[0].finish_reason).to.equal('length');
      expect(r.usage?.completion_tokens).to.equal(k);
      expect(r.usage?.total_tokens).to.equal((r.usage?.prompt_tokens ?? 0) + k);
      P.push(r.usage?.prompt_tokens ?? 0);
    }
    const after = await Scrape.of(server);
    const d = (name: string, extra: Record<string, string> = {}): number =>
      delta(before, after, name, { ...L('tiny-lm'), ...extra });
    const sumP = P.reduce((a, b) => a + b, 0);
    expect(d('ts_request_success_total', { finished_reason: 'length' })).to.equal(N);
    for (const r of ['stop', 'abort', 'error'])
      expect(d('ts_request_success_total', { finished_reason: r })).to.equal(0);
    expect(d('ts_generation_tokens_total')).to.equal(N * k);
    expect(d('ts_prompt_tokens_total')).to.equal(sumP);
    for (const h of PER_REQUEST) expect(d(`${h}_count`), h).to.equal(N);
    expect(d('ts_inter_token_latency_seconds_count')).to.equal(N * (k - 1));
    expect(d('ts_request_prompt_tokens_sum')).to.equal(sumP);
    expect(d('ts_request_generation_tokens_sum')).to.equal(N * k);
    expect(d('ts_request_params_n_sum')).to.equal(N);
    expect(d('ts_request_params_max_tokens_sum')).to.equal(N * k);
    expect(d('ts_request_max_num_generation_tokens_sum')).to.equal(N * k);
    expect(d('ts_iteration_tokens_count')).to.equal(N * k);
    expect(d('ts_iteration_tokens_sum')).to.equal(sumP + N * k);
  });

  it('should give one request inference = prefill + decode, TTFT <= e2e, one queue-time observation and a decode time above 0', async () => {
    const before = await Scrape.of(server);
    await client.completions.create({
      model: 'tiny-lm',
      prompt: 'One timing request',
      max_tokens: 8,
      ignore_eos: true,
    } as CompletionBody);
    const after = await Scrape.of(server);
    const d = (name: string): number => delta(before, after, name, L('tiny-lm'));
    expect(d('ts_request_inference_time_seconds_sum')).to.be.closeTo(
      d('ts_request_prefill_time_seconds_sum') + d('ts_request_decode_time_seconds_sum'),
      1e-9,
    );
    expect(d('ts_time_to_first_token_seconds_sum')).to.be.at.most(d('ts_e2e_request_latency_seconds_sum'));
    expect(d('ts_request_queue_time_seconds_count')).to.equal(1);
    expect(d('ts_request_decode_time_seconds_sum')).to.be.above(0);
  });

  it('should answer n=2 with two completions and observe n once with value 2', async () => {
    const k = 4;
    const before = await Scrape.of(server);
    const r = await client.completions.create({
      model: 'tiny-lm',
      prompt: 'Two answers please',
      max_tokens: k,
      n: 2,
      ignore_eos: true,
    } as CompletionBody);
    const after = await Scrape.of(server);
    const d = (name: string, extra: Record<string, string> = {}): number =>
      delta(before, after, name, { ...L('tiny-lm'), ...extra });
    expect(r.choices.map((c) => c.index)).to.deep.equal([0, 1]);
    expect(r.usage?.completion_tokens).to.equal(2 * k);
    const P = r.usage?.prompt_tokens ?? 0;
    expect(d('ts_request_params_n_count')).to.equal(1);
    expect(d('ts_request_params_n_sum')).to.equal(2);
    expect(d('ts_request_max_num_generation_tokens_count')).to.equal(1);
    expect(d('ts_request_max_num_generation_tokens_sum')).to.equal(k);
    expect(d('ts_request_success_total', { finished_reason: 'length' })).to.equal(2);
    expect(d('ts_generation_tokens_total')).to.equal(2 * k);
    expect(d('ts_prompt_tokens_total')).to.equal(2 * P);
  });

  it('should give the same tokens streaming and not streaming for a seed', async () => {
    const body = {
      model: 'tiny-lm',
      prompt: 'Seeded sampling',
      max_tokens: 12,
      seed: 42,
      temperature: 1,
      ignore_eos: true,
    };
    const whole = await client.completions.create(body as CompletionBody);
    const stream = await client.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    } as StreamBody);
    let text = '';
    let usage: OpenAI.Completions.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text += c.text;
        finish = c.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).to.equal(whole.choices[0].text);
    expect(finish).to.equal('length');
    expect(usage).to.deep.equal(whole.usage);
  });

  it('should serve chat completions with the documented template', async () => {
    const r = await client.chat.completions.create({
      model: 'tiny-lm',
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 3,
      ...({ ignore_eos: true } as object),
    });
    expect(r.object).to.equal('chat.completion');
    expect(r.choices[0].message.role).to.equal('assistant');
    expect(r.choices[0].finish_reason).to.equal('length');
    // "user: Hi\nassistant:" is 19 bytes, plus BOS.
    expect(r.usage).to.deep.equal({
      prompt_tokens: 20,
      completion_tokens: 3,
      total_tokens: 23,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it('should give a prompt sent as byte-level token ids (BOS + UTF-8 bytes) the same greedy tokens and prompt_tokens as the string', async () => {
    const engine = (
      yaml.load(fs.readFileSync(path.join(generateStore(['tiny-lm']), 'tiny-lm', 'model-config.yaml'), 'utf8')) as {
        engine: { bosTokenId: number; vocabSize: number };
      }
    ).engine;
    const text = 'Token ids: h\u00e9llo';
    const ids = [engine.bosTokenId, ...Buffer.from(text, 'utf8')];
    expect(ids.length).to.equal(18);
    const body = { model: 'tiny-lm', max_tokens: 10, temperature: 0, ignore_eos: true };
    const asText = await client.completions.create({ ...body, prompt: text } as CompletionBody);
    const asIds = await client.completions.create({ ...body, prompt: ids } as CompletionBody);
    expect(asText.usage).to.deep.equal({
      prompt_tokens: 18,
      completion_tokens: 10,
      total_tokens: 28,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    // The second send finds the first's full block (16 tokens) in the prefix cache.
    expect(asIds.usage).to.deep.equal({ ...asText.usage, prompt_tokens_details: { cached_tokens: 16 } });
    expect(asIds.choices[0].text).to.equal(asText.choices[0].text);
    expect(asIds.choices[0].finish_reason).to.equal('length');
    const outside = await post(`${server.inference}/v1/completions`, {
      model: 'tiny-lm',
      prompt: [engine.bosTokenId, engine.vocabSize],
    });
    expect(outside.status).to.equal(400);
    expect(outside.json).to.deep.equal({
      error: {
        message: `prompt token id ${engine.vocabSize} at index 1 is outside the model's vocabulary (0..${engine.vocabSize - 1})`,
        type: 'invalid_request_error',
        param: 'prompt',
        code: null,
      },
    });
  });

  it("should answer an unknown model with 404 and bad params with 400, in OpenAI's error shape", async () => {
    const nf = await post(`${server.inference}/v1/completions`, { model: 'nope', prompt: 'x' });
    expect(nf.status).to.equal(404);
    expect(nf.json).to.deep.equal({
      error: {
        message: 'The model `nope` does not exist.',
        type: 'not_found_error',
        param: 'model',
        code: 'model_not_found',
      },
    });
    const bad = await post(`${server.inference}/v1/completions`, { model: 'tiny-lm', prompt: 'x', max_tokens: -1 });
    expect(bad.status).to.equal(400);
    expect(bad.json).to.deep.equal({
      error: {
        message: 'max_tokens must be an integer between 1 and 9007199254740991, got -1',
        type: 'invalid_request_error',
        param: 'max_tokens',
        code: null,
      },
    });
    let status = 0;
    try {
      await client.completions.create({ model: 'tiny-lm', prompt: 'x', temperature: 9 });
    } catch (e) {
      status = (e as { status: number }).status;
    }
    expect(status).to.equal(400);
  });

  it('should count a stream closed by the client as one abort and free the engine', async () => {
    const before = await Scrape.of(server);
    const stream = await client.completions.create({
      model: 'tiny-lm',
      prompt: 'A long story',
      max_tokens: 600,
      ignore_eos: true,
      stream: true,
    } as StreamBody);
    let chunks = 0;
    for await (const _chunk of stream) {
      if (++chunks === 3) break; // leaving the loop aborts the HTTP request
    }
    const after = await until(
      async () => {
        const s = await Scrape.of(server);
        return delta(before, s, 'ts_request_success_total', { ...L('tiny-lm'), finished_reason: 'abort' }) === 1
          ? s
          : null;
      },
      { message: 'success{abort} + 1' },
    );
    const d = (name: string, extra: Record<string, string> = {}): number =>
      delta(before, after, name, { ...L('tiny-lm'), ...extra });
    expect(d('ts_request_success_total', { finished_reason: 'length' })).to.equal(0);
    expect(d('ts_e2e_request_latency_seconds_count')).to.equal(1);
    expect(d('ts_time_to_first_token_seconds_count')).to.equal(1);
    expect(d('ts_generation_tokens_total')).to.be.below(600);
    await until(
      async () => {
        const s = await Scrape.of(server);
        return s.get('ts_num_requests_running', L('tiny-lm')) === 0 &&
          s.get('ts_kv_cache_usage_ratio', L('tiny-lm')) === 0
          ? true
          : null;
      },
      { message: 'running and KV usage back to 0' },
    );
  });

  it('should count a stream the client closed early exactly once in Requests2XX (the 200 already sent)', async () => {
    const host = { Level: 'Host' };
    const before = await Scrape.of(server);
    const stream = await client.completions.create({
      model: 'tiny-lm',
      prompt: 'Count me once',
      max_tokens: 600,
      ignore_eos: true,
      stream: true,
    } as StreamBody);
    for await (const _chunk of stream) break; // one chunk (headers and status sent), then close
    // The engine counts the abort after the server saw the close (which is when the response is counted).
    const after = await until(
      async () => {
        const s = await Scrape.of(server);
        return delta(before, s, 'ts_request_success_total', { ...L('tiny-lm'), finished_reason: 'abort' }) === 1
          ? s
          : null;
      },
      { message: 'success{abort} + 1' },
    );
    expect(delta(before, after, 'Requests2XX', host)).to.equal(1);
    expect(delta(before, after, 'Requests4XX', host)).to.equal(0);
    expect(delta(before, after, 'Requests5XX', host)).to.equal(0);
  });

  it('should hit the prefix cache on a repeated long prompt (block-aligned, <= P-1) and never with caching off', async () => {
    const prompt = `Prefix-cache probe ${Date.now()}: ${'the quick brown fox jumps over the lazy dog; '.repeat(3)}`;
    for (const model of ['tiny-lm', 'tiny-nocache']) {
      const hits: number[] = [];
      const queries: number[] = [];
      let P = 0;
      for (let i = 0; i < 2; i++) {
        const before = await Scrape.of(server);
        const r = await client.completions.create({ model, prompt, max_tokens: 2, ignore_eos: true } as CompletionBody);
        const after = await Scrape.of(server);
        P = r.usage?.prompt_tokens ?? 0;
        hits.push(delta(before, after, 'ts_prefix_cache_hits_total', L(model)));
        queries.push(delta(before, after, 'ts_prefix_cache_queries_total', L(model)));
        expect(delta(before, after, 'ts_prompt_tokens_total', L(model)), `${model} prompt tokens`).to.equal(P);
      }
      if (model === 'tiny-lm') {
        expect(queries).to.deep.equal([P, P]);
        expect(P).to.be.above(BLOCK); // so the second request has at least one full block to hit
        // Whole blocks only, and never the last prompt token (it must be computed to sample).
        expect(hits).to.deep.equal([0, Math.floor((P - 1) / BLOCK) * BLOCK]);
      } else {
        expect(hits).to.deep.equal([0, 0]);
        expect(queries).to.deep.equal([0, 0]);
      }
    }
  });

  it('should show waiting > 0 while saturated beyond maxNumSeqs, and running, waiting, KV usage at 0 after', async () => {
    const before = await Scrape.of(server);
    // Long enough (3 rounds of 400 steps) that the saturated state outlasts a few scrapes even
    // on a fast machine: at 60 tokens it could be over before the first scrape looked.
    const runs = Array.from({ length: 6 }, (_v, i) =>
      client.completions.create({
        model: 'tiny-sat',
        prompt: `Saturate ${i}`,
        max_tokens: 400,
        ignore_eos: true,
      } as CompletionBody),
    );
    let last: Scrape | null = null;
    const saturated = await until(
      async () => {
        last = await Scrape.of(server);
        return last.get('ts_num_requests_running', L('tiny-sat')) === 2 &&
          last.get('ts_num_requests_waiting', L('tiny-sat')) > 0
          ? last
          : null;
      },
      {
        message: 'tiny-sat at 2 running with some waiting',
        observe: () =>
          last === null
            ? null
            : [last.get('ts_num_requests_running', L('tiny-sat')), last.get('ts_num_requests_waiting', L('tiny-sat'))],
      },
    );
    expect([1, 2, 3, 4]).to.include(saturated.get('ts_num_requests_waiting', L('tiny-sat'))); // 6 requests, maxNumSeqs 2
    const results = await Promise.all(runs);
    expect(results.map((r) => r.choices[0].finish_reason)).to.deep.equal(Array(6).fill('length'));
    const after = await Scrape.of(server);
    expect(after.get('ts_num_requests_running', L('tiny-sat'))).to.equal(0);
    expect(after.get('ts_num_requests_waiting', L('tiny-sat'))).to.equal(0);
    expect(after.get('ts_kv_cache_usage_ratio', L('tiny-sat'))).to.equal(0);
    expect(delta(before, after, 'ts_request_success_total', { ...L('tiny-sat'), finished_reason: 'length' })).to.equal(
      6,
    );
  });

  it('should preempt when the KV pool is too small and still count each request once', async () => {
    const before = await Scrape.of(server);
    const k = 40;
    const results = await Promise.all(
      Array.from({ length: 4 }, (_v, i) =>
        client.completions.create({
          model: 'tiny-small',
          prompt: `Preempt me, request ${i}!`,
          max_tokens: k,
          ignore_eos: true,
        } as CompletionBody),
      ),
    );
    const after = await Scrape.of(server);
    const d = (name: string, extra: Record<string, string> = {}): number =>
      delta(before, after, name, { ...L('tiny-small'), ...extra });
    const sumP = results.reduce((a, r) => a + (r.usage?.prompt_tokens ?? 0), 0);
    expect(results.map((r) => r.usage?.completion_tokens)).to.deep.equal([k, k, k, k]);
    expect(d('ts_num_preemptions_total')).to.be.above(0);
    expect(d('ts_time_to_first_token_seconds_count')).to.equal(4);
    expect(d('ts_prompt_tokens_total')).to.equal(sumP);
    expect(d('ts_request_prompt_tokens_sum')).to.equal(sumP);
    expect(d('ts_generation_tokens_total')).to.equal(4 * k);
    expect(d('ts_request_success_total', { finished_reason: 'length' })).to.equal(4);
    expect(after.get('ts_num_requests_running', L('tiny-small'))).to.equal(0);
    expect(after.get('ts_kv_cache_usage_ratio', L('tiny-small'))).to.equal(0);
  });

  it('should log an INFO stat line with a non-zero generation throughput for a busy engine (--log-stats-interval 1)', async () => {
    // The console carries the JSON records of ts_log.log (stdout is not a TTY here).
    const line =
      /\{"level":"info",[^\n]*"msg":"\[tiny-lm\] Engine 000: Avg prompt throughput: \d+\.\d tokens\/s, Avg generation throughput: [1-9]\d*\.\d tokens\/s, Running: \d+ reqs, Waiting: \d+ reqs, (Preemptions: \d+, )?KV cache usage: \d+\.\d%, Prefix cache hit rate: \d+\.\d%"\}\n/;
    await client.completions.create({
      model: 'tiny-lm',
      prompt: 'Log me',
      max_tokens: 4,
      ignore_eos: true,
    } as CompletionBody);
    // The wait is the assertion: it fails with the server output it last saw.
    await until(() => line.test(server.output()), {
      message: 'an INFO stat line for tiny-lm',
      observe: () =>
        server
          .output()
          .split('\n')
          .filter((l) => l.includes('[tiny-lm] Engine'))
          .slice(-3),
    });
  });
  it('should fail the requests of a SIGKILLed engine worker with 500 naming it, 503 "starting or being replaced" until its replacement, then serve', async () => {
    const before = await Scrape.of(server);
    // The one worker, or null while there is none (between the kill and the replacement's fork).
    const workerOf = async (): Promise<{ id: string; pid: number; status: string } | null> => {
      const r = await call('GET', `${server.management}/models/tiny-crash`);
      return (r.json as { workers: { id: string; pid: number; status: string }[] }[])[0]!.workers[0] ?? null;
    };
    const { id, pid } = (await workerOf())!;
    const died = `worker ${id} of model tiny-crash (engine 0) exited`;
    const body = (stream: boolean): object => ({
      model: 'tiny-crash',
      prompt: 'Kill me',
      max_tokens: 1000,
      ignore_eos: true,
      stream,
    });
    // Both run on the one engine; the stream's first token says the plain one is decoding too.
    const plain = post(`${server.inference}/v1/completions`, body(false));
    const res = await fetch(`${server.inference}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body(true)),
    });
    const reader = res.body!.getReader();
    await reader.read();
    process.kill(pid, 'SIGKILL');
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    expect(await plain).to.deep.include({
      status: 500,
      json: { error: { message: died, type: 'server_error', param: null, code: null } },
    });
    expect(
      rest.endsWith(
        `data: {"error":{"message":"${died}","type":"server_error","param":null,"code":null}}\n\ndata: [DONE]\n\n`,
      ),
      rest.slice(-300),
    ).to.equal(true);
    // Until the replacement has loaded, a request is told to come back, not to scale workers.
    const waiting = await post(`${server.inference}/v1/completions`, body(false));
    expect([200, 503]).to.include(waiting.status); // 200 only if the replacement was already up
    if (waiting.status === 503)
      expect((waiting.json as { error: { message: string } }).error.message).to.equal(
        'model tiny-crash has no engine ready; its worker is starting or being replaced; retry in a few seconds',
      );
    const replaced = await until(
      async () => {
        const w = await workerOf();
        return w?.status === 'READY' ? w : null;
      },
      { message: 'tiny-crash worker replaced', timeoutMs: 60_000 },
    );
    expect(replaced.pid).to.not.equal(pid);
    const again = await client.completions.create({
      model: 'tiny-crash',
      prompt: 'Back',
      max_tokens: 3,
      ignore_eos: true,
    } as CompletionBody);
    expect(again.usage?.completion_tokens).to.equal(3);
    const after = await Scrape.of(server);
    expect(after.get('ts_num_requests_running', L('tiny-crash'))).to.equal(0);
    expect(
      delta(before, after, 'ts_request_success_total', { ...L('tiny-crash'), finished_reason: 'length' }),
    ).to.equal(1);
    expect(delta(before, after, 'ts_request_success_total', { ...L('tiny-crash'), finished_reason: 'error' })).to.equal(
      2,
    );
  });
});
