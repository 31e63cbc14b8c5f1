/**
 * The doors' switch: `tracingOn()` follows the process's tracer, `startRequestSpan` makes the
 * request's SERVER span only while it is on, and `requestSpanOf` answers undefined with tracing
 * off (no lookup), even for a request whose span was made before it went off.
 */
import { expect } from 'chai';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Tracer } from '../../../frontend/tracing/otel-tracing.js';
import { requestSpanOf, setActiveTracer, startRequestSpan, tracingOn } from '../../../frontend/tracing/request-span.js';

function exchange(): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  req.method = 'POST';
  req.url = '/predictions/m';
  return { req, res: new ServerResponse(req) };
}

describe('request spans: the tracing-on switch', () => {
  it('should make no span and find none while tracing is off, and both while it is on', async () => {
    const t = new Tracer(
      {
        endpoint: 'http://127.0.0.1:9/v1/traces',
        headers: {},
        resource: { 'service.name': 'unit' },
        sampler: 'always_on',
        ratio: 1,
        maxQueueSize: 8,
        maxExportBatchSize: 8,
        scheduledDelayMs: 86_400_000,
        exportTimeoutMs: 10_000,
      },
      { log: () => undefined, closeTimeoutMs: 100 },
    );
    const off = exchange();
    expect([
      tracingOn(),
      startRequestSpan(off.req, off.res, '/predictions/{m}', 0),
      requestSpanOf(off.req),
    ]).to.deep.equal([false, null, undefined]);
    const undo = setActiveTracer(t);
    const on = exchange();
    const span = startRequestSpan(on.req, on.res, '/predictions/{m}', 0);
    expect([tracingOn(), span !== null, requestSpanOf(on.req) === span]).to.deep.equal([true, true, true]);
    undo();
    expect([tracingOn(), requestSpanOf(on.req)]).to.deep.equal([false, undefined]);
    await t.close();
  });
});
