/**
 * A generation model's queue is bounded: with `--job-queue-size 2` an engine holds two
 * requests (running or waiting) and answers a third 503 in OpenAI's error shape, counted in the
 * HTTP metrics; once one finishes the next is taken. Real server, tiny-lm, the official
 * `openai` client.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { delta, openaiClient, Scrape } from './generation-helpers.js';
import { call, generateStore, removeStores, startTsserve } from './harness.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';

describe("a generation model's bounded queue (real tsserve start, --job-queue-size 2)", function () {
  this.timeout(120_000);
  let server: Tsserve;
  let client: OpenAI;

  before(async () => {
    server = await startTsserve({
      store: generateStore(['tiny-lm']),
      args: ['--metrics-mode', 'prometheus', '--disable-system-metrics', '--job-queue-size', '2'],
    });
    client = openaiClient(server);
  });

  after(async () => {
    await server?.stop('SIGTERM');
    removeStores();
  });

  /** The model's queue as the management API reports it. */
  const queue = async (): Promise<{ pendingRequests: number; remainingCapacity: number }> => {
    const r = await call('GET', `${server.management}/models/tiny-lm`);
    return (r.json as { jobQueueStatus: { pendingRequests: number; remainingCapacity: number } }[])[0]!.jobQueueStatus;
  };
  /** Requests in flight on the model's engines. */
  const pending = async (): Promise<number> => (await queue()).pendingRequests;

  it('should refuse a request of two prompts as a whole when only one fits, before either reaches the engine', async () => {
    const before = await Scrape.of(server);
    const s = await client.completions.create({
      model: 'tiny-lm',
      prompt: 'hold',
      max_tokens: 900,
      ...({ ignore_eos: true } as object),
      stream: true,
    } as OpenAI.Completions.CompletionCreateParamsStreaming);
    const it = s[Symbol.asyncIterator]();
    await it.next(); // in the engine: one of the two places taken
    const refused = await client.completions.create({ model: 'tiny-lm', prompt: ['one', 'two'], max_tokens: 2 }).then(
      () => null,
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    );
    expect([refused?.status, refused?.message]).to.deep.equal([
      503,
      '503 model tiny-lm can take 1 more request before its engines are full (--job-queue-size 2 each), and this request has 2 prompts; retry later',
    ]);
    const mid = await Scrape.of(server);
    // Neither prompt was admitted: nothing finished (the abort of an admitted prompt used to count), one refusal.
    expect(
      ['stop', 'length', 'abort', 'error'].map((r) =>
        delta(before, mid, 'ts_request_success_total', { model_name: 'tiny-lm', finished_reason: r }),
      ),
    ).to.deep.equal([0, 0, 0, 0]);
    expect(
      delta(before, mid, 'tsserve_requests_refused_total', { model_name: 'tiny-lm', reason: 'queue_full' }),
    ).to.equal(1);
    s.controller.abort();
    await until(async () => (await pending()) === 0, { message: 'the held request left the engine' });
  });

  it('should answer a third concurrent request 503 while two are in flight, and take the next once one ended', async () => {
    const before = await Scrape.of(server);
    const long = {
      model: 'tiny-lm',
      prompt: 'hold',
      max_tokens: 900,
      ...({ ignore_eos: true } as object),
      stream: true,
    } as OpenAI.Completions.CompletionCreateParamsStreaming;
    const held = await Promise.all(
      [0, 1].map(async () => {
        const s = await client.completions.create(long);
        const it = s[Symbol.asyncIterator]();
        await it.next(); // the first chunk: the request is in the engine
        return { s, it };
      }),
    );
    // Full: the management API says so (one engine, --job-queue-size 2).
    expect(await queue()).to.deep.equal({ pendingRequests: 2, remainingCapacity: 0 });
    const refused = await client.completions.create({ model: 'tiny-lm', prompt: 'third', max_tokens: 2 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).to.be.instanceOf(OpenAI.APIError);
    const e = refused as InstanceType<typeof OpenAI.APIError>;
    expect([e.status, e.message]).to.deep.equal([
      503,
      '503 model tiny-lm has 2 requests in flight on its least loaded engine, the most one holds (--job-queue-size 2); retry later',
    ]);
    held[0]!.s.controller.abort();
    // The aborted request leaves its engine with the engine's next step: then one slot is free.
    await until(async () => (await pending()) === 1, { message: 'the aborted request left the engine' });
    expect(await queue()).to.deep.equal({ pendingRequests: 1, remainingCapacity: 1 });
    const answered = await client.completions.create({ model: 'tiny-lm', prompt: 'next', max_tokens: 2 });
    held[1]!.s.controller.abort();
    await until(async () => (await pending()) === 0, { message: 'the second held request left the engine' });
    const after = await Scrape.of(server);
    expect({
      next: answered.choices[0]!.finish_reason,
      refused: delta(before, after, 'http_requests_total', {
        handler: '/v1/completions',
        method: 'POST',
        status: '5xx',
      }),
      length: delta(before, after, 'ts_request_success_total', { model_name: 'tiny-lm', finished_reason: 'length' }),
      abort: delta(before, after, 'ts_request_success_total', { model_name: 'tiny-lm', finished_reason: 'abort' }),
      counted: delta(before, after, 'tsserve_requests_refused_total', { model_name: 'tiny-lm', reason: 'queue_full' }),
    }).to.deep.equal({ next: 'length', refused: 1, length: 1, abort: 2, counted: 1 });
  });
});

describe("a generation model's bounded queue through front processes (--api-server-count 2, --job-queue-size 1)", function () {
  this.timeout(120_000);
  let server: Tsserve;
  let client: OpenAI;

  before(async () => {
    server = await startTsserve({
      store: generateStore(['tiny-lm']),
      args: [
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--api-server-count',
        '2',
        '--job-queue-size',
        '1',
      ],
    });
    client = openaiClient(server);
  });

  after(async () => {
    await server?.stop('SIGTERM');
    removeStores();
  });

  it('should refuse a streamed request with the 503 status itself, not a 200 carrying an error event', async () => {
    const held = await client.completions.create({
      model: 'tiny-lm',
      prompt: 'hold',
      max_tokens: 900,
      ...({ ignore_eos: true } as object),
      stream: true,
    } as OpenAI.Completions.CompletionCreateParamsStreaming);
    await held[Symbol.asyncIterator]().next(); // its first chunk: the request is in the engine
    const refusal = (e: unknown): unknown => (e instanceof OpenAI.APIError ? [e.status, e.message] : e);
    const streamed = await client.completions
      .create({ model: 'tiny-lm', prompt: 'next', max_tokens: 2, stream: true })
      .then(() => 'answered', refusal);
    const plain = await client.completions
      .create({ model: 'tiny-lm', prompt: 'next', max_tokens: 2 })
      .then(() => 'answered', refusal);
    held.controller.abort();
    const message =
      '503 model tiny-lm has 1 request in flight on its least loaded engine, the most one holds (--job-queue-size 1); retry later';
    expect([streamed, plain]).to.deep.equal([
      [503, message],
      [503, message],
    ]);
  });
});
