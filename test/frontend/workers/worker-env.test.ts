/** workerEnv: the environment a worker is forked with (its id, and malloc on huge pages). */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { workerEnv } from '../../../frontend/workers/worker-env.js';
import { WorkerPool } from '../../../frontend/workers/worker-pool.js';
import type { MetricsConfig } from '../../../schema/types.js';
import { recordingLog } from '../log/recording-log.js';

describe('workerEnv', () => {
  it('should add the worker id and glibc.malloc.hugetlb=1 to an environment without GLIBC_TUNABLES', () => {
    expect(workerEnv({ PATH: '/bin' }, 'W-1')).to.deep.equal({
      PATH: '/bin',
      TS_WORKER_ID: 'W-1',
      GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1',
    });
  });

  it('should append the tunable after the tunables the environment sets', () => {
    expect(workerEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, 'W-1').GLIBC_TUNABLES).to.equal(
      'glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1',
    );
  });

  it('should keep a glibc.malloc.hugetlb the environment sets, and add none with TS_WORKER_HUGE_PAGES=0', () => {
    expect(workerEnv({ GLIBC_TUNABLES: 'glibc.malloc.hugetlb=0' }, 'W-1').GLIBC_TUNABLES).to.equal(
      'glibc.malloc.hugetlb=0',
    );
    expect(workerEnv({ TS_WORKER_HUGE_PAGES: '0' }, 'W-1')).to.deep.equal({
      TS_WORKER_HUGE_PAGES: '0',
      TS_WORKER_ID: 'W-1',
    });
  });

  it('should be the environment of a forked worker process (read back from /proc/PID/environ)', async () => {
    const metrics: MetricsConfig = {
      file: '',
      modes: [],
      autoDetect: false,
      metrics: [],
      statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
      limits: { maxSeriesPerMetric: 100, maxPointsPerFlush: 100 },
    };
    const pool = new WorkerPool(
      {
        name: 'm',
        version: '1.0',
        dir: import.meta.dirname,
        handler: 'onnx',
        modelFile: 'x',
        batchSize: 1,
        maxBatchDelayMs: 0,
        minWorkers: 1,
        maxWorkers: 1,
        responseTimeoutSec: 10,
        threads: 1,
      },
      {
        entry: path.join(import.meta.dirname, 'fixtures', 'echo-worker.js'),
        metrics,
        nextWorkerPort: () => 9100,
        ingest: { handle: () => false, forget: () => undefined },
        onOtherMessage: () => undefined,
        onWorkerGone: () => undefined,
        onWorkerLoaded: () => undefined,
        log: recordingLog([]),
      },
    );
    await pool.start();
    try {
      const pid = pool.workers()[0]!.pid!;
      const env = new Map(
        fs
          .readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .filter((e) => e !== '')
          .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)] as const),
      );
      const want = workerEnv(process.env, 'W-9100-m_1.0');
      expect([env.get('TS_WORKER_ID'), env.get('GLIBC_TUNABLES')]).to.deep.equal(['W-9100-m_1.0', want.GLIBC_TUNABLES]);
    } finally {
      await pool.stop();
    }
  });
});
