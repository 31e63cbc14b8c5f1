import { expect } from 'chai';
import * as v8 from 'v8';
import { decodeMetricsMessage, isMetricsMessageType } from '../../schema/ipc';
import type { MetricsMessage } from '../../schema/ipc';

function valid(): MetricsMessage {
  return {
    type: 'tsserve.metrics',
    v: 1,
    seq: 3,
    metrics: [{ name: 'Hits', type: 'counter', unit: 'Count', dimensions: ['ModelName', 'Level'] }],
    series: [{ id: 0, metric: 'Hits', values: ['mlp', 'Model'] }, { id: 1, metric: 'HandlerTime', values: ['a,b:c|', ''] }],
    points: Float64Array.from([0, 1, 0, 1_700_000_000_123, 1, 12.5, -1, 1_700_000_000_124]),
    requestIds: ['req-a,req-b'],
    dropped: { not_finite: 2 },
  };
}

/** Structured clone, as `serialization: 'advanced'` does between processes. */
function clone<T>(x: T): T {
  return v8.deserialize(v8.serialize(x)) as T;
}

function errorOf(patch: (m: Record<string, unknown>) => void): string {
  const m = valid() as unknown as Record<string, unknown>;
  patch(m);
  const r = decodeMetricsMessage(clone(m));
  return 'error' in r ? r.error : 'no error';
}

describe('decodeMetricsMessage', () => {
  it('should round-trip a message through structured clone unchanged', () => {
    const r = decodeMetricsMessage(clone(valid()));
    expect('error' in r).to.equal(false);
    const m = r as MetricsMessage;
    expect(m.points).to.be.instanceOf(Float64Array);
    expect(Array.from(m.points)).to.deep.equal([0, 1, 0, 1_700_000_000_123, 1, 12.5, -1, 1_700_000_000_124]);
    expect({ ...m, points: null }).to.deep.equal({ ...valid(), points: null });
  });

  it('should accept an empty flush', () => {
    const r = decodeMetricsMessage({ type: 'tsserve.metrics', v: 1, seq: 0, metrics: [], series: [],
      points: new Float64Array(0), requestIds: [], dropped: {} });
    expect('error' in r).to.equal(false);
  });

  it('should reject non-objects and other types with a reason', () => {
    expect(decodeMetricsMessage(null)).to.deep.equal({ error: 'message is not an object' });
    expect(decodeMetricsMessage('[METRICS]x.ms:1')).to.deep.equal({ error: 'message is not an object' });
    expect(decodeMetricsMessage({ type: 'tsserve.ready' })).to.deep.equal({ error: 'type is "tsserve.ready", not tsserve.metrics' });
  });

  it('should reject an unknown version', () => {
    expect(errorOf((m) => { m.v = 2; })).to.equal('unsupported metrics protocol version 2 (this frontend speaks 1)');
    expect(errorOf((m) => { delete m.v; })).to.equal('unsupported metrics protocol version undefined (this frontend speaks 1)');
  });

  it('should reject each malformed field with a reason naming it', () => {
    const cases: Array<[(m: Record<string, unknown>) => void, string]> = [
      [(m) => { m.seq = -1; }, 'seq must be a non-negative integer'],
      [(m) => { m.metrics = {}; }, 'metrics must be an array'],
      [(m) => { m.metrics = [null]; }, 'metrics[0] is not an object'],
      [(m) => { m.metrics = [{ name: '', type: 'counter', unit: '', dimensions: [] }]; }, 'metrics[0].name must be a non-empty string'],
      [(m) => { m.metrics = [{ name: 'x', type: 'summary', unit: '', dimensions: [] }]; }, 'metrics[0].type must be counter, gauge or histogram'],
      [(m) => { m.metrics = [{ name: 'x', type: 'gauge', unit: 3, dimensions: [] }]; }, 'metrics[0].unit must be a string'],
      [(m) => { m.metrics = [{ name: 'x', type: 'gauge', unit: '', dimensions: [1] }]; }, 'metrics[0].dimensions must be an array of strings'],
      [(m) => { m.series = 'x'; }, 'series must be an array'],
      [(m) => { m.series = [{ id: 1.5, metric: 'x', values: [] }]; }, 'series[0].id must be a non-negative integer'],
      [(m) => { m.series = [{ id: 0, metric: 7, values: [] }]; }, 'series[0].metric must be a non-empty string'],
      [(m) => { m.series = [{ id: 0, metric: 'x', values: [null] }]; }, 'series[0].values must be an array of strings'],
      [(m) => { m.requestIds = [1]; }, 'requestIds must be an array of strings'],
      [(m) => { m.points = [0, 1, -1, 0]; }, 'points must be a Float64Array'],
      [(m) => { m.points = new Float32Array(4); }, 'points must be a Float64Array'],
      [(m) => { m.points = new Float64Array(6); }, 'points length 6 is not a multiple of 4'],
      [(m) => { m.points = Float64Array.from([-1, 1, -1, 0]); }, 'point 0: bad series id -1'],
      [(m) => { m.points = Float64Array.from([0, 1, -1, 0, 0.5, 1, -1, 0]); }, 'point 1: bad series id 0.5'],
      [(m) => { m.points = Float64Array.from([0, 1, 1, 0]); }, 'point 0: request ref 1 out of range'],
      [(m) => { m.points = Float64Array.from([0, 1, -2, 0]); }, 'point 0: request ref -2 out of range'],
      [(m) => { m.points = Float64Array.from([0, 1, NaN, 0]); }, 'point 0: request ref NaN out of range'],
      [(m) => { m.points = Float64Array.from([0, 1, 0, Infinity]); }, 'point 0: time Infinity is not finite'],
      [(m) => { m.dropped = null; }, 'dropped must be an object'],
      [(m) => { m.dropped = [1]; }, 'dropped must be an object'],
      [(m) => { m.dropped = { boredom: 1 }; }, 'dropped has unknown reason "boredom"'],
      [(m) => { m.dropped = { not_finite: -1 }; }, 'dropped.not_finite must be a non-negative integer'],
    ];
    expect(cases.map(([patch]) => errorOf(patch))).to.deep.equal(cases.map(([, e]) => e));
  });
});

describe('isMetricsMessageType', () => {
  it('should say whether a message claims the metrics type', () => {
    expect([isMetricsMessageType({ type: 'tsserve.metrics' }), isMetricsMessageType({ type: 'tsserve.result' }),
      isMetricsMessageType(null), isMetricsMessageType('tsserve.metrics')]).to.deep.equal([true, false, false, false]);
  });
});
