import { expect } from 'chai';
import { bindAutoLabels } from '../../../../schema/auto-labels.js';
import { OtlpFamily, ucumUnit } from '../../../../frontend/metrics/otlp/otlp-cells.js';
import type { GaugeCell } from '../../../../frontend/metrics/exposition/cell.js';
import { makeSpec } from '../make-config.js';

const HOST = bindAutoLabels({ dimensions: ['Level'], hostLabel: 'Hostname' }, { hostname: 'h1' });
const NONE = bindAutoLabels({ dimensions: [], hostLabel: null }, {});

describe('OtlpFamily', () => {
  let now = 1000;
  const clock = (): number => now;
  const noTrack = (_s: string, _c: GaugeCell): void => {};

  it('should give a counter its running total (cumulative) under its name without _total, attributes in dimension order then the host label', () => {
    const f = new OtlpFamily(makeSpec('reqs_total', 'counter', ['Level'], { hostLabel: 'Hostname' }), noTrack, clock);
    const c = f.bind(['Host'], HOST);
    c.record(2, undefined, undefined);
    c.record(3, undefined, undefined);
    expect(f.collect('cumulative', 2000)).to.deep.equal({
      name: 'reqs',
      description: 'reqs_total (unit: Count)',
      unit: '{Count}',
      kind: 'sum',
      points: [{ attributes: { Level: 'Host', Hostname: 'h1' }, startMs: 1000, value: 5 }],
    });
    expect(f.collect('cumulative', 3000).points[0]!.value).to.equal(5);
  });

  it('should give delta points as the change since the last collection, each starting where the last ended', () => {
    now = 1000;
    const f = new OtlpFamily(makeSpec('d', 'counter', []), noTrack, clock);
    const c = f.bind([], NONE);
    c.record(4, undefined, undefined);
    expect(f.collect('delta', 2000).points).to.deep.equal([{ attributes: {}, startMs: 1000, value: 4 }]);
    c.record(1, undefined, undefined);
    expect(f.collect('delta', 3000).points).to.deep.equal([{ attributes: {}, startMs: 2000, value: 1 }]);
    expect(f.collect('delta', 4000).points).to.deep.equal([{ attributes: {}, startMs: 3000, value: 0 }]);
  });

  it('should give a histogram its per-bucket counts, sum and count, cumulative and delta', () => {
    now = 0;
    const spec = makeSpec('lat', 'histogram', [], { buckets: [1, 10], unit: 'ms' });
    const cum = new OtlpFamily(spec, noTrack, clock);
    const del = new OtlpFamily(spec, noTrack, clock);
    for (const f of [cum, del]) {
      const c = f.bind([], NONE);
      for (const v of [0.5, 5, 50, 7]) c.record(v, undefined, undefined);
    }
    const expected = { boundaries: [1, 10], counts: [1, 2, 1], sum: 62.5, count: 4 };
    expect(cum.collect('cumulative', 1).points[0]!.value).to.deep.equal(expected);
    expect(del.collect('delta', 1).points[0]!.value).to.deep.equal(expected);
    expect(cum.collect('cumulative', 2).unit).to.equal('ms');
  });

  it('should export nothing for a bound series never recorded, and a labelled gauge once written', () => {
    const f = new OtlpFamily(makeSpec('g', 'gauge', ['Level'], { hostLabel: 'Hostname' }), noTrack, clock);
    const g = f.bind(['Host'], HOST);
    expect(f.collect('cumulative', 1).points).to.deep.equal([]);
    g.record(7.5, undefined, undefined);
    expect(f.collect('cumulative', 1).points.map((p) => p.value)).to.deep.equal([7.5]);
  });
});

describe('ucumUnit', () => {
  it("should map metrics.yaml's free units to UCUM", () => {
    expect(
      [
        'ms',
        'Milliseconds',
        'microseconds',
        's',
        'percent',
        'ratio',
        'bytes',
        'MB',
        'GiB',
        'Count',
        'tokens',
        'widgets',
      ].map(ucumUnit),
    ).to.deep.equal(['ms', 'ms', 'us', 's', '%', '1', 'By', 'MBy', 'GiBy', '{Count}', '{tokens}', 'widgets']);
  });
});
