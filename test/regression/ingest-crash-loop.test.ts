/**
 * Fixed: a worker killed and replaced in a loop left one series table and one gauge entry per
 * dead incarnation in the frontend (memory grew with every restart).
 */
import { expect } from 'chai';
import * as os from 'node:os';
import { FrontendMetrics } from '../../frontend/metrics/frontend-metrics.js';
import { MetricsIngest } from '../../frontend/metrics/ingest.js';
import type { MetricsMessage } from '../../schema/ipc.js';
import type { GaugeMerge } from '../../schema/types.js';
import { captureLog, makeConfig, makeSpec } from '../frontend/metrics/make-config.js';

const MODES: readonly GaugeMerge[] = ['sum', 'max', 'min', 'last', 'livesum', 'livelast'];
const NAMES = [...MODES.map((m) => `Gauge_${m}`), 'Restarted'];

/** One flush declaring a series of every gauge and the counter, each recorded once with `value`. */
function flush(value: number): MetricsMessage {
  const series = NAMES.map((metric, id) => ({ id, metric, values: ['mlp'] }));
  return {
    type: 'tsserve.metrics',
    v: 3,
    seq: 0,
    metrics: [],
    series,
    seriesIds: Uint32Array.from(series.map((s) => s.id)),
    values: Float64Array.from(series.map(() => value)),
    requestRuns: Int32Array.from([0, -1]),
    requestIds: [],
    timeRuns: Float64Array.from([0, 0]),
    dropped: {},
    overflowed: {},
  };
}

describe('MetricsIngest under a crash loop', () => {
  it('should forget each of 500 dead incarnations while gauges keep their merged value and the counter its total (regression)', async () => {
    const config = makeConfig(
      [
        ...MODES.map((merge) =>
          makeSpec(`Gauge_${merge}`, 'gauge', ['ModelName'], { section: 'model_metrics', merge }),
        ),
        makeSpec('Restarted', 'counter', ['ModelName'], { section: 'model_metrics' }),
      ],
      { modes: ['prometheus'] },
    );
    const fm = new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'h1', log: captureLog().log });
    const ingest = new MetricsIngest(fm, { log: () => undefined });
    for (let i = 1; i <= 500; i++) {
      ingest.started(`mlp-${i}`, { hostname: 'h1' });
      expect(ingest.handle(`mlp-${i}`, flush(i))).to.equal(true);
      ingest.forget(`mlp-${i}`);
    }
    ingest.started('mlp-501', { hostname: 'h1' });
    ingest.handle('mlp-501', flush(7));
    expect(ingest.incarnations).to.equal(1);
    expect(
      (await fm.prometheusText(NAMES, 'text')).split('\n').filter((l) => !l.startsWith('#') && l !== ''),
    ).to.deep.equal([
      'Gauge_sum{ModelName="mlp",Hostname="h1"} 125257', // 1 + 2 + … + 500, then the live 7
      'Gauge_max{ModelName="mlp",Hostname="h1"} 500',
      'Gauge_min{ModelName="mlp",Hostname="h1"} 1',
      'Gauge_last{ModelName="mlp",Hostname="h1"} 7',
      'Gauge_livesum{ModelName="mlp",Hostname="h1"} 7',
      'Gauge_livelast{ModelName="mlp",Hostname="h1"} 7',
      'Restarted{ModelName="mlp",Hostname="h1"} 125257',
    ]);
    ingest.forget('mlp-501');
    expect(ingest.incarnations).to.equal(0);
    await fm.close();
  });
});
