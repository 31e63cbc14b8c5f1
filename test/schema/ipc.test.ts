import { expect } from 'chai';
import * as v8 from 'v8';
import { decodeMetricsMessage, expandDatapoints, forEachSegment, isMetricsMessageType } from '../../schema/ipc.js';
import type { MetricsMessage } from '../../schema/ipc.js';

function valid(): MetricsMessage {
  return {
    type: 'tsserve.metrics',
    v: 3,
    seq: 3,
    metrics: [{ name: 'Hits', type: 'counter', unit: 'Count', dimensions: ['ModelName', 'Level'] }],
    series: [
      { id: 0, metric: 'Hits', values: ['mlp', 'Model'] },
      { id: 1, metric: 'HandlerTime', values: ['a,b:c|', ''] },
    ],
    seriesIds: Uint32Array.from([0, 1, 1, 0]),
    values: Float64Array.from([1, 12.5, 0.1, 3]),
    requestRuns: Int32Array.from([0, 0, 1, -1, 3, 1]),
    requestIds: ['req-a,req-b', 'req-x'],
    timeRuns: Float64Array.from([0, 1_700_000_000_123, 2, 1_700_000_000_124]),
    dropped: { not_finite: 2 },
    overflowed: { Hits: 4 },
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
    const arrays = (x: MetricsMessage): unknown[] =>
      [x.seriesIds, x.values, x.requestRuns, x.timeRuns].map((a) => [a.constructor.name, Array.from(a)]);
    expect(arrays(m)).to.deep.equal([
      ['Uint32Array', [0, 1, 1, 0]],
      ['Float64Array', [1, 12.5, 0.1, 3]],
      ['Int32Array', [0, 0, 1, -1, 3, 1]],
      ['Float64Array', [0, 1_700_000_000_123, 2, 1_700_000_000_124]],
    ]);
    const rest = (x: MetricsMessage): unknown => ({
      ...x,
      seriesIds: null,
      values: null,
      requestRuns: null,
      timeRuns: null,
    });
    expect(rest(m)).to.deep.equal(rest(valid()));
  });

  it('should carry 12 bytes per datapoint (series id + value) and only a few bytes per run', () => {
    const size = (n: number, runs: number): number =>
      v8.serialize({
        ...valid(),
        seriesIds: new Uint32Array(n),
        values: new Float64Array(n),
        requestRuns: new Int32Array(2 * runs),
        timeRuns: new Float64Array(2),
      }).length;
    expect(size(2000, 1) - size(1000, 1)).to.equal(12_000);
    expect(size(1000, 11) - size(1000, 1)).to.equal(80);
  });

  it('should accept an empty flush', () => {
    const r = decodeMetricsMessage({
      type: 'tsserve.metrics',
      v: 3,
      seq: 0,
      metrics: [],
      series: [],
      seriesIds: new Uint32Array(0),
      values: new Float64Array(0),
      requestRuns: new Int32Array(0),
      requestIds: [],
      timeRuns: new Float64Array(0),
      dropped: {},
      overflowed: {},
    });
    expect('error' in r).to.equal(false);
  });

  it('should reject non-objects and other types with a reason', () => {
    expect(decodeMetricsMessage(null)).to.deep.equal({ error: 'message is not an object' });
    expect(decodeMetricsMessage('[METRICS]x.ms:1')).to.deep.equal({ error: 'message is not an object' });
    expect(decodeMetricsMessage({ type: 'tsserve.ready' })).to.deep.equal({
      error: 'type is "tsserve.ready", not tsserve.metrics',
    });
  });

  it('should reject an unknown version', () => {
    expect(
      errorOf((m) => {
        m.v = 1;
      }),
    ).to.equal('unsupported metrics protocol version 1 (this frontend speaks 3)');
    expect(
      errorOf((m) => {
        m.v = 2;
      }),
    ).to.equal('unsupported metrics protocol version 2 (this frontend speaks 3)');
    expect(
      errorOf((m) => {
        delete m.v;
      }),
    ).to.equal('unsupported metrics protocol version undefined (this frontend speaks 3)');
  });

  it('should reject each malformed field with a reason naming it', () => {
    const cases: Array<[(m: Record<string, unknown>) => void, string]> = [
      [
        (m) => {
          m.seq = -1;
        },
        'seq must be a non-negative integer',
      ],
      [
        (m) => {
          m.metrics = {};
        },
        'metrics must be an array',
      ],
      [
        (m) => {
          m.metrics = [null];
        },
        'metrics[0] is not an object',
      ],
      [
        (m) => {
          m.metrics = [{ name: '', type: 'counter', unit: '', dimensions: [] }];
        },
        'metrics[0].name must be a non-empty string',
      ],
      [
        (m) => {
          m.metrics = [{ name: 'x', type: 'summary', unit: '', dimensions: [] }];
        },
        'metrics[0].type must be counter, gauge or histogram',
      ],
      [
        (m) => {
          m.metrics = [{ name: 'x', type: 'gauge', unit: 3, dimensions: [] }];
        },
        'metrics[0].unit must be a string',
      ],
      [
        (m) => {
          m.metrics = [{ name: 'x', type: 'gauge', unit: '', dimensions: [1] }];
        },
        'metrics[0].dimensions must be an array of strings',
      ],
      [
        (m) => {
          m.series = 'x';
        },
        'series must be an array',
      ],
      [
        (m) => {
          m.series = [{ id: 1.5, metric: 'x', values: [] }];
        },
        'series[0].id must be a non-negative integer',
      ],
      [
        (m) => {
          m.series = [{ id: 0, metric: 7, values: [] }];
        },
        'series[0].metric must be a non-empty string',
      ],
      [
        (m) => {
          m.series = [{ id: 0, metric: 'x', values: [null] }];
        },
        'series[0].values must be an array of strings',
      ],
      [
        (m) => {
          m.requestIds = [1];
        },
        'requestIds must be an array of strings',
      ],
      [
        (m) => {
          m.seriesIds = [0, 1, 1, 0];
        },
        'seriesIds must be a Uint32Array',
      ],
      [
        (m) => {
          m.seriesIds = Float64Array.from([0, 1, 1, 0.5]);
        },
        'seriesIds must be a Uint32Array',
      ],
      [
        (m) => {
          m.seriesIds = Int32Array.from([0, 1, 1, -1]);
        },
        'seriesIds must be a Uint32Array',
      ],
      [
        (m) => {
          m.values = Float32Array.from([1, 2, 3, 4]);
        },
        'values must be a Float64Array',
      ],
      [
        (m) => {
          m.values = new Float64Array(3);
        },
        'values has 3 datapoints, seriesIds 4',
      ],
      [
        (m) => {
          m.requestRuns = Float64Array.from([0, 0]);
        },
        'requestRuns must be an Int32Array',
      ],
      [
        (m) => {
          m.requestRuns = Int32Array.from([0, 0, 1]);
        },
        'requestRuns length 3 is not a multiple of 2',
      ],
      [
        (m) => {
          m.requestRuns = new Int32Array(0);
        },
        'requestRuns is empty but there are 4 datapoints',
      ],
      [
        (m) => {
          m.requestRuns = Int32Array.from([1, 0]);
        },
        'requestRuns[0] starts at 1, not 0',
      ],
      [
        (m) => {
          m.requestRuns = Int32Array.from([0, 0, 2, 1, 2, -1]);
        },
        'requestRuns[2] start 2 does not follow 2',
      ],
      [
        (m) => {
          m.requestRuns = Int32Array.from([0, 0, 3, 1, 1, -1]);
        },
        'requestRuns[2] start 1 does not follow 3',
      ],
      [
        (m) => {
          m.requestRuns = Int32Array.from([0, 0, 4, 1]);
        },
        'requestRuns[1] start 4 is past the last datapoint (3)',
      ],
      [
        (m) => {
          m.requestRuns = Int32Array.from([0, 2]);
        },
        'requestRuns[0] request ref 2 out of range',
      ],
      [
        (m) => {
          m.requestRuns = Int32Array.from([0, 0, 1, -2]);
        },
        'requestRuns[1] request ref -2 out of range',
      ],
      [
        (m) => {
          m.timeRuns = [0, 5];
        },
        'timeRuns must be a Float64Array',
      ],
      [
        (m) => {
          m.timeRuns = Float64Array.from([0, 5, 2]);
        },
        'timeRuns length 3 is not a multiple of 2',
      ],
      [
        (m) => {
          m.timeRuns = new Float64Array(0);
        },
        'timeRuns is empty but there are 4 datapoints',
      ],
      [
        (m) => {
          m.timeRuns = Float64Array.from([0, 5, 1.5, 6]);
        },
        'timeRuns[1] start 1.5 is not an integer',
      ],
      [
        (m) => {
          m.timeRuns = Float64Array.from([0, 5, NaN, 6]);
        },
        'timeRuns[1] start NaN is not an integer',
      ],
      [
        (m) => {
          m.timeRuns = Float64Array.from([0, 5, 7, 6]);
        },
        'timeRuns[1] start 7 is past the last datapoint (3)',
      ],
      [
        (m) => {
          m.timeRuns = Float64Array.from([0, 5, 2, Infinity]);
        },
        'timeRuns[1] time Infinity is not finite',
      ],
      [
        (m) => {
          m.timeRuns = Float64Array.from([0, NaN]);
        },
        'timeRuns[0] time NaN is not finite',
      ],
      [
        (m) => {
          m.seriesIds = new Uint32Array(0);
          m.values = new Float64Array(0);
        },
        'requestRuns must be empty when there are no datapoints',
      ],
      [
        (m) => {
          m.seriesIds = new Uint32Array(0);
          m.values = new Float64Array(0);
          m.requestRuns = new Int32Array(0);
        },
        'timeRuns must be empty when there are no datapoints',
      ],
      [
        (m) => {
          m.dropped = null;
        },
        'dropped must be an object',
      ],
      [
        (m) => {
          m.dropped = [1];
        },
        'dropped must be an object',
      ],
      [
        (m) => {
          m.dropped = { boredom: 1 };
        },
        'dropped has unknown reason "boredom"',
      ],
      [
        (m) => {
          m.dropped = { not_finite: -1 };
        },
        'dropped.not_finite must be a non-negative integer',
      ],
    ];
    expect(cases.map(([patch]) => errorOf(patch))).to.deep.equal(cases.map(([, e]) => e));
  });
});

describe('expandDatapoints', () => {
  it('should give every datapoint the request id and time of the runs it falls in', () => {
    expect(expandDatapoints(valid())).to.deep.equal([
      { seriesId: 0, value: 1, requestId: 'req-a,req-b', timeMs: 1_700_000_000_123 },
      { seriesId: 1, value: 12.5, requestId: null, timeMs: 1_700_000_000_123 },
      { seriesId: 1, value: 0.1, requestId: null, timeMs: 1_700_000_000_124 },
      { seriesId: 0, value: 3, requestId: 'req-x', timeMs: 1_700_000_000_124 },
    ]);
  });
});

describe('forEachSegment', () => {
  it('should cut the datapoints where either kind of run starts, and call nothing for an empty flush', () => {
    const segs: unknown[] = [];
    forEachSegment(valid(), (from, to, id, t) => segs.push([from, to, id, t]));
    forEachSegment(
      {
        ...valid(),
        seriesIds: new Uint32Array(0),
        values: new Float64Array(0),
        requestRuns: new Int32Array(0),
        timeRuns: new Float64Array(0),
      },
      (from) => segs.push(from),
    );
    expect(segs).to.deep.equal([
      [0, 1, 'req-a,req-b', 1_700_000_000_123],
      [1, 2, undefined, 1_700_000_000_123],
      [2, 3, undefined, 1_700_000_000_124],
      [3, 4, 'req-x', 1_700_000_000_124],
    ]);
  });
});

describe('isMetricsMessageType', () => {
  it('should say whether a message claims the metrics type', () => {
    expect([
      isMetricsMessageType({ type: 'tsserve.metrics' }),
      isMetricsMessageType({ type: 'tsserve.result' }),
      isMetricsMessageType(null),
      isMetricsMessageType('tsserve.metrics'),
    ]).to.deep.equal([true, false, false, false]);
  });
});
