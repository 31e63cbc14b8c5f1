/**
 * Pipelines through front processes (`--api-server-count 2`): spoken chat, its pcm16 stream and
 * `/v1/audio/speech` are read by the fronts and relayed to the primary's orchestrator, their
 * text and audio streamed back. The official `openai` client, WAVs decoded with wavefile, exact
 * deltas of the pipeline families (recorded on the primary) and of the HTTP families (recorded
 * on the fronts and shipped).
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { delta, Scrape } from './generation-helpers.js';
import { decodeWav, servedOmni, spoken } from './pipeline-helpers.js';
import { until } from '../support/until.js';

const FRAMES_PER_TOKEN = 960;
const M = { model_name: 'tiny-omni' };
const AUDIO = { model_name: 'tiny-omni', stage: 'code2wav', replica: '0' };
const THINKER = { model_name: 'tiny-omni', stage: 'thinker', replica: '0' };

describe('pipelines through front processes (--api-server-count 2, tiny-omni, openai client)', function () {
  this.timeout(180_000);
  const omni = servedOmni('omni-fronts', [
    '--api-server-count',
    '2',
    '--metrics-mode',
    'prometheus',
    '--disable-system-metrics',
    '--models',
    'tiny-omni=tiny-omni',
  ]);

  it('should list, speak (WAV chats, a pcm16 stream, /v1/audio/speech) and count every frame and answer exactly once', async () => {
    const models = await omni.client.models.list();
    expect(models.data.map((m) => [m.id, (m as unknown as { max_model_len: number }).max_model_len])).to.deep.equal([
      ['tiny-omni', 1024],
    ]);
    const before = await Scrape.of(omni.server);
    const K = 6;
    // Four at once: separate connections, spread over both fronts.
    const chats = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        omni.client.chat.completions.create(
          spoken('tiny-omni', `say ${i}`, K, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
        ),
      ),
    );
    const wavs = chats.map((r) => decodeWav(Buffer.from(r.choices[0]!.message.audio!.data, 'base64')));
    const pcm: Buffer[] = [];
    let finish: string | null = null;
    const stream = await omni.client.chat.completions.create(
      spoken('tiny-omni', 'stream me', 10, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    for await (const c of stream) {
      const data = (c.choices[0]?.delta as { audio?: { data?: string } } | undefined)?.audio?.data;
      if (data !== undefined) pcm.push(Buffer.from(data, 'base64'));
      if (c.choices[0]?.finish_reason != null) finish = c.choices[0].finish_reason;
    }
    const speech = decodeWav(
      new Uint8Array(
        await (
          await omni.client.audio.speech.create({
            model: 'tiny-omni',
            voice: 'alloy',
            input: 'hello',
            response_format: 'wav',
          })
        ).arrayBuffer(),
      ),
    );
    expect({
      chats: chats.map((r, i) => [
        r.choices[0]!.finish_reason,
        r.usage!.completion_tokens,
        wavs[i]!.frames,
        wavs[i]!.sampleRate,
        r.choices[0]!.message.audio!.id.startsWith('audio_tiny-omni-'),
      ]),
      stream: [finish, pcm.length, pcm.reduce((s, b) => s + b.length, 0)],
      speech: speech.frames,
    }).to.deep.equal({
      chats: Array.from({ length: 4 }, () => ['length', K, K * FRAMES_PER_TOKEN, 24000, true]),
      stream: ['length', 3, 10 * FRAMES_PER_TOKEN * 2], // chunks of 4, 4, 2 tokens
      speech: 5 * FRAMES_PER_TOKEN,
    });
    // The fronts ship their HTTP series every 100 ms: wait for the last answer's.
    const chatRoute = { handler: '/v1/chat/completions', method: 'POST', status: '2xx' };
    await until(async () => delta(before, await Scrape.of(omni.server), 'http_requests_total', chatRoute) === 5, {
      message: 'the fronts shipped the chat answers',
    });
    await until(
      async () =>
        delta(before, await Scrape.of(omni.server), 'http_requests_total', {
          handler: '/v1/audio/speech',
          method: 'POST',
          status: '2xx',
        }) === 1,
      { message: 'the fronts shipped the speech answer' },
    );
    const after = await Scrape.of(omni.server);
    const d = (name: string, labels: Record<string, string>): number => delta(before, after, name, labels);
    expect({
      length: d('ts_omni_requests_success_total', { ...M, finished_reason: 'length' }),
      stop: d('ts_omni_requests_success_total', { ...M, finished_reason: 'stop' }),
      error: d('ts_omni_requests_success_total', { ...M, finished_reason: 'error' }),
      frames: d('ts_omni_audio_frames_total', AUDIO),
      underruns: d('ts_omni_audio_underrun_seconds_count', AUDIO),
      hops: d('ts_omni_transfer_size_bytes_count', {
        model_name: 'tiny-omni',
        from_stage: 'thinker',
        from_replica: '0',
        to_stage: 'code2wav',
        to_replica: '0',
      }),
      thinker: d('ts_request_success_total', { ...THINKER, finished_reason: 'length' }),
      chats: d('http_requests_total', chatRoute),
    }).to.deep.equal({
      length: 5,
      stop: 1,
      error: 0,
      frames: (4 * K + 10 + 5) * FRAMES_PER_TOKEN,
      underruns: 1, // the streamed request alone runs the player simulation
      hops: 4 * 2 + 3, // chunks of 4 tokens: 2 per chat, 3 for the stream; speech skips the thinker
      thinker: 5,
      chats: 5,
    });
  });

  it('should count a client abort mid-stream through a front once as abort and stop the thinker', async () => {
    const before = await Scrape.of(omni.server);
    const stream = await omni.client.chat.completions.create(
      spoken('tiny-omni', 'abort me', 400, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    for await (const c of stream) {
      if ((c.choices[0]?.delta as { audio?: { data?: string } } | undefined)?.audio?.data !== undefined) break; // leaving the loop aborts the request
    }
    await until(
      async () =>
        delta(before, await Scrape.of(omni.server), 'ts_request_success_total', {
          ...THINKER,
          finished_reason: 'abort',
        }) === 1,
      { message: 'the thinker finished the request with abort' },
    );
    const after = await Scrape.of(omni.server);
    expect({
      abort: delta(before, after, 'ts_omni_requests_success_total', { ...M, finished_reason: 'abort' }),
      length: delta(before, after, 'ts_omni_requests_success_total', { ...M, finished_reason: 'length' }),
      running: after.get('ts_omni_num_requests_running', M),
      thinkerRunning: after.get('ts_num_requests_running', THINKER),
    }).to.deep.equal({ abort: 1, length: 0, running: 0, thinkerRunning: 0 });
  });
});

describe('a full pipeline through front processes (--api-server-count 2, --job-queue-size 1)', function () {
  this.timeout(180_000);
  const omni = servedOmni('omni-fronts-full', [
    '--api-server-count',
    '2',
    '--job-queue-size',
    '1',
    '--metrics-mode',
    'prometheus',
    '--disable-system-metrics',
    '--models',
    'tiny-omni=tiny-omni',
  ]);

  it('should refuse a spoken stream with the 503 status itself while another holds the stage, not a 200 carrying an error event', async () => {
    const held = await omni.client.chat.completions.create(
      spoken('tiny-omni', 'hold', 900, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    await held[Symbol.asyncIterator]().next(); // the role chunk: the primary admitted it
    const refused = await omni.client.chat.completions
      .create(spoken('tiny-omni', 'next', 4, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming)
      .then(
        () => 'answered',
        (e: unknown) => (e instanceof OpenAI.APIError ? [e.status, e.message] : e),
      );
    held.controller.abort();
    expect(refused).to.deep.equal([
      503,
      '503 model tiny-omni: stage code2wav has 1 request in flight on its least loaded replica, the most one holds (--job-queue-size 1); retry later',
    ]);
  });
});
