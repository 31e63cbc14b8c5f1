/**
 * openaiRouter's request ids, through the official `openai` client over the inference app, on a
 * fake generation model that answers each request with "hi" (a unit test of the route: the
 * engine is not what is tested). The client's X-Request-Id is the base of the answer's id and
 * echoed back, as vLLM's server does; two requests in flight with one id both run.
 */
import { expect } from 'chai';
import * as http from 'http';
import type { AddressInfo } from 'net';
import OpenAI from 'openai';
import { inferenceApp } from '../../../frontend/http/inference-app.js';
import type { GenerationTarget } from '../../../frontend/openai/generation-target.js';
import { openaiRouter } from '../../../frontend/openai/router.js';
import { FrontendSeries } from '../../../frontend/models/frontend-series.js';
import type { MetricHandle, MetricsPort } from '../../../frontend/models/metrics-port.js';
import type { GenRequestOutput } from '../../../schema/engine-ipc.js';
import { ChatTemplate } from '../../../frontend/generation/chat-template.js';
import { modelVocab } from '../../../frontend/generation/model-vocab.js';
import { BYTE_CHAT_TEMPLATE } from '../../../tools/models/demo-models.js';

type GenerationSink = Parameters<GenerationTarget['generate']>[1];

/** Metrics off: every series a no-op. */
const NO_METRICS: MetricsPort = {
  prometheusContentType: 'text/plain',
  modes: [],
  get: (): MetricHandle | null => null,
  byKey: (): MetricHandle | null => null,
  prometheusText: () => Promise.resolve(''),
  close: () => Promise.resolve(),
};

/**
 * A generation model that refuses an id already in flight (as the engine core does: "already in
 * the engine") and holds every answer until `hold` requests have started, so they overlap.
 */
class FakeModel {
  readonly config = { name: 'tiny', engine: {} };
  readonly vocabSize = 256;
  /** Byte-level, with the demo's chat template (a model without one answers chat with a 400). */
  readonly vocab = modelVocab({}, new ChatTemplate(BYTE_CHAT_TEMPLATE));
  /** The engine ids requests started under, in order. */
  readonly started: string[] = [];
  hold = 1;
  private next = 0;
  private readonly inFlight = new Set<string>();
  private readonly waiting: (() => void)[] = [];

  generate(
    req: { readonly requestId?: string; readonly prompt: string | readonly number[] },
    sink: GenerationSink,
  ): { requestId: string; abort(): void } | { status: number; message: string } {
    const requestId = req.requestId ?? `tiny-${this.next++}`;
    if (this.inFlight.has(requestId)) return { status: 400, message: `request ${requestId} is already in the engine` };
    this.inFlight.add(requestId);
    this.started.push(requestId);
    const out: GenRequestOutput = {
      requestId,
      index: 0,
      newTokenIds: [104, 105],
      text: 'hi',
      events: [],
      finishReason: 'stop',
      numGenerationTokens: 2,
      numPromptTokens: req.prompt.length,
    };
    this.waiting.push(() => {
      this.inFlight.delete(requestId);
      sink.onOutput(out);
    });
    if (this.waiting.length >= this.hold) for (const answer of this.waiting.splice(0)) setImmediate(answer);
    return { requestId, abort: () => undefined };
  }
}

describe('openaiRouter: request ids', () => {
  let model: FakeModel;
  let server: http.Server;
  let client: OpenAI;
  let base = '';

  beforeEach(async () => {
    model = new FakeModel();
    const target = model as unknown as GenerationTarget;
    const routes = openaiRouter({ lookup: (n) => (n === 'tiny' ? target : undefined), list: () => [target] });
    server = http.createServer(
      inferenceApp({
        lookup: () => undefined,
        list: () => [],
        series: new FrontendSeries(NO_METRICS),
        maxRequestSizeBytes: 1 << 20,
        extraRoutes: [routes],
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const chat = { model: 'tiny', messages: [{ role: 'user' as const, content: 'Hi' }], max_tokens: 2 };

  it("should take the client's X-Request-Id as the base of the answer's id and echo it, the engine running it under the base and a suffix (regression: the header was ignored)", async () => {
    const c = await client.chat.completions.create(chat, { headers: { 'X-Request-Id': 'trace-42' } }).withResponse();
    const t = await client.completions
      .create({ model: 'tiny', prompt: 'Hello', max_tokens: 2 }, { headers: { 'X-Request-Id': 'trace-43' } })
      .withResponse();
    expect([c.data.id, c.response.headers.get('x-request-id'), c.request_id]).to.deep.equal([
      'chatcmpl-trace-42',
      'trace-42',
      'trace-42',
    ]);
    expect([t.data.id, t.response.headers.get('x-request-id'), t.request_id]).to.deep.equal([
      'cmpl-trace-43',
      'trace-43',
      'trace-43',
    ]);
    expect(
      model.started.map((id) =>
        id.replace(/-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, '-<uuid>'),
      ),
    ).to.deep.equal(['trace-42-<uuid>', 'trace-43-<uuid>']);
  });

  it('should run two requests in flight with the same X-Request-Id, each answered with the id the client gave (the client\'s id as the engine\'s would put one id in the engine twice: "already in the engine")', async () => {
    model.hold = 2;
    const both = await Promise.all(
      [1, 2].map(() => client.chat.completions.create(chat, { headers: { 'X-Request-Id': 'same' } }).withResponse()),
    );
    expect(both.map((r) => [r.data.id, r.request_id, r.data.choices[0]!.message.content])).to.deep.equal([
      ['chatcmpl-same', 'same', 'hi'],
      ['chatcmpl-same', 'same', 'hi'],
    ]);
    expect(model.started.length).to.equal(2);
    expect(model.started[0]).to.not.equal(model.started[1]);
  });

  it("should stream chunks carrying the id from the client's X-Request-Id", async () => {
    const { data: stream, request_id: echoed } = await client.chat.completions
      .create({ ...chat, stream: true }, { headers: { 'X-Request-Id': 'stream-1' } })
      .withResponse();
    const ids: string[] = [];
    for await (const chunk of stream) ids.push(chunk.id);
    expect([echoed, ids]).to.deep.equal(['stream-1', ['chatcmpl-stream-1', 'chatcmpl-stream-1']]);
  });

  it("should name the request by the engine's id when the client sends none", async () => {
    const c = await client.chat.completions.create(chat).withResponse();
    expect([c.data.id, c.request_id, model.started]).to.deep.equal(['chatcmpl-tiny-0', 'tiny-0', ['tiny-0']]);
  });

  it('should answer 400 naming X-Request-Id for an empty, too long or non-visible-ASCII one, echoing none and starting nothing', async () => {
    const ask = async (id: string): Promise<[number, string | null, unknown]> => {
      const r = await fetch(`${base}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': id },
        body: JSON.stringify({ model: 'tiny', prompt: 'Hi' }),
      });
      return [r.status, r.headers.get('x-request-id'), await r.json()];
    };
    const refused = (why: string): [number, null, unknown] => [
      400,
      null,
      {
        error: {
          message: `X-Request-Id must be 1 to 128 visible ASCII characters (! to ~); ${why}`,
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    ];
    expect(await ask('')).to.deep.equal(refused('it is empty'));
    expect(await ask('a'.repeat(129))).to.deep.equal(refused('it has 129'));
    expect(await ask('two words')).to.deep.equal(refused('character 4 is U+0020'));
    expect(await ask('caf\u00e9')).to.deep.equal(refused('character 4 is U+00E9'));
    expect(model.started).to.deep.equal([]);
    // The longest one taken, the bound itself.
    const longest = 'a'.repeat(128);
    const r = await client.completions
      .create({ model: 'tiny', prompt: 'Hi', max_tokens: 2 }, { headers: { 'X-Request-Id': longest } })
      .withResponse();
    expect([r.data.id, r.request_id, model.started.map((id) => id.slice(0, 129))]).to.deep.equal([
      `cmpl-${longest}`,
      longest,
      [`${longest}-`],
    ]);
  });
});
