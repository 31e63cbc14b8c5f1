import { expect } from 'chai';
import { MetricsIngest } from '../../../frontend/metrics/ingest.js';
import type { IngestTarget } from '../../../frontend/metrics/ingest.js';
import type {
  BoundSeries,
  DimensionValues,
  DropReason,
  FrontendMetric,
  Refusal,
} from '../../../frontend/metrics/frontend-metrics.js';
import type { MetricsMessage } from '../../../schema/ipc.js';
import type { MetricSpec } from '../../../schema/types.js';
import { spec } from '../../backend/metrics/config.js';

type Rec = [
  string,
  readonly string[] | Readonly<Record<string, string>>,
  number,
  string | undefined,
  number | undefined,
];

/** A recording stand-in for FrontendMetrics (this file tests the ingest alone). */
class FakeMetrics implements IngestTarget {
  readonly records: Rec[] = [];
  readonly binds: Array<[string, unknown]> = [];
  readonly registered: string[] = [];
  readonly drops: Array<[DropReason, number, string]> = [];
  readonly flushes: Array<[number, number]> = [];
  private readonly byName = new Map<string, FrontendMetric>();
  readonly self = {
    flushed: (b: number, d: number) => {
      this.flushes.push([b, d]);
    },
    dropped: (r: DropReason, n = 1, m = '') => {
      this.drops.push([r, n, m]);
    },
  } as unknown as IngestTarget['self'];

  constructor(specs: readonly MetricSpec[]) {
    for (const s of specs) this.byName.set(s.name, this.make(s));
  }

  get(name: string): FrontendMetric | null {
    return this.byName.get(name) ?? null;
  }

  admit(s: MetricSpec): FrontendMetric | Refusal {
    if (this.byName.has(s.name)) return { reason: 'type_mismatch', why: 'taken' };
    this.registered.push(`${s.name}:${s.type}:${s.unit}:${s.dimensions.join('/')}:${s.section}:${s.hostLabel}`);
    const m = this.make(s);
    this.byName.set(s.name, m);
    return m;
  }

  private make(s: MetricSpec): FrontendMetric {
    const records = this.records;
    const binds = this.binds;
    return {
      spec: s,
      addOrUpdate(): void {
        throw new Error('the ingest binds');
      },
      bind(dims?: DimensionValues): BoundSeries {
        binds.push([s.name, dims]);
        return {
          record: (v: number, rid?: string, t?: number) => {
            records.push([s.name, dims ?? [], v, rid, t]);
          },
        };
      },
    };
  }
}

function msg(over: Partial<MetricsMessage>): MetricsMessage {
  return {
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
    ...over,
  };
}

/** The datapoint fields of a message: [seriesId, value] pairs and the two run lists. */
function pts(
  points: ReadonlyArray<readonly [number, number]>,
  requestRuns: readonly number[] = [0, -1],
  timeRuns: readonly number[] = [0, 0],
): Partial<MetricsMessage> {
  return {
    seriesIds: Uint32Array.from(points.map((p) => p[0])),
    values: Float64Array.from(points.map((p) => p[1])),
    requestRuns: Int32Array.from(requestRuns),
    timeRuns: Float64Array.from(timeRuns),
  };
}

const SPECS = [spec('HandlerTime', 'gauge', 'ms', ['ModelName', 'Level']), spec('NoDims', 'counter', 'Count', [])];

describe('MetricsIngest', () => {
  it('should bind each declared series once and record every point with its value, request id and time', () => {
    const fake = new FakeMetrics(SPECS);
    const ingest = new MetricsIngest(fake, { log: () => undefined });
    expect(
      ingest.handle(
        'w1',
        msg({
          series: [
            { id: 0, metric: 'HandlerTime', values: ['mlp', 'Model'] },
            { id: 1, metric: 'NoDims', values: [] },
          ],
          ...pts(
            [
              [0, 12.5],
              [1, 1],
              [0, 3],
            ],
            [0, 0, 1, -1, 2, 1],
            [0, 1000, 1, 1001, 2, 1002],
          ),
          requestIds: ['a,b', 'c'],
        }),
      ),
    ).to.equal(true);
    expect(ingest.handle('w1', msg({ seq: 1, ...pts([[1, 2]], [0, -1], [0, 2000]) }))).to.equal(true);
    expect(fake.binds).to.deep.equal([
      ['HandlerTime', ['mlp', 'Model']],
      ['NoDims', []],
    ]);
    expect(fake.records).to.deep.equal([
      ['HandlerTime', ['mlp', 'Model'], 12.5, 'a,b', 1000],
      ['NoDims', [], 1, undefined, 1001],
      ['HandlerTime', ['mlp', 'Model'], 3, 'c', 1002],
      ['NoDims', [], 2, undefined, 2000],
    ]);
    expect(fake.flushes).to.deep.equal([
      [1, 3],
      [1, 1],
    ]);
    expect(fake.drops).to.deep.equal([]);
  });

  it('should give each datapoint the request id and time of its runs when both change mid-flush', () => {
    const fake = new FakeMetrics(SPECS);
    const ingest = new MetricsIngest(fake, { log: () => undefined });
    ingest.handle(
      'w1',
      msg({
        series: [{ id: 0, metric: 'NoDims', values: [] }],
        ...pts(
          [
            [0, 1],
            [0, 2],
            [0, 3],
            [0, 4],
            [0, 5],
            [0, 6],
          ],
          [0, 0, 2, 1, 3, 0, 5, -1],
          [0, 100, 4, 200],
        ),
        requestIds: ['batch', 'explicit'],
      }),
    );
    expect(fake.records.map((r) => [r[2], r[3], r[4]])).to.deep.equal([
      [1, 'batch', 100],
      [2, 'batch', 100],
      [3, 'explicit', 100],
      [4, 'batch', 100],
      [5, 'batch', 200],
      [6, undefined, 200],
    ]);
    expect(fake.flushes).to.deep.equal([[1, 6]]);
  });

  it('should return false for other messages and leave them alone', () => {
    const fake = new FakeMetrics(SPECS);
    const ingest = new MetricsIngest(fake, { log: () => undefined });
    expect([
      ingest.handle('w1', { type: 'tsserve.result' }),
      ingest.handle('w1', 'hello'),
      ingest.handle('w1', null),
    ]).to.deep.equal([false, false, false]);
    expect([fake.drops, fake.flushes]).to.deep.equal([[], []]);
  });

  it('should count malformed and unknown-version messages, log once per worker, and never throw', () => {
    const fake = new FakeMetrics(SPECS);
    const logs: string[] = [];
    const ingest = new MetricsIngest(fake, { log: (m) => logs.push(m) });
    expect(ingest.handle('w1', { type: 'tsserve.metrics', v: 1 })).to.equal(true);
    expect(ingest.handle('w1', { type: 'tsserve.metrics', v: 2 })).to.equal(true);
    expect(ingest.handle('w2', msg({ ...pts([[0, 1]]), values: new Float64Array(3) }))).to.equal(true);
    expect(fake.drops).to.deep.equal([
      ['malformed_message', 1, ''],
      ['malformed_message', 1, ''],
      ['malformed_message', 1, ''],
    ]);
    expect(logs).to.deep.equal([
      'metrics: worker w1 sent a malformed metrics message (unsupported metrics protocol version 1 (this frontend speaks 3)); ' +
        'it was dropped; further ones are only counted',
      'metrics: worker w2 sent a malformed metrics message (values has 3 datapoints, seriesIds 1); it was dropped; ' +
        'further ones are only counted',
    ]);
  });

  it('should add the worker drop deltas and count points of undeclared series or unknown metrics', () => {
    const fake = new FakeMetrics(SPECS);
    const logs: string[] = [];
    const ingest = new MetricsIngest(fake, { log: (m) => logs.push(m) });
    ingest.handle(
      'w1',
      msg({
        series: [{ id: 0, metric: 'Nope', values: [] }],
        ...pts([
          [0, 1],
          [0, 1],
          [7, 1],
        ]),
        dropped: { negative_counter: 2, not_finite: 1, bad_unit: 4 },
      }),
    );
    expect(fake.drops).to.deep.equal([
      ['unknown_metric', 1, 'Nope'],
      ['unknown_metric', 1, 'Nope'],
      ['malformed_message', 1, ''],
      ['negative_counter', 2, ''],
      ['not_finite', 1, ''],
      ['bad_unit', 4, ''],
    ]);
    expect(fake.flushes).to.deep.equal([[1, 3]]);
    expect(logs).to.deep.equal([
      'metrics: worker w1 sent 1 datapoints for series it never declared; they were dropped',
    ]);
  });

  it('should register an auto-detected metric once and let racing workers with the same shape reuse it', () => {
    const fake = new FakeMetrics(SPECS);
    const ingest = new MetricsIngest(fake, { log: () => undefined });
    const decl = { name: 'Hits', type: 'counter' as const, unit: 'Count', dimensions: ['ModelName', 'Level'] };
    ingest.handle(
      'w1',
      msg({
        metrics: [decl],
        series: [{ id: 0, metric: 'Hits', values: ['m', 'Model'] }],
        ...pts([[0, 1]], [0, -1], [0, 5]),
      }),
    );
    ingest.handle(
      'w2',
      msg({
        metrics: [{ ...decl, dimensions: ['Level', 'ModelName'] }],
        series: [{ id: 0, metric: 'Hits', values: ['Model', 'm'] }],
        ...pts([[0, 2]], [0, -1], [0, 6]),
      }),
    );
    expect(fake.registered).to.deep.equal(['Hits:counter:Count:ModelName/Level:model_metrics:Hostname']);
    expect(fake.records).to.deep.equal([
      ['Hits', { ModelName: 'm', Level: 'Model' }, 1, undefined, 5],
      ['Hits', { Level: 'Model', ModelName: 'm' }, 2, undefined, 6],
    ]);
  });

  it('should drop, as type_mismatch, the points of a worker whose auto-detected shape conflicts', () => {
    const fake = new FakeMetrics(SPECS);
    const logs: string[] = [];
    const ingest = new MetricsIngest(fake, { log: (m) => logs.push(m) });
    ingest.handle(
      'w1',
      msg({
        metrics: [{ name: 'HandlerTime', type: 'counter', unit: 'Count', dimensions: [] }],
        series: [{ id: 0, metric: 'HandlerTime', values: [] }],
        ...pts([
          [0, 1],
          [0, 1],
        ]),
      }),
    );
    expect(fake.drops).to.deep.equal([
      ['type_mismatch', 1, 'HandlerTime'],
      ['type_mismatch', 1, 'HandlerTime'],
    ]);
    expect(fake.records).to.deep.equal([]);
    expect(logs).to.deep.equal([
      'metrics: worker w1 auto-detected HandlerTime as a counter with dimensions [], but it is a gauge ' +
        'with [ModelName, Level]; its datapoints are dropped (type_mismatch)',
    ]);
  });

  it('should keep series tables per worker and forget a dead worker without touching recorded data', () => {
    const fake = new FakeMetrics(SPECS);
    const ingest = new MetricsIngest(fake, { log: () => undefined });
    ingest.handle('w1', msg({ series: [{ id: 0, metric: 'NoDims', values: [] }], ...pts([[0, 1]]) }));
    ingest.handle('w2', msg({ series: [{ id: 0, metric: 'HandlerTime', values: ['m', 'Model'] }], ...pts([[0, 2]]) }));
    ingest.forget('w1');
    ingest.handle('w1', msg(pts([[0, 3]])));
    expect(fake.records.map((r) => [r[0], r[2]])).to.deep.equal([
      ['NoDims', 1],
      ['HandlerTime', 2],
    ]);
    expect(fake.drops).to.deep.equal([['malformed_message', 1, '']]);
  });
});
