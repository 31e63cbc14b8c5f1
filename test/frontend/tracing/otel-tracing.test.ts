import { expect } from 'chai';
import { Tracer } from '../../../frontend/tracing/otel-tracing.js';
import type { SpanDropReason } from '../../../frontend/tracing/otel-tracing.js';
import type { TracingSettings } from '../../../frontend/tracing/trace-settings.js';
import { startOtlpReceiver } from '../../e2e/otlp-receiver.js';
import type { OtlpReceiver } from '../../e2e/otlp-receiver.js';
import { until } from '../../support/until.js';

const settings = (endpoint: string, over: Partial<TracingSettings> = {}): TracingSettings => ({
  endpoint,
  headers: {},
  resource: { 'service.name': 'unit' },
  sampler: 'always_on',
  ratio: 1,
  maxQueueSize: 1,
  maxExportBatchSize: 1,
  scheduledDelayMs: 86_400_000,
  exportTimeoutMs: 10_000,
  ...over,
});

interface Sent {
  resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }>;
}
const names = (r: OtlpReceiver): string[] =>
  (r.traces as Sent[]).flatMap((t) =>
    t.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans.map((x) => x.name))),
  );

describe('Tracer (real SDK, OTLP/HTTP to a loopback receiver)', () => {
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(() => receiver.close());

  it("should count a span that finds the processor's queue of 1 full as queue_full, and export the others on close", async () => {
    const lost: [SpanDropReason, number][] = [];
    const t = new Tracer(settings(`${receiver.url}/v1/traces`), {
      log: () => undefined,
      onDropped: (reason, n) => lost.push([reason, n]),
    });
    const now = Date.now();
    // The first is taken for export at once (a batch of 1), the second waits in the queue, the third finds it full.
    for (const name of ['a', 'b', 'c']) t.server(name, {}, now, {}).end(now + 1);
    expect(lost).to.deep.equal([['queue_full', 1]]);
    await t.close();
    expect(names(receiver).sort()).to.deep.equal(['a', 'b']);
  });

  it('should count the spans of an export the collector refuses (400, not retried) as export_failed and warn of the loss once', async () => {
    receiver.status = 400;
    const lost: [SpanDropReason, number][] = [];
    const warned: string[] = [];
    const t = new Tracer(settings(`${receiver.url}/v1/traces`, { maxQueueSize: 8, maxExportBatchSize: 8 }), {
      log: (_level, msg) => warned.push(msg),
      onDropped: (reason, n) => lost.push([reason, n]),
    });
    const now = Date.now();
    for (const name of ['a', 'b']) t.server(name, {}, now, {}).end(now + 1);
    await t.close();
    await until(() => lost.length > 0, { message: 'the failed export counted' });
    expect(lost).to.deep.equal([['export_failed', 2]]);
    const losses = warned.filter((w) => w.includes(' lost '));
    expect(losses.length).to.equal(1);
    expect(losses[0]).to.match(/^tracing: 2 span\(s\) lost \(export to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed: /);
  });

  it('should stop retrying a collector that answers 503 within the close bound: one attempt, the spans counted, no bound warning', async () => {
    receiver.status = 503;
    const lost: [SpanDropReason, number][] = [];
    const warned: string[] = [];
    // The export timeout (10 s) is past the bound: the flush's exports must not retry on it.
    const t = new Tracer(settings(`${receiver.url}/v1/traces`, { maxQueueSize: 8, maxExportBatchSize: 8 }), {
      log: (_level, msg) => warned.push(msg),
      onDropped: (reason, n) => lost.push([reason, n]),
      closeTimeoutMs: 600,
    });
    const now = Date.now();
    for (const name of ['a', 'b']) t.server(name, {}, now, {}).end(now + 1);
    await t.close();
    // Close returned because the export gave up (480 ms of the 600 leave no room for the first
    // backoff, at least 800 ms), not because its bound fired: the loss is already counted, the
    // collector saw one attempt, and no retry is pending.
    expect(lost).to.deep.equal([['export_failed', 2]]);
    expect(receiver.refused).to.equal(1);
    expect(warned.filter((w) => w.includes('not done within its bound'))).to.deep.equal([]);
  });

  it("should continue the incoming traceparent's trace and not record what a parent-based sampler sees unsampled", () => {
    const t = new Tracer(settings('http://127.0.0.1:9/v1/traces', { sampler: 'parentbased_always_on' }), {
      log: () => undefined,
    });
    const sampled = t.server('s', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }, 0, {});
    const unsampled = t.server('u', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00' }, 0, {});
    expect([sampled.traceId, sampled.recording]).to.deep.equal(['4bf92f3577b34da6a3ce929d0e0e4736', true]);
    expect([unsampled.traceId, unsampled.recording]).to.deep.equal(['0af7651916cd43dd8448eb211c80319c', false]);
    void t.close();
  });
});
