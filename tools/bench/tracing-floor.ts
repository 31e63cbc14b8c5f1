/**
 * What OpenTelemetry's SDK alone costs for the light model's spans: the floor under
 * `tracing_on_vs_off_serve_light`'s cost, measured in the bench's own process.
 *
 * One "request" here is the four spans the light path makes (the SERVER span under an incoming
 * traceparent, `queue`, `batch`, `handler` under `batch`) with the same attributes, started and
 * ended through the SDK's tracer and a BatchSpanProcessor of the same bounds, whose exporter
 * drops each batch without serialising or sending it. No tsserve code, no export: whatever a
 * server does on top (the OTLP serialiser, the HTTP export, its own bookkeeping) only adds.
 * So `ceiling = off / (off + floor)`, with `off` the frontend's CPU a request with tracing off in
 * the same run, bounds from above the on/off ratio any server building its spans with the SDK can
 * reach on this machine. With `serialize`, the exporter also encodes each batch with the OTLP
 * protobuf serializer the shipped exporter uses (its own `@opentelemetry/otlp-transformer`,
 * resolved from `@opentelemetry/exporter-trace-otlp-proto`), and drops the bytes: the floor of a
 * server that serializes on its main thread, as the SDK's exporter does.
 */
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultTextMapGetter } from '@opentelemetry/api';
import { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createRequire } from 'node:module';

/** The protobuf trace serializer of the shipped exporter (its own dependency's, not another copy). */
function exporterSerializer(): { serializeRequest(spans: ReadableSpan[]): Uint8Array | undefined } {
  const req = createRequire(import.meta.resolve('@opentelemetry/exporter-trace-otlp-proto'));
  return (req('@opentelemetry/otlp-transformer') as { ProtobufTraceSerializer: ReturnType<typeof exporterSerializer> })
    .ProtobufTraceSerializer;
}

/** µs of this process's CPU for one request's four SDK spans (mean over `n` after a warm-up), serialized when `serialize`. */
export async function sdkSpansFloorUs(n: number, traceparent: string, serialize = false): Promise<number> {
  let exported = 0;
  let bytes = 0;
  const serializer = serialize ? exporterSerializer() : null;
  const exporter: SpanExporter = {
    export: (spans, done) => {
      exported += spans.length;
      if (serializer !== null) bytes += serializer.serializeRequest(spans)?.length ?? 0;
      done({ code: 0 });
    },
    shutdown: () => Promise.resolve(),
  };
  const provider = new BasicTracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 2048, maxExportBatchSize: 512 })],
  });
  const tracer = provider.getTracer('floor');
  const propagator = new W3CTraceContextPropagator();
  const headers = { traceparent };
  const one = (): void => {
    const t = Date.now();
    const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const root = tracer.startSpan(
      'POST /predictions/{model}',
      {
        kind: SpanKind.SERVER,
        startTime: t,
        attributes: {
          'http.request.method': 'POST',
          'http.route': '/predictions/{model}',
          'url.path': '/predictions/mlp',
        },
      },
      parent,
    );
    const under = trace.setSpan(ROOT_CONTEXT, root);
    tracer.startSpan('queue', { kind: SpanKind.INTERNAL, startTime: t }, under).end(t + 1);
    const batch = tracer.startSpan('batch', { kind: SpanKind.INTERNAL, startTime: t + 1 }, under);
    tracer
      .startSpan('handler', { kind: SpanKind.INTERNAL, startTime: t + 1 }, trace.setSpan(ROOT_CONTEXT, batch))
      .end(t + 2);
    batch.end(t + 3);
    root.setAttributes({ 'gen_ai.latency.time_in_queue': 0.001, 'tsserve.handler_time': 0.001 });
    root.setAttributes({ 'http.response.status_code': 200 });
    root.end(t + 3);
  };
  // Yield now and then, as a server does, so the processor's timers run.
  const run = async (count: number): Promise<number> => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < count; i++) {
      one();
      if (i % 64 === 63) await new Promise<void>((r) => setImmediate(r));
    }
    await provider.forceFlush();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / count;
  };
  await run(Math.max(1000, Math.floor(n / 5)));
  const us = await run(n);
  await provider.shutdown();
  if (exported === 0) throw new Error('the floor exported no span');
  if (serialize && bytes === 0) throw new Error('the floor serialized no span');
  return us;
}
