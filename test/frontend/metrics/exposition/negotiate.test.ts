import { expect } from 'chai';
import { contentType, negotiate } from '../../../../frontend/metrics/exposition/negotiate.js';
import { TraceIds } from '../../../../frontend/metrics/exposition/trace-ids.js';
import { incomingTraceId } from '../../../../frontend/tracing/otel-tracing.js';

/** The trace id OpenTelemetry's W3C propagator reads from a `traceparent` header value. */
const parseTraceparent = (h: string | string[] | undefined): string | undefined =>
  incomingTraceId(h === undefined ? {} : { traceparent: h });

describe('negotiate', () => {
  it("should answer Prometheus's scrape Accept header with OpenMetrics", () => {
    const accept =
      'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
    expect(negotiate(accept)).to.equal('openmetrics');
    expect(negotiate('application/openmetrics-text; version=1.0.0')).to.equal('openmetrics');
    expect(contentType('openmetrics')).to.equal('application/openmetrics-text; version=1.0.0; charset=utf-8');
  });

  it('should answer the text format 0.0.4 to anything else', () => {
    for (const accept of [
      undefined,
      '',
      '*/*',
      'text/plain',
      'application/json',
      'application/openmetrics-text;version=0.0.1',
      'application/openmetrics-text;version=1.0.0;q=0',
      'text/plain;q=1,application/openmetrics-text;version=1.0.0;q=0.5',
    ]) {
      expect(negotiate(accept), String(accept)).to.equal('text');
    }
    expect(contentType('text')).to.equal('text/plain; version=0.0.4; charset=utf-8');
  });
});

describe('incomingTraceId (W3CTraceContextPropagator.extract)', () => {
  it('should return the trace id of a valid W3C traceparent', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).to.equal(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra')).to.equal(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
  });

  it('should return undefined for a missing or invalid one (uppercase hex included: it was lowercased and taken)', () => {
    for (const h of [
      undefined,
      '',
      'garbage',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      // Uppercase hex is not allowed (W3C: vendors MUST ignore it), so other tracers start a new trace.
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01',
    ]) {
      expect(parseTraceparent(h), String(h)).to.equal(undefined);
    }
  });

  it("should read the edge cases as OpenTelemetry's propagator does, where the old hand parser differed", () => {
    const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    // One space either side is allowed; more is not (the hand parser trimmed any whitespace).
    expect(parseTraceparent(` ${valid} `)).to.equal('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(parseTraceparent(`  ${valid}`)).to.equal(undefined);
    // A header sent twice: the first value is read (the hand parser took none).
    expect(parseTraceparent([valid, '00-00f067aa0ba902b74bf92f3577b34da6-00f067aa0ba902b7-01'])).to.equal(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
  });
});

describe('TraceIds', () => {
  it('should find the trace of a batch by its first request id and forget the oldest entry beyond its bound', () => {
    const t = new TraceIds(2);
    t.set('r1', 'a'.repeat(32));
    t.set('r2', undefined);
    t.set('r3', 'b'.repeat(32));
    expect([t.get('r1'), t.get('r2'), t.get('r1,r3'), t.get('r3,r1')]).to.deep.equal([
      'a'.repeat(32),
      undefined,
      'a'.repeat(32),
      'b'.repeat(32),
    ]);
    t.set('r4', 'c'.repeat(32));
    expect([t.get('r1'), t.get('r3'), t.get('r4')]).to.deep.equal([undefined, 'b'.repeat(32), 'c'.repeat(32)]);
  });

  it('should count each entry evicted at its bound, and evict none for an id it already holds (regression)', () => {
    const t = new TraceIds(2);
    let evicted = 0;
    const stop = t.countEvictions(() => {
      evicted++;
    });
    t.set('r1', 'a'.repeat(32));
    t.set('r2', 'b'.repeat(32));
    t.set('r2', 'c'.repeat(32)); // an update at the bound evicted r1 for nothing
    expect([evicted, t.get('r1'), t.get('r2')]).to.deep.equal([0, 'a'.repeat(32), 'c'.repeat(32)]);
    for (let i = 3; i <= 7; i++) t.set(`r${i}`, 'd'.repeat(32));
    expect([evicted, t.get('r5'), t.get('r6'), t.get('r7')]).to.deep.equal([
      5,
      undefined,
      'd'.repeat(32),
      'd'.repeat(32),
    ]);
    let later = 0;
    const stopLater = t.countEvictions(() => {
      later++;
    });
    stop(); // replaced already: stops nothing
    t.set('r8', 'e'.repeat(32));
    stopLater();
    t.set('r9', 'e'.repeat(32));
    expect([evicted, later]).to.deep.equal([5, 1]);
  });
});
