import { expect } from 'chai';
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { MetricsIngest } from '../../../frontend/metrics/ingest.js';
import { config, MODEL_SPECS } from '../../backend/metrics/config.js';

const WORKER = path.join(import.meta.dirname, 'fixtures', 'forging-worker.js');

describe('MetricsIngest with a forging worker', () => {
  it('should refuse and count datapoints a real worker forges into frontend metrics and self-metrics', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-forge-'));
    const fmLogs: string[] = [];
    const fm = new FrontendMetrics(config(MODEL_SPECS, { autoDetect: true }), {
      logDir: dir,
      hostname: 'h',
      modes: ['prometheus'],
      log: (level, m) => fmLogs.push(`${level}: ${m}`),
    });
    const logs: string[] = [];
    const ingest = new MetricsIngest(fm, { log: (m) => logs.push(m) });
    try {
      await new Promise<void>((resolve, reject) => {
        const child = fork(WORKER, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
        child.on('message', (m: unknown) => {
          ingest.handle('w0', m);
        });
        child.on('error', reject);
        // 'close', not 'exit': close waits for the channel's last messages.
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`forging worker exited with ${code}`))));
      });
      const text = await fm.prometheusText([
        'Requests2XX',
        'tsserve_datapoints_dropped_total',
        'tsserve_series_overflow_total',
        'tsserve_flush_batches_total',
      ]);
      const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
      expect(lines).to.deep.equal([
        'tsserve_datapoints_dropped_total{reason="forbidden_metric",Hostname="h"} 5',
        'tsserve_datapoints_dropped_total{reason="invalid_name",Hostname="h"} 4',
        'tsserve_series_overflow_total{metric="HandlerTime",Hostname="h"} 5',
        'tsserve_flush_batches_total{Hostname="h"} 4',
      ]);
      expect(logs).to.deep.equal([
        'metrics: worker w0 sent datapoints for Requests2XX, which is not a model metric; workers record model metrics only: ' +
          'they are dropped (forbidden_metric); further ones are only counted',
        'metrics: worker w0: bad-name cannot be auto-detected: name "bad-name" is not a valid Prometheus metric name ' +
          '([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "bad_name"; its datapoints are dropped (invalid_name)',
      ]);
    } finally {
      await fm.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
