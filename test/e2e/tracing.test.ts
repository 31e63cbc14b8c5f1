/**
 * Tracing end to end: the real server with `--otlp-traces-endpoint`, the real OpenTelemetry SDK
 * exporting OTLP/HTTP protobuf to a receiver that decodes it with OpenTelemetry's own protobuf
 * definitions (no collector is installable here). One completion, one prediction and one spoken
 * (pipeline) chat each export the expected span tree — names, kinds, parent ids — with exact
 * token counts and the incoming traceparent's trace id; the OpenMetrics exemplar carries the
 * span's trace id; and a sampling ratio of 0 exports nothing.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { generateStore, mlpInput, removeStores, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { omniStore } from './pipeline-helpers.js';
import { attrs, startOtlpReceiver } from './otlp-receiver.js';
import type { KeyValue, OtlpReceiver } from './otlp-receiver.js';
import { until } from '../support/until.js';

interface SpanJson {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: string;
  attributes?: KeyValue[];
  status?: { code?: string };
}
interface TracesRequest {
  resourceSpans: Array<{ resource: { attributes: KeyValue[] }; scopeSpans: Array<{ spans: SpanJson[] }> }>;
}

/** Hex ids as the receiver's decoder gives bytes (base64). */
const b64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');
const hex = (b: string): string => Buffer.from(b, 'base64').toString('hex');

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const traceparent = (trace: string): string => `00-${trace}-${PARENT}-01`;

/** Every span the receiver got. */
function allSpans(r: OtlpReceiver): SpanJson[] {
  return (r.traces as TracesRequest[]).flatMap((t) =>
    t.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
  );
}

/** The spans of `trace` (hex) once its SERVER span and `n` spans in all have arrived. */
async function traceOf(r: OtlpReceiver, trace: string, n: number): Promise<SpanJson[]> {
  return until(
    () => {
      const spans = allSpans(r).filter((s) => s.traceId === b64(trace));
      return spans.length >= n ? spans : null;
    },
    { message: `${n} spans of trace ${trace}`, observe: () => allSpans(r).map((s) => s.name) },
  );
}

/** The tree as `name <- parent name` lines, sorted (the root's parent is its span id in hex). */
function tree(spans: readonly SpanJson[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  return spans
    .map((s) => {
      const p = s.parentSpanId === undefined || s.parentSpanId === '' ? undefined : s.parentSpanId;
      const parent = p === undefined ? '(root)' : (byId.get(p)?.name ?? `remote ${hex(p)}`);
      return `${s.name} [${s.kind}] <- ${parent}`;
    })
    .sort();
}

const serverSpan = (spans: readonly SpanJson[]): SpanJson => spans.find((s) => s.kind === 'SPAN_KIND_SERVER')!;

describe('tracing (real server, OpenTelemetry SDK exporter, protobuf receiver)', function () {
  this.timeout(180_000);
  let receiver: OtlpReceiver;
  let server: Tsserve;
  let dir: string;

  before(async () => {
    receiver = await startOtlpReceiver();
    dir = tempDir('tracing');
    const store = omniStore(path.join(dir, 'store'), {});
    for (const m of ['mlp', 'tiny-embed'])
      fs.cpSync(path.join(generateStore([m]), m), path.join(store, m), { recursive: true });
    server = await startTsserve({
      store,
      args: [
        '--models',
        'mlp=mlp',
        'tiny-lm=tiny-lm',
        'tiny-omni=tiny-omni',
        'tiny-embed=tiny-embed',
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--otlp-traces-endpoint',
        `${receiver.url}/v1/traces`,
      ],
      env: { OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'tsserve-trace-test' },
    });
  });

  after(async () => {
    server?.kill();
    await receiver?.close();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it("should export a completion's SERVER span under the incoming traceparent, with queue, engine, prefill and decode children and exact token counts", async () => {
    const trace = '0af7651916cd43dd8448eb211c80319c';
    const res = await fetch(`${server.inference}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(trace) },
      body: JSON.stringify({
        model: 'tiny-lm',
        prompt: 'hello world',
        max_tokens: 5,
        temperature: 0,
        ignore_eos: true,
      }),
    });
    const body = (await res.json()) as { id: string; usage: { prompt_tokens: number; completion_tokens: number } };
    expect(res.status).to.equal(200);
    const spans = await traceOf(receiver, trace, 5);
    expect(tree(spans)).to.deep.equal([
      `POST /v1/completions [SPAN_KIND_SERVER] <- remote ${PARENT}`,
      'decode [SPAN_KIND_INTERNAL] <- engine',
      'engine [SPAN_KIND_INTERNAL] <- POST /v1/completions',
      'prefill [SPAN_KIND_INTERNAL] <- engine',
      'queue [SPAN_KIND_INTERNAL] <- POST /v1/completions',
    ]);
    const a = attrs(serverSpan(spans).attributes ?? []);
    expect(body.usage.completion_tokens).to.equal(5);
    expect({
      op: a['gen_ai.operation.name'],
      model: a['gen_ai.request.model'],
      max: a['gen_ai.request.max_tokens'],
      temperature: a['gen_ai.request.temperature'],
      input: a['gen_ai.usage.input_tokens'],
      output: a['gen_ai.usage.output_tokens'],
      prompt: a['gen_ai.usage.prompt_tokens'],
      completion: a['gen_ai.usage.completion_tokens'],
      id: a['gen_ai.response.id'],
      method: a['http.request.method'],
      route: a['http.route'],
      status: a['http.response.status_code'],
    }).to.deep.equal({
      op: 'text_completion',
      model: 'tiny-lm',
      max: 5,
      temperature: 0,
      input: body.usage.prompt_tokens,
      output: 5,
      prompt: body.usage.prompt_tokens,
      completion: 5,
      id: body.id,
      method: 'POST',
      route: '/v1/completions',
      status: 200,
    });
    for (const k of [
      'gen_ai.latency.time_in_queue',
      'gen_ai.latency.time_to_first_token',
      'gen_ai.latency.time_in_model_prefill',
      'gen_ai.latency.time_in_model_decode',
      'gen_ai.latency.e2e',
    ])
      expect(typeof a[k], k).to.equal('number');
    expect(a['gen_ai.latency.e2e'] as number).to.be.above(0);
    const resource = (receiver.traces as TracesRequest[])[0]!.resourceSpans[0]!.resource;
    expect(attrs(resource.attributes)['service.name']).to.equal('tsserve-trace-test');
  });

  it("should export a prediction's SERVER span with queue, batch and handler children, its request id, and error status on a 404", async () => {
    const res = await fetch(`${server.inference}/predictions/mlp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(TRACE) },
      body: JSON.stringify(mlpInput(1)),
    });
    await res.text();
    expect(res.status).to.equal(200);
    const spans = await traceOf(receiver, TRACE, 4);
    expect(tree(spans)).to.deep.equal([
      `POST /predictions/{model}[/{version}] [SPAN_KIND_SERVER] <- remote ${PARENT}`,
      'batch [SPAN_KIND_INTERNAL] <- POST /predictions/{model}[/{version}]',
      'handler [SPAN_KIND_INTERNAL] <- batch',
      'queue [SPAN_KIND_INTERNAL] <- POST /predictions/{model}[/{version}]',
    ]);
    const a = attrs(serverSpan(spans).attributes ?? []);
    expect([a['gen_ai.request.id'], a['gen_ai.request.model'], a['http.response.status_code']]).to.deep.equal([
      res.headers.get('x-request-id'),
      'mlp',
      200,
    ]);
    expect(serverSpan(spans).status?.code ?? 'STATUS_CODE_UNSET').to.equal('STATUS_CODE_UNSET');

    const missing = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const r404 = await fetch(`${server.inference}/predictions/nope`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(missing) },
      body: '{}',
    });
    await r404.text();
    expect(r404.status).to.equal(404);
    const [only] = await traceOf(receiver, missing, 1);
    expect([only!.status?.code, attrs(only!.attributes ?? [])['http.response.status_code']]).to.deep.equal([
      'STATUS_CODE_ERROR',
      404,
    ]);
  });

  it('should export an OIP inference of 2 rows with queue, batch and handler children for each row', async () => {
    const trace = 'c0ffee00c0ffee00c0ffee00c0ffee00';
    const res = await fetch(`${server.inference}/v2/models/mlp/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(trace) },
      body: JSON.stringify({
        inputs: [{ name: 'input', shape: [2, 784], datatype: 'FP32', data: [mlpInput(1), mlpInput(2)] }],
      }),
    });
    await res.text();
    expect(res.status).to.equal(200);
    const spans = await traceOf(receiver, trace, 7);
    const root = 'POST /v2/models/{model}[/versions/{version}]/infer';
    expect(tree(spans)).to.deep.equal([
      `${root} [SPAN_KIND_SERVER] <- remote ${PARENT}`,
      `batch [SPAN_KIND_INTERNAL] <- ${root}`,
      `batch [SPAN_KIND_INTERNAL] <- ${root}`,
      'handler [SPAN_KIND_INTERNAL] <- batch',
      'handler [SPAN_KIND_INTERNAL] <- batch',
      `queue [SPAN_KIND_INTERNAL] <- ${root}`,
      `queue [SPAN_KIND_INTERNAL] <- ${root}`,
    ]);
    expect(attrs(serverSpan(spans).attributes ?? [])['gen_ai.request.id']).to.equal(res.headers.get('x-request-id'));
  });

  it("should export an embedding's SERVER span with its job's children and the exact input token count", async () => {
    const trace = 'e0bedd1e9e0bedd1e9e0bedd1e9e0bed';
    const res = await fetch(`${server.inference}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(trace) },
      body: JSON.stringify({ model: 'tiny-embed', input: 'hello tracing world' }),
    });
    const body = (await res.json()) as { id: string; usage: { prompt_tokens: number } };
    expect(res.status).to.equal(200);
    const spans = await traceOf(receiver, trace, 4);
    expect(tree(spans)).to.deep.equal([
      `POST /v1/embeddings [SPAN_KIND_SERVER] <- remote ${PARENT}`,
      'batch [SPAN_KIND_INTERNAL] <- POST /v1/embeddings',
      'handler [SPAN_KIND_INTERNAL] <- batch',
      'queue [SPAN_KIND_INTERNAL] <- POST /v1/embeddings',
    ]);
    const a = attrs(serverSpan(spans).attributes ?? []);
    expect([a['gen_ai.operation.name'], a['gen_ai.usage.input_tokens'], a['gen_ai.response.id']]).to.deep.equal([
      'embeddings',
      body.usage.prompt_tokens,
      body.id,
    ]);
  });

  it("should export a spoken chat's SERVER span with thinker and code2wav children and the pipeline's exact token counts", async () => {
    const trace = 'b7ad6b7169203331b7ad6b7169203331';
    const res = await fetch(`${server.inference}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(trace) },
      body: JSON.stringify({
        model: 'tiny-omni',
        messages: [{ role: 'user', content: 'hello' }],
        max_tokens: 6,
        temperature: 0,
        ignore_eos: true,
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format: 'wav' },
      }),
    });
    const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    expect(res.status).to.equal(200);
    const spans = await traceOf(receiver, trace, 3);
    expect(tree(spans)).to.deep.equal([
      `POST /v1/chat/completions [SPAN_KIND_SERVER] <- remote ${PARENT}`,
      'code2wav [SPAN_KIND_INTERNAL] <- POST /v1/chat/completions',
      'thinker [SPAN_KIND_INTERNAL] <- POST /v1/chat/completions',
    ]);
    const a = attrs(serverSpan(spans).attributes ?? []);
    expect(body.usage.completion_tokens).to.equal(6);
    expect([
      a['gen_ai.operation.name'],
      a['gen_ai.request.model'],
      a['gen_ai.usage.input_tokens'],
      a['gen_ai.usage.output_tokens'],
      // The pipeline's request id, as the answer's X-Request-Id gives it (the client sent none).
      a['gen_ai.request.id'],
    ]).to.deep.equal(['chat', 'tiny-omni', body.usage.prompt_tokens, 6, res.headers.get('x-request-id')]);
  });

  it("should put the span's own trace id on the OpenMetrics exemplar of a request that sent no traceparent", async () => {
    const res = await fetch(`${server.inference}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny-lm', prompt: 'exemplar', max_tokens: 2 }),
    });
    await res.json();
    const requestId = res.headers.get('x-request-id') ?? '';
    const span = await until(
      () =>
        allSpans(receiver).find(
          (s) => s.kind === 'SPAN_KIND_SERVER' && attrs(s.attributes ?? [])['gen_ai.request.id'] === requestId,
        ),
      { message: `the SERVER span of ${requestId}` },
    );
    expect(span.parentSpanId ?? '').to.equal('');
    const text = await until(
      async () => {
        const r = await fetch(`${server.metrics}/metrics`, {
          headers: { accept: 'application/openmetrics-text;version=1.0.0' },
        });
        const t = await r.text();
        return t.includes(`request_id="${requestId}"`) ? t : null;
      },
      { message: 'the exemplar of the request' },
    );
    const exemplar = ` # {request_id="${requestId}",trace_id="${hex(span.traceId)}"} `;
    expect(
      text.split('\n').filter((l) => l.startsWith('ts_e2e_request_latency_seconds_bucket{') && l.includes(exemplar))
        .length,
    ).to.equal(1);
  });
});

describe('tracing with --api-server-count 2 (each front its own provider)', function () {
  this.timeout(180_000);
  let receiver: OtlpReceiver;
  let server: Tsserve;

  before(async () => {
    receiver = await startOtlpReceiver();
    server = await startTsserve({
      store: generateStore(['mlp', 'tiny-lm']),
      args: [
        '--api-server-count',
        '2',
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--otlp-traces-endpoint',
        `${receiver.url}/v1/traces`,
      ],
      env: { OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
  });
  after(async () => {
    server?.kill();
    await receiver?.close();
  });

  it("should export a front's prediction and completion span trees, timed from the primary's outcome and timings", async () => {
    const p = await fetch(`${server.inference}/predictions/mlp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(TRACE) },
      body: JSON.stringify(mlpInput(4)),
    });
    await p.text();
    expect(p.status).to.equal(200);
    expect(tree(await traceOf(receiver, TRACE, 4))).to.deep.equal([
      `POST /predictions/{model}[/{version}] [SPAN_KIND_SERVER] <- remote ${PARENT}`,
      'batch [SPAN_KIND_INTERNAL] <- POST /predictions/{model}[/{version}]',
      'handler [SPAN_KIND_INTERNAL] <- batch',
      'queue [SPAN_KIND_INTERNAL] <- POST /predictions/{model}[/{version}]',
    ]);
    const trace = '11112222333344445555666677778888';
    const c = await fetch(`${server.inference}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(trace) },
      body: JSON.stringify({ model: 'tiny-lm', prompt: 'front', max_tokens: 3, temperature: 0, ignore_eos: true }),
    });
    const body = (await c.json()) as { usage: { prompt_tokens: number } };
    const spans = await traceOf(receiver, trace, 5);
    expect(tree(spans)).to.deep.equal([
      `POST /v1/completions [SPAN_KIND_SERVER] <- remote ${PARENT}`,
      'decode [SPAN_KIND_INTERNAL] <- engine',
      'engine [SPAN_KIND_INTERNAL] <- POST /v1/completions',
      'prefill [SPAN_KIND_INTERNAL] <- engine',
      'queue [SPAN_KIND_INTERNAL] <- POST /v1/completions',
    ]);
    const a = attrs(serverSpan(spans).attributes ?? []);
    expect([a['gen_ai.usage.input_tokens'], a['gen_ai.usage.output_tokens']]).to.deep.equal([
      body.usage.prompt_tokens,
      3,
    ]);
  });
});

describe('tracing to a collector that refuses (real server)', function () {
  this.timeout(120_000);

  it('should count the 4 spans of one prediction whose export was refused in tsserve_spans_dropped_total{reason="export_failed"}', async () => {
    const receiver = await startOtlpReceiver();
    receiver.status = 400;
    const server = await startTsserve({
      store: generateStore(['mlp']),
      args: [
        '--models',
        'mlp=mlp',
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--otlp-traces-endpoint',
        `${receiver.url}/v1/traces`,
      ],
      env: { OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    try {
      const r = await fetch(`${server.inference}/predictions/mlp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(mlpInput(5)),
      });
      await r.text();
      expect(r.status).to.equal(200);
      const line = await until(
        async () =>
          (await (await fetch(`${server.metrics}/metrics`)).text())
            .split('\n')
            .find((l) => l.startsWith('tsserve_spans_dropped_total{')),
        { message: 'the lost spans counted' },
      );
      expect(line).to.match(/^tsserve_spans_dropped_total\{reason="export_failed",Hostname="[^"]+"\} 4$/);
    } finally {
      server.kill();
      await receiver.close();
    }
  });
});

describe('tracing when the server stops (real server)', function () {
  this.timeout(120_000);

  it('should export the spans still queued when the server stops (a schedule delay of a day never fires)', async () => {
    const receiver = await startOtlpReceiver();
    const server = await startTsserve({
      store: generateStore(['mlp']),
      args: [
        '--models',
        'mlp=mlp',
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--otlp-traces-endpoint',
        `${receiver.url}/v1/traces`,
      ],
      env: { OTEL_BSP_SCHEDULE_DELAY: '86400000' },
    });
    try {
      const r = await fetch(`${server.inference}/predictions/mlp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: traceparent(TRACE) },
        body: JSON.stringify(mlpInput(6)),
      });
      await r.text();
      expect(r.status).to.equal(200);
      expect(receiver.traces.length).to.equal(0);
      expect(await server.stop('SIGTERM')).to.equal(0);
      expect(
        allSpans(receiver)
          .map((s) => s.name)
          .sort(),
      ).to.deep.equal(['POST /predictions/{model}[/{version}]', 'batch', 'handler', 'queue']);
    } finally {
      server.kill();
      await receiver.close();
    }
  });
});

describe('tracing at sampling ratio 0 (real server)', function () {
  this.timeout(120_000);

  it('should export no span at all, even after the shutdown flush', async () => {
    const receiver = await startOtlpReceiver();
    const server = await startTsserve({
      store: generateStore(['mlp']),
      args: [
        '--models',
        'mlp=mlp',
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--otlp-traces-endpoint',
        `${receiver.url}/v1/traces`,
      ],
      env: { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0', OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await fetch(`${server.inference}/predictions/mlp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', traceparent: traceparent(TRACE) },
          body: JSON.stringify(mlpInput(i)),
        });
        await r.text();
        expect(r.status).to.equal(200);
      }
      // The server exports what is queued before it exits (docs/tracing.md): after the exit, nothing more can come.
      expect(await server.stop('SIGTERM')).to.equal(0);
      expect(server.output()).to.contain('Tracing: spans exported to');
      expect(receiver.traces.length).to.equal(0);
    } finally {
      server.kill();
      await receiver.close();
    }
  });
});
