import { expect } from 'chai';
import * as os from 'node:os';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import type { SeriesLabels } from '../../../frontend/metrics/metric-cells.js';
import { makeConfig, makeSpec } from './make-config.js';

describe('MetricCells (the prometheus sink read in place)', () => {
  const config = makeConfig(
    [
      makeSpec('Req', 'counter', ['model_name'], { section: 'model_metrics' }),
      makeSpec('Depth', 'gauge', ['model_name'], { merge: 'livesum' }),
      makeSpec('Lat', 'histogram', ['m'], { buckets: [1, 10] }),
      makeSpec('Idle', 'counter', ['m']),
    ],
    { modes: ['prometheus'] },
  );

  it('should hand each rendered series its exposition labels and value, the automatic host label last', async () => {
    const fm = new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'h', log: () => {} });
    fm.get('Req')!.addOrUpdate(2, ['a\\"q"']);
    fm.get('Req')!.addOrUpdate(3, ['a\\"q"']);
    fm.get('Depth')!.bind(['a']).record(4);
    fm.get('Depth')!.bind(['b']).record(5);
    const seen: Array<[SeriesLabels, number]> = [];
    const cells = fm.cells()!;
    expect(cells.eachValue('Req', (l, v) => seen.push([l, v]))).to.equal(true);
    expect(cells.eachValue('Idle', (l, v) => seen.push([l, v]))).to.equal(true);
    expect(seen).to.deep.equal([[{ model_name: 'a\\"q"', Hostname: 'h' }, 5]]);
    expect(await fm.prometheusText(['Req'])).to.include('Req{model_name="a\\\\\\"q\\"",Hostname="h"} 5');
    expect([cells.eachValue('Lat', () => {}), cells.eachValue('Nope', () => {})]).to.deep.equal([false, false]);
    const depth: Array<[SeriesLabels, number]> = [];
    cells.eachValue('Depth', (l, v) => depth.push([l, v]));
    expect(depth).to.deep.equal([
      [{ model_name: 'a' }, 4],
      [{ model_name: 'b' }, 5],
    ]);
  });

  it('should hand each histogram series its per-bucket counts, sum and count, and the bounds', () => {
    const fm = new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'h', log: () => {} });
    for (const v of [0.5, 5, 5, 50]) fm.get('Lat')!.addOrUpdate(v, ['x']);
    const cells = fm.cells()!;
    const seen: unknown[] = [];
    expect(cells.eachHistogram('Lat', (l, counts, sum, count) => seen.push([l, [...counts], sum, count]))).to.equal(
      true,
    );
    expect({ seen, bounds: cells.histogramBounds('Lat'), none: cells.histogramBounds('Req') }).to.deep.equal({
      seen: [[{ m: 'x' }, [1, 2, 1], 60.5, 4]],
      bounds: [1, 10],
      none: null,
    });
  });

  it('should be null with the prometheus sink off', () => {
    const fm = new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'h', modes: ['tslog'], log: () => {} });
    expect(fm.cells()).to.equal(null);
    void fm.close();
  });
});
