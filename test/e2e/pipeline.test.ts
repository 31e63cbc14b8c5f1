/**
 * Pipelines end to end (docs/pipelines.md): a REAL `tsserve start` serving tiny-omni (tiny-lm
 * thinker → tiny-vocoder code2wav) with real workers, the official `openai` client, WAVs decoded
 * with wavefile, and exact deltas of the pipeline, audio, transfer and stage-relabelled engine
 * families on /metrics.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type OpenAI from 'openai';
import { configArgs } from './config-args.js';
import { delta, openaiClient, Scrape } from './generation-helpers.js';
import { call, post, removeStores, scrape, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { decodeWav, omniStore, spoken } from './pipeline-helpers.js';
import { until } from '../support/until.js';

const RATE = 24000;
const FRAMES_PER_TOKEN = 960;
const CHUNK = 4;
const M = (model: string): Record<string, string> => ({ model_name: model });
const AUDIO = (model: string, replica = '0'): Record<string, string> => ({
  model_name: model,
  stage: 'code2wav',
  replica,
});
const HOP = (model: string, from = '0', to = '0'): Record<string, string> => ({
  model_name: model,
  from_stage: 'thinker',
  from_replica: from,
  to_stage: 'code2wav',
  to_replica: to,
});
const THINKER = (model: string, replica = '0'): Record<string, string> => ({
  model_name: model,
  stage: 'thinker',
  replica,
});

/** The pids of a model's workers, as the management API lists them (thinker replicas first). */
async function workerPids(server: Tsserve, model: string): Promise<number[]> {
  return (await workersOf(server, model)).map((w) => w.pid ?? -1);
}

/** The model's workers as the management API describes them (thinker replicas first). */
async function workersOf(server: Tsserve, model: string): Promise<{ id: string; pid: number | null }[]> {
  const r = await call('GET', `${server.management}/models/${model}`);
  return (r.json as { workers: { id: string; pid: number | null }[] }[])[0]!.workers;
}

describe('pipelines (real tsserve start, tiny-omni, openai client)', function () {
  this.timeout(180_000);
  let dir: string;
  let server: Tsserve;
  let client: OpenAI;

  before(async () => {
    dir = tempDir('omni');
    const store = omniStore(path.join(dir, 'store'), {
      omni2: { thinker: 2, code2wav: 1 },
      omnik: { thinker: 1, code2wav: 1 },
    });
    server = await startTsserve({
      store,
      args: [
        ...configArgs(),
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--models',
        'tiny-omni=tiny-omni',
        'omni2=omni2',
        'omnik=omnik',
      ],
    });
    client = openaiClient(server);
  });

  after(() => {
    server?.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it("should list the pipelines in /v1/models (they answer /v1/chat/completions) with the thinker's max_model_len", async () => {
    const models = await client.models.list();
    expect(
      models.data.map((m) => [m.id, (m as unknown as { max_model_len: number }).max_model_len]).sort(),
    ).to.deep.equal([
      ['omni2', 1024],
      ['omnik', 1024],
      ['tiny-omni', 1024],
    ]);
    // Listed, but chat only: /v1/completions says so instead of "does not exist".
    const completion = await client.completions.create({ model: 'tiny-omni', prompt: 'hi', max_tokens: 2 }).then(
      () => null,
      (e: unknown) => e as { status: number; message: string },
    );
    expect([completion?.status, completion?.message]).to.deep.equal([
      400,
      '400 The model `tiny-omni` answers /v1/chat/completions only.',
    ]);
    const tokenize = await post(`${server.inference}/tokenize`, { model: 'tiny-omni', prompt: 'hi' });
    expect([tokenize.status, tokenize.json]).to.deep.equal([
      400,
      {
        error: {
          message: 'The model `tiny-omni` answers /v1/chat/completions only.',
          type: 'invalid_request_error',
          param: 'model',
          code: null,
        },
      },
    ]);
  });

  it('should speak N requests as WAVs and count every family exactly', async () => {
    const N = 3;
    const K = 10; // tokens per request (ignore_eos): chunks of 4, 4, 2
    const before = await Scrape.of(server);
    const frames: number[] = [];
    const elapsed: number[] = [];
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      const r = await client.chat.completions.create(
        spoken('tiny-omni', `say ${i}`, K, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
      );
      elapsed.push((performance.now() - t0) / 1000);
      const a = r.choices[0]!.message.audio!;
      expect(r.choices[0]!.finish_reason).to.equal('length');
      expect(a.id).to.match(/^audio_tiny-omni-/);
      expect(a.transcript.length).to.be.greaterThan(0);
      expect(a.expires_at).to.equal(r.created + 3600);
      const wav = decodeWav(Buffer.from(a.data, 'base64'));
      expect([wav.sampleRate, wav.channels, wav.bitsPerSample]).to.deep.equal([RATE, 1, 16]);
      expect(wav.frames).to.equal(r.usage!.completion_tokens * FRAMES_PER_TOKEN);
      frames.push(wav.frames);
    }
    const after = await Scrape.of(server);
    const d = (name: string, labels: Record<string, string>): number => delta(before, after, name, labels);
    expect(d('ts_omni_requests_success_total', { ...M('tiny-omni'), finished_reason: 'length' })).to.equal(N);
    expect(d('ts_omni_requests_success_total', { ...M('tiny-omni'), finished_reason: 'error' })).to.equal(0);
    expect(d('ts_omni_e2e_request_latency_seconds_count', M('tiny-omni'))).to.equal(N);
    expect(d('ts_omni_audio_frames_total', AUDIO('tiny-omni'))).to.equal(frames.reduce((s, f) => s + f, 0));
    expect(d('ts_omni_audio_duration_seconds_count', AUDIO('tiny-omni'))).to.equal(N);
    // duration = frames / 24000 exactly (the series is new here: the sum is folded in this order from 0).
    expect(before.has('ts_omni_audio_duration_seconds_sum', AUDIO('tiny-omni'))).to.equal(false);
    expect(after.get('ts_omni_audio_duration_seconds_sum', AUDIO('tiny-omni'))).to.equal(
      frames.reduce((s, f) => s + f / RATE, 0),
    );
    expect(d('ts_omni_audio_rtf_count', AUDIO('tiny-omni'))).to.equal(N);
    // RTF = the code2wav stage's generation time / the audio's duration; that time lies within
    // the client's wait for the request, so each RTF is at most wait / duration.
    const rtf = d('ts_omni_audio_rtf_sum', AUDIO('tiny-omni'));
    expect(rtf).to.be.greaterThan(0);
    expect(rtf).to.be.at.most(elapsed.reduce((s, e, i) => s + e / (frames[i]! / RATE), 0));
    expect(d('ts_omni_audio_ttfp_seconds_count', AUDIO('tiny-omni'))).to.equal(N);
    // Each request's first packet came before its whole answer reached the client.
    expect(d('ts_omni_audio_ttfp_seconds_sum', AUDIO('tiny-omni'))).to.be.at.most(elapsed.reduce((s, e) => s + e, 0));
    // Non-streamed: no player simulation.
    expect(d('ts_omni_audio_underrun_seconds_count', AUDIO('tiny-omni'))).to.equal(0);
    const chunks = N * Math.ceil(K / CHUNK);
    for (const f of [
      'ts_omni_transfer_size_bytes',
      'ts_omni_transfer_tx_seconds',
      'ts_omni_transfer_rx_seconds',
      'ts_omni_transfer_in_flight_seconds',
    ]) {
      expect(d(`${f}_count`, HOP('tiny-omni')), f).to.equal(chunks);
    }
    expect(d('ts_omni_transfer_size_bytes_sum', HOP('tiny-omni'))).to.equal(N * K * 4); // int32 codec tokens
    // The thinker's engine families carry stage and replica instead of engine.
    expect(d('ts_request_success_total', { ...THINKER('tiny-omni'), finished_reason: 'length' })).to.equal(N);
    expect(after.has('ts_request_success_total', { ...M('tiny-omni'), engine: '0' })).to.equal(false);
    expect(after.get('ts_omni_num_requests_running', M('tiny-omni'))).to.equal(0);
    expect(after.get('ts_omni_num_requests_waiting', M('tiny-omni'))).to.equal(0);
  });

  it('should stream pcm16 delta.audio chunks, with TTFP before the client saw the first one and one underrun per request', async () => {
    const K = 12;
    const before = await Scrape.of(server);
    const t0 = performance.now();
    let firstAudioSec = NaN;
    const pcm: Buffer[] = [];
    let transcript = '';
    let finish: string | null = null;
    const stream = await client.chat.completions.create(
      spoken('tiny-omni', 'stream me', K, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    for await (const c of stream) {
      const ch = c.choices[0];
      const audio = (ch?.delta as { audio?: { data?: string; transcript?: string } } | undefined)?.audio;
      if (audio?.data !== undefined) {
        if (pcm.length === 0) firstAudioSec = (performance.now() - t0) / 1000;
        pcm.push(Buffer.from(audio.data, 'base64'));
      }
      if (audio?.transcript !== undefined) transcript += audio.transcript;
      if (ch?.finish_reason !== null && ch?.finish_reason !== undefined) finish = ch.finish_reason;
    }
    const after = await Scrape.of(server);
    const d = (name: string, labels: Record<string, string>): number => delta(before, after, name, labels);
    const bytes = pcm.reduce((s, b) => s + b.length, 0);
    expect(finish).to.equal('length');
    expect(transcript.length).to.be.greaterThan(0);
    expect(pcm.length).to.equal(Math.ceil(K / CHUNK));
    expect(bytes).to.equal(K * FRAMES_PER_TOKEN * 2);
    expect(d('ts_omni_audio_frames_total', AUDIO('tiny-omni'))).to.equal(bytes / 2);
    expect(d('ts_omni_audio_ttfp_seconds_count', AUDIO('tiny-omni'))).to.equal(1);
    expect(d('ts_omni_audio_ttfp_seconds_sum', AUDIO('tiny-omni'))).to.be.at.most(firstAudioSec);
    expect(d('ts_omni_audio_underrun_seconds_count', AUDIO('tiny-omni'))).to.equal(1);
    const worst = d('ts_omni_audio_underrun_seconds_sum', AUDIO('tiny-omni'));
    for (const ms of [20, 50, 100, 250]) {
      expect(
        d('ts_omni_audio_continuity_ok_total', { ...AUDIO('tiny-omni'), threshold_ms: String(ms) }),
        `${ms} ms`,
      ).to.equal(worst * 1000 < ms ? 1 : 0);
    }
  });

  it('should speak /v1/audio/speech input as WAV through the official client', async () => {
    const before = await Scrape.of(server);
    const r = await client.audio.speech.create({
      model: 'tiny-omni',
      voice: 'alloy',
      input: 'hello',
      response_format: 'wav',
    });
    const wav = decodeWav(new Uint8Array(await r.arrayBuffer()));
    expect(wav.frames).to.equal(5 * FRAMES_PER_TOKEN);
    const after = await Scrape.of(server);
    expect(
      delta(before, after, 'ts_omni_requests_success_total', { ...M('tiny-omni'), finished_reason: 'stop' }),
    ).to.equal(1);
    expect(delta(before, after, 'ts_omni_audio_frames_total', AUDIO('tiny-omni'))).to.equal(5 * FRAMES_PER_TOKEN);
    // The input is fed to code2wav directly: no thinker → code2wav hop.
    expect(delta(before, after, 'ts_omni_transfer_size_bytes_count', HOP('tiny-omni'))).to.equal(0);
  });

  it("should take a client's X-Request-Id as its spoken answers' id base and echo it, two requests with one id both served", async () => {
    const headers = { 'X-Request-Id': 'omni-same' };
    const [a, b] = await Promise.all(
      [0, 1].map(() =>
        client.chat.completions
          .create(spoken('tiny-omni', 'hi', 4, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, {
            headers,
          })
          .withResponse(),
      ),
    );
    for (const r of [a!, b!]) {
      expect(r.data.id).to.equal('chatcmpl-omni-same');
      expect(r.data.choices[0]!.message.audio!.id).to.equal('audio_omni-same');
      expect(r.response.headers.get('x-request-id')).to.equal('omni-same');
      expect(decodeWav(Buffer.from(r.data.choices[0]!.message.audio!.data, 'base64')).frames).to.equal(
        4 * FRAMES_PER_TOKEN,
      );
    }
    const stream = await client.chat.completions
      .create(spoken('tiny-omni', 'hi', 4, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming, {
        headers: { 'X-Request-Id': 'omni-stream' },
      })
      .withResponse();
    expect(stream.response.headers.get('x-request-id')).to.equal('omni-stream');
    const ids = new Set<string>();
    for await (const chunk of stream.data) ids.add(chunk.id);
    expect([...ids]).to.deep.equal(['chatcmpl-omni-stream']);
    const speech = await client.audio.speech.create(
      { model: 'tiny-omni', voice: 'alloy', input: 'hi', response_format: 'wav' },
      { headers: { 'X-Request-Id': 'speech-1' } },
    );
    expect(speech.headers.get('x-request-id')).to.equal('speech-1');
    expect(decodeWav(new Uint8Array(await speech.arrayBuffer())).frames).to.equal(2 * FRAMES_PER_TOKEN);
    const bad = await client.audio.speech
      .create({ model: 'tiny-omni', voice: 'alloy', input: 'hi' }, { headers: { 'X-Request-Id': 'two words' } })
      .then(
        () => null,
        (e: unknown) => [(e as { status: number }).status, (e as Error).message],
      );
    expect(bad).to.deep.equal([
      400,
      '400 X-Request-Id must be 1 to 128 visible ASCII characters (! to ~); character 4 is U+0020',
    ]);
  });

  it('should refuse a /v1/audio/speech request it cannot honour with a 400 naming the field, before it reaches a stage', async () => {
    const before = await Scrape.of(server);
    const refusal = (params: Record<string, unknown>): Promise<[number, string] | null> =>
      client.audio.speech
        .create({ model: 'tiny-omni', voice: 'alloy', input: 'hello', ...params } as OpenAI.Audio.SpeechCreateParams)
        .then(
          () => null,
          (e: unknown) => [(e as { status: number }).status, (e as Error).message],
        );
    expect(await refusal({ speed: 2 })).to.deep.equal([
      400,
      "400 Unsupported parameter: 'speed' is not supported by this server.",
    ]);
    expect(await refusal({ instructions: 'whisper', stream_format: 'sse' })).to.deep.equal([
      400,
      "400 Unsupported parameters: 'instructions', 'stream_format' are not supported by this server.",
    ]);
    expect(await refusal({ response_format: 'mp3' })).to.deep.equal([
      400,
      '400 response_format must be "wav" or "pcm", got "mp3"',
    ]);
    expect(await refusal({ input: '' })).to.deep.equal([400, '400 input must be a string of 1 to 4096 characters']);
    expect(await refusal({ input: 'x'.repeat(4097) })).to.deep.equal([
      400,
      '400 input must be a string of 1 to 4096 characters',
    ]);
    expect(await refusal({ voice: '' })).to.deep.equal([400, '400 voice must be a non-empty string']);
    const after = await Scrape.of(server);
    expect(
      delta(before, after, 'http_requests_total', { handler: '/v1/audio/speech', method: 'POST', status: '4xx' }),
    ).to.equal(6);
    // None reached the pipeline: no request started, none finished in any way.
    for (const reason of ['stop', 'length', 'abort', 'error']) {
      expect(
        delta(before, after, 'ts_omni_requests_success_total', { ...M('tiny-omni'), finished_reason: reason }),
      ).to.equal(0);
    }
    expect(delta(before, after, 'ts_omni_audio_frames_total', AUDIO('tiny-omni'))).to.equal(0);
  });

  it('should refuse the spoken-chat fields a pipeline cannot honour with a 400 naming them, before any stage', async () => {
    const before = await Scrape.of(server);
    const refusal = (over: Record<string, unknown>): Promise<[number, string] | null> =>
      client.chat.completions
        .create({
          ...spoken('tiny-omni', 'hi', 4, 'wav', false),
          ...over,
        } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming)
        .then(
          () => null,
          (e: unknown) => [(e as { status: number }).status, (e as Error).message],
        );
    const noLogprobs: [number, string] = [
      400,
      '400 logprobs is not available from tiny-omni: a pipeline model returns no token logprobs',
    ];
    expect(await refusal({ logprobs: true })).to.deep.equal(noLogprobs);
    expect(await refusal({ logprobs: true, top_logprobs: 3 })).to.deep.equal(noLogprobs);
    expect(await refusal({ audio: { voice: 'alloy', format: 'wav', speed: 2 } })).to.deep.equal([
      400,
      "400 Unsupported parameter: 'audio.speed' is not supported by this server.",
    ]);
    expect(await refusal({ modalities: ['text'] })).to.deep.equal([
      400,
      '400 audio is set but modalities does not include "audio": send modalities ["text", "audio"]',
    ]);
    expect(await refusal({ modalities: ['audio'] })).to.deep.equal([
      400,
      '400 modalities ["audio"] must also include "text": the answer is a transcript with its audio, send ["text", "audio"]',
    ]);
    expect(
      await refusal({
        stream: true,
        audio: { voice: 'alloy', format: 'pcm16' },
        stream_options: { continuous_usage_stats: true },
      }),
    ).to.deep.equal([
      400,
      '400 stream_options.continuous_usage_stats is not available from tiny-omni: its usage is sent once, with include_usage',
    ]);
    // Refused before the thinker: streamed, it was a 200 with the role chunk and then the thinker's error event.
    const everyId = Array.from({ length: 259 }, (_v, i) => i);
    expect(
      await refusal({
        stream: true,
        audio: { voice: 'alloy', format: 'pcm16' },
        min_tokens: 1,
        stop_token_ids: everyId,
      }),
    ).to.deep.equal([
      400,
      "400 stop_token_ids with the model's EOS and suppressed ids cover all 259 token ids, so nothing could be sampled before min_tokens (1); leave at least one id out",
    ]);
    const after = await Scrape.of(server);
    expect(
      delta(before, after, 'http_requests_total', { handler: '/v1/chat/completions', method: 'POST', status: '4xx' }),
    ).to.equal(7);
    for (const reason of ['stop', 'length', 'abort', 'error']) {
      expect(
        delta(before, after, 'ts_omni_requests_success_total', { ...M('tiny-omni'), finished_reason: reason }),
      ).to.equal(0);
    }
  });

  it("should end a spoken stream with OpenAI's usage chunk when stream_options.include_usage asks for it", async () => {
    const plain = await client.chat.completions.create(
      spoken('tiny-omni', 'count me', 6, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    );
    const stream = await client.chat.completions.create({
      ...spoken('tiny-omni', 'count me', 6, 'pcm16', true),
      stream_options: { include_usage: true },
    } as OpenAI.Chat.ChatCompletionCreateParamsStreaming);
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks[chunks.length - 1]!;
    // The same prompt again: every full block of it but the last token's came from the prefix cache (16-token blocks).
    const P = plain.usage!.prompt_tokens;
    expect([last.choices.length, last.usage]).to.deep.equal([
      0,
      {
        prompt_tokens: P,
        completion_tokens: 6,
        total_tokens: P + 6,
        prompt_tokens_details: { cached_tokens: Math.floor((P - 1) / 16) * 16 },
      },
    ]);
    // Only the last chunk carries usage, and the one before it carries the finish (vLLM's stop_reason: null for a length finish).
    expect(chunks.filter((c) => c.usage !== undefined && c.usage !== null).length).to.equal(1);
    const finish = chunks[chunks.length - 2]!.choices[0]! as { finish_reason: string | null; stop_reason?: unknown };
    expect([finish.finish_reason, finish.stop_reason]).to.deep.equal(['length', null]);
  });

  it("should not speak the stop token a thinker stops on: the audio is the transcript's tokens", async () => {
    const free = await client.chat.completions.create(
      spoken('tiny-omni', 'stop here', 6, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    );
    const ids = [...Buffer.from(free.choices[0]!.message.audio!.transcript, 'utf8')];
    const k = ids.findIndex((t, i) => i > 0 && !ids.slice(0, i).includes(t)); // the first id not seen before it
    expect(k).to.be.greaterThan(0);
    const before = await Scrape.of(server);
    const r = await client.chat.completions.create({
      ...spoken('tiny-omni', 'stop here', 6, 'wav', false),
      stop_token_ids: [ids[k]],
    } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
    const a = r.choices[0]!.message.audio!;
    const wav = decodeWav(Buffer.from(a.data, 'base64'));
    // k tokens before the stop token: spoken and in the transcript; the stop token counted in usage only.
    // stop_reason names the stop token id, as a generation model's answer does.
    const stopReason = (r.choices[0]! as { stop_reason?: unknown }).stop_reason;
    expect([
      r.choices[0]!.finish_reason,
      stopReason,
      a.transcript,
      r.usage!.completion_tokens,
      wav.frames,
    ]).to.deep.equal(['stop', ids[k], Buffer.from(ids.slice(0, k)).toString('utf8'), k + 1, k * FRAMES_PER_TOKEN]);
    const after = await Scrape.of(server);
    expect(delta(before, after, 'ts_omni_audio_frames_total', AUDIO('tiny-omni'))).to.equal(k * FRAMES_PER_TOKEN);
  });

  it('should spread requests over 2 thinker replicas, each with its own series, and deliver every throttled count', async () => {
    const N = 6;
    const before = await Scrape.of(server);
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        client.chat.completions.create(
          spoken(
            'omni2',
            `replica ${i} ${'x'.repeat(i)}`,
            6,
            'wav',
            false,
          ) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
        ),
      ),
    );
    const prompt = answers.reduce((s, a) => s + a.usage!.prompt_tokens, 0);
    const after = await Scrape.of(server);
    const d = (name: string, labels: Record<string, string>): number => delta(before, after, name, labels);
    const per = [
      d('ts_request_success_total', { ...THINKER('omni2', '0'), finished_reason: 'length' }),
      d('ts_request_success_total', { ...THINKER('omni2', '1'), finished_reason: 'length' }),
    ];
    expect(per[0]! + per[1]!).to.equal(N);
    expect(per[0]).to.be.greaterThan(0);
    expect(per[1]).to.be.greaterThan(0);
    expect(d('ts_omni_transfer_size_bytes_count', HOP('omni2', '0'))).to.equal(per[0]! * 2);
    expect(d('ts_omni_transfer_size_bytes_count', HOP('omni2', '1'))).to.equal(per[1]! * 2);
    // Scheduler stats come at most once a second per replica, deltas kept: nothing is lost.
    const queries =
      d('ts_prefix_cache_queries_total', THINKER('omni2', '0')) +
      d('ts_prefix_cache_queries_total', THINKER('omni2', '1'));
    expect(queries).to.equal(prompt);
    expect(
      d('ts_prompt_tokens_total', THINKER('omni2', '0')) + d('ts_prompt_tokens_total', THINKER('omni2', '1')),
    ).to.equal(prompt);
  });

  it('should count a client abort mid-stream once as abort and cancel every stage', async () => {
    const before = await Scrape.of(server);
    const stream = await client.chat.completions.create(
      spoken('tiny-omni', 'abort me', 400, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    for await (const c of stream) {
      if ((c.choices[0]?.delta as { audio?: { data?: string } } | undefined)?.audio?.data !== undefined) break; // leaving the loop aborts the request
    }
    const labels = { ...M('tiny-omni'), finished_reason: 'abort' };
    await until(
      async () =>
        delta(before, await Scrape.of(server), 'ts_request_success_total', {
          ...THINKER('tiny-omni'),
          finished_reason: 'abort',
        }) === 1,
      { message: 'the thinker finished the request with abort' },
    );
    const after = await Scrape.of(server);
    expect(delta(before, after, 'ts_omni_requests_success_total', labels)).to.equal(1);
    expect(
      delta(before, after, 'ts_omni_requests_success_total', { ...M('tiny-omni'), finished_reason: 'length' }),
    ).to.equal(0);
    expect(delta(before, after, 'ts_omni_audio_frames_total', AUDIO('tiny-omni'))).to.equal(0);
    expect(after.get('ts_omni_num_requests_running', M('tiny-omni'))).to.equal(0);
    expect(after.get('ts_num_requests_running', THINKER('tiny-omni'))).to.equal(0);
  });

  it("should fail a SIGKILLed thinker replica's request with error and keep serving", async () => {
    const before = await Scrape.of(server);
    const [thinker] = await workersOf(server, 'omnik');
    const stream = await client.chat.completions.create(
      spoken('omnik', 'kill me', 400, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    let failed = '';
    let chunks = 0;
    try {
      for await (const c of stream) {
        // Killed once, at the first audio chunk: chunks already on their way still arrive, and a
        // second kill of the gone pid threw ESRCH into the loop (seen on a loaded machine).
        if (
          (c.choices[0]?.delta as { audio?: { data?: string } } | undefined)?.audio?.data !== undefined &&
          chunks++ === 0 &&
          thinker?.pid != null
        ) {
          process.kill(thinker.pid, 'SIGKILL');
        }
      }
    } catch (e) {
      failed = (e as Error).message; // the error event of the stream
    }
    expect(failed).to.equal(`thinker: worker ${thinker!.id} of model omnik (engine 0) exited`);
    const mid = await Scrape.of(server);
    expect(delta(before, mid, 'ts_omni_requests_success_total', { ...M('omnik'), finished_reason: 'error' })).to.equal(
      1,
    );
    expect(delta(before, mid, 'ts_request_success_total', { ...THINKER('omnik'), finished_reason: 'error' })).to.equal(
      1,
    );
    // The other pipelines never noticed; omnik serves again once its replica is back.
    const other = await client.chat.completions.create(
      spoken('tiny-omni', 'still here', 4, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    );
    expect(other.choices[0]!.finish_reason).to.equal('length');
    const again = await until(
      async () => {
        try {
          return await client.chat.completions.create(
            spoken('omnik', 'back', 4, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
          );
        } catch {
          return null;
        }
      },
      { message: 'omnik answering after its thinker restarted', timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(again.choices[0]!.finish_reason).to.equal('length');
    expect(decodeWav(Buffer.from(again.choices[0]!.message.audio!.data, 'base64')).frames).to.equal(
      4 * FRAMES_PER_TOKEN,
    );
  });

  it("should fail a SIGKILLed code2wav replica's request with error, stop its thinker work, and keep serving", async () => {
    const before = await Scrape.of(server);
    const vocoder = (await workersOf(server, 'omnik'))[1]; // thinker replica first, then code2wav
    const stream = await client.chat.completions.create(
      spoken('omnik', 'kill the vocoder', 400, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    let failed = '';
    let chunks = 0;
    try {
      for await (const c of stream) {
        if (
          (c.choices[0]?.delta as { audio?: { data?: string } } | undefined)?.audio?.data !== undefined &&
          chunks++ === 0 &&
          vocoder?.pid != null
        ) {
          process.kill(vocoder.pid, 'SIGKILL');
        }
      }
    } catch (e) {
      failed = (e as Error).message; // the error event of the stream
    }
    // The pipeline settles at once; its thinker's finish arrives with the engine's next step.
    const finishedIn = (m: Scrape): number[] =>
      ['stop', 'length', 'abort', 'error'].map((r) =>
        delta(before, m, 'ts_request_success_total', { ...THINKER('omnik'), finished_reason: r }),
      );
    let seen: Scrape | null = null;
    const mid = await until(
      async () => {
        seen = await Scrape.of(server);
        return seen.get('ts_omni_num_requests_running', M('omnik')) === 0 &&
          finishedIn(seen).reduce((a, b) => a + b, 0) > 0
          ? seen
          : null;
      },
      {
        message: 'omnik with nothing running and its thinker request finished',
        observe: () => (seen === null ? null : finishedIn(seen)),
      },
    );
    const thinkerFinished = finishedIn(mid);
    // The exit is heard, or the next chunk finds the replica's channel closed first.
    const exited = `code2wav: worker ${vocoder!.id} of model omnik (replica 0) exited`;
    const expectedFailure = [exited, 'code2wav replica 0 is not reachable: its worker is gone'].includes(failed)
      ? failed
      : exited;
    expect({
      failed,
      pipelineError: delta(before, mid, 'ts_omni_requests_success_total', { ...M('omnik'), finished_reason: 'error' }),
      pipelineOther: ['stop', 'length', 'abort'].map((r) =>
        delta(before, mid, 'ts_omni_requests_success_total', { ...M('omnik'), finished_reason: r }),
      ),
      // The thinker stopped generating for it (400 tokens were asked): it finished once, not with length.
      thinkerFinishedOnce: thinkerFinished.reduce((a, b) => a + b, 0),
      thinkerLength: thinkerFinished[1],
    }).to.deep.equal({
      failed: expectedFailure,
      pipelineError: 1,
      pipelineOther: [0, 0, 0],
      thinkerFinishedOnce: 1,
      thinkerLength: 0,
    });
    const again = await until(
      async () => {
        try {
          return await client.chat.completions.create(
            spoken('omnik', 'vocoder back', 4, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
          );
        } catch {
          return null;
        }
      },
      { message: 'omnik answering after its code2wav restarted', timeoutMs: 60_000, intervalMs: 250 },
    );
    expect([
      again.choices[0]!.finish_reason,
      decodeWav(Buffer.from(again.choices[0]!.message.audio!.data, 'base64')).frames,
    ]).to.deep.equal(['length', 4 * FRAMES_PER_TOKEN]);
    expect((await workerPids(server, 'omnik'))[1]).to.not.equal(vocoder!.pid);
  });

  it('should render every pipeline family in the exposition with its declared labels', async () => {
    const text = await scrape(server);
    for (const f of [
      'ts_omni_num_requests_running',
      'ts_omni_num_requests_waiting',
      'ts_omni_requests_success_total',
      'ts_omni_e2e_request_latency_seconds',
      'ts_omni_audio_ttfp_seconds',
      'ts_omni_audio_duration_seconds',
      'ts_omni_audio_rtf',
      'ts_omni_audio_frames_total',
      'ts_omni_audio_underrun_seconds',
      'ts_omni_audio_continuity_ok_total',
      'ts_omni_transfer_size_bytes',
      'ts_omni_transfer_tx_seconds',
      'ts_omni_transfer_rx_seconds',
      'ts_omni_transfer_in_flight_seconds',
    ]) {
      expect(text, f).to.include(`# TYPE ${f} `);
    }
    expect(text).to.include(
      'ts_omni_transfer_size_bytes_bucket{le="1024",model_name="tiny-omni",from_stage="thinker",from_replica="0",to_stage="code2wav",to_replica="0"}',
    );
  });

  // Last: it unregisters omnik.
  it('should fail a request in flight when its pipeline is unregistered with 503 "was stopped", not as a crashed worker', async () => {
    const before = await Scrape.of(server);
    const stream = await client.chat.completions.create(
      spoken('omnik', 'unregister me', 400, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    let failed = '';
    let deleted: Promise<{ status: number }> | null = null;
    try {
      for await (const c of stream) {
        if (
          (c.choices[0]?.delta as { audio?: { data?: string } } | undefined)?.audio?.data !== undefined &&
          deleted === null
        ) {
          deleted = call('DELETE', `${server.management}/models/omnik`);
        }
      }
    } catch (e) {
      failed = (e as Error).message; // the error event of the stream
    }
    expect((await deleted!).status).to.equal(200);
    // Both stages stop; whichever tells the request first names itself.
    expect(['thinker: model omnik was stopped', 'code2wav: model omnik was stopped']).to.include(failed);
    const after = await Scrape.of(server);
    expect(
      delta(before, after, 'ts_omni_requests_success_total', { ...M('omnik'), finished_reason: 'error' }),
    ).to.equal(1);
  });
});
