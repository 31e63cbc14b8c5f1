import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { MetricsConfig } from '../../../schema/types.js';
import type { ModelConfig } from '../../../schema/worker-protocol.js';
import { WorkerPool } from '../../../frontend/workers/worker-pool.js';
import type { WorkerPoolDeps } from '../../../frontend/workers/worker-pool.js';
import { recordingLog } from '../log/recording-log.js';
import { FakeClock } from '../../support/fake-clock.js';
import { StartGate } from '../../../frontend/workers/start-gate.js';
import { until } from '../../support/until.js';

const ENTRY = path.join(import.meta.dirname, 'fixtures', 'echo-worker.js');
const METRICS: MetricsConfig = {
  file: '',
  modes: [],
  autoDetect: false,
  metrics: [],
  statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
  limits: { maxSeriesPerMetric: 100, maxPointsPerFlush: 100 },
};

function model(over: Partial<ModelConfig> = {}): ModelConfig {
  return {
    name: 'm',
    version: '1.0',
    dir: import.meta.dirname,
    handler: 'onnx',
    modelFile: 'x',
    batchSize: 1,
    maxBatchDelayMs: 0,
    minWorkers: 2,
    maxWorkers: 4,
    responseTimeoutSec: 10,
    threads: 1,
    ...over,
  };
}

function deps(events: string[]): WorkerPoolDeps {
  let port = 9000;
  return {
    entry: ENTRY,
    metrics: METRICS,
    nextWorkerPort: () => port++,
    ingest: { handle: () => false, forget: () => undefined },
    onOtherMessage: () => undefined,
    onWorkerGone: (id) => events.push(`gone ${id}`),
    onWorkerLoaded: (id, ms) => events.push(`loaded ${id} ${ms}`),
    log: recordingLog([]),
    backoffBaseMs: 20,
  };
}

describe('WorkerPool', () => {
  it('should start minWorkers named W-<port>-<model>_<version> and record each load time', async () => {
    const events: string[] = [];
    const pool = new WorkerPool(model(), deps(events));
    await pool.start();
    try {
      expect(pool.workers().map((w) => [w.id, w.status])).to.deep.equal([
        ['W-9000-m_1.0', 'READY'],
        ['W-9001-m_1.0', 'READY'],
      ]);
      expect([...events].sort()).to.deep.equal(['loaded W-9000-m_1.0 5', 'loaded W-9001-m_1.0 5']); // they load concurrently
      const w = pool.idleWorker();
      const { result: r } = await w!.runBatch([{ requestId: 'r1', body: 7 }]);
      expect(r.responses).to.deep.equal([{ ok: true, body: { echo: 7, batch: 1, worker: w!.id, pid: w!.pid } }]);
    } finally {
      await pool.stop();
    }
    expect(pool.workers()).to.deep.equal([]);
    expect(events.filter((e) => e.startsWith('gone')).sort()).to.deep.equal(['gone W-9000-m_1.0', 'gone W-9001-m_1.0']);
  });

  it('should announce each worker to the ingest with the automatic labels of its init message before it loads', async () => {
    const events: string[] = [];
    const pool = new WorkerPool(model(), {
      ...deps(events),
      autoLabels: { hostname: 'h', replica: '1' },
      ingest: {
        handle: () => false,
        forget: () => undefined,
        started: (id, labels) => void events.push(`starting ${id} ${JSON.stringify(labels)}`),
      },
    });
    await pool.start();
    await pool.stop();
    expect(events.filter((e) => !e.startsWith('gone')).sort()).to.deep.equal([
      'loaded W-9000-m_1.0 5',
      'loaded W-9001-m_1.0 5',
      'starting W-9000-m_1.0 {"hostname":"h","replica":"1"}',
      'starting W-9001-m_1.0 {"hostname":"h","replica":"1"}',
    ]);
    expect(events.indexOf('starting W-9000-m_1.0 {"hostname":"h","replica":"1"}')).to.be.below(
      events.indexOf('loaded W-9000-m_1.0 5'),
    );
  });

  it('should replace a killed worker with a new process and reject the batch it held', async () => {
    const events: string[] = [];
    const pool = new WorkerPool(model({ minWorkers: 1 }), deps(events));
    await pool.start();
    try {
      const w = pool.idleWorker()!;
      const oldPid = w.pid;
      const lost = await w.runBatch([{ requestId: 'r', body: 'crash' }]).then(
        () => 'answered',
        (e: Error) => e.message,
      );
      expect(lost).to.equal('worker W-9000-m_1.0 exited (code 3)');
      await until(() => pool.readyCount === 1, {
        message: 'one READY worker',
        observe: () => pool.workers().map((x) => [x.id, x.status]),
      });
      const ws = pool.workers();
      expect(ws.map((x) => x.id)).to.deep.equal(['W-9001-m_1.0']);
      expect(ws[0].pid).to.not.equal(oldPid);
      expect(events).to.deep.equal(['loaded W-9000-m_1.0 5', 'gone W-9000-m_1.0', 'loaded W-9001-m_1.0 5']);
    } finally {
      await pool.stop();
    }
  });

  // Regression: its death was handled on the child's 'close', which waits for stdout and stderr
  // to close too; a process the worker started that shares them held the dead worker READY
  // (its batch pending, no replacement) for as long as that process lived.
  it('should replace a killed worker whose stdout and stderr a process it started holds open', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-pool-helper-'));
    const pidFile = path.join(dir, 'helper.pid');
    const logs: string[] = [];
    const pool = new WorkerPool(model({ minWorkers: 1, handlerOptions: { helperPidFile: pidFile, delayMs: 60_000 } }), {
      ...deps([]),
      log: recordingLog(logs),
    });
    await pool.start();
    try {
      const w = pool.idleWorker()!;
      const held = w.runBatch([{ requestId: 'r', body: 'x' }], undefined).then(
        () => 'answered',
        (e: Error) => e.message,
      );
      process.kill(w.pid!, 'SIGKILL');
      await until(() => pool.readyCount === 1 && pool.workers()[0]?.id !== w.id, {
        message: 'a READY replacement',
        timeoutMs: 10_000,
        observe: () => pool.workers().map((x) => [x.id, x.status]),
      });
      expect(await held).to.equal('worker W-9000-m_1.0 exited (signal SIGKILL)');
      expect(pool.workers().map((x) => x.id)).to.deep.equal(['W-9001-m_1.0']);
      expect(logs.filter((l) => l.includes('stdout and stderr'))).to.deep.equal([
        'warn: worker W-9000-m_1.0 exited (signal SIGKILL) and its IPC channel closed, but its stdout and stderr are still open 1000 ms later (a process it started holds them): handled as gone {"worker":"W-9000-m_1.0","model":"m"}',
      ]);
    } finally {
      for (const pid of fs
        .readFileSync(pidFile, 'utf8')
        .split('\n')
        .filter((l) => l !== '')) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      await pool.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should scale up and down to the requested worker count', async () => {
    const pool = new WorkerPool(model({ minWorkers: 1 }), deps([]));
    await pool.start();
    try {
      await pool.scale(3, 4);
      expect(pool.workers().length).to.equal(3);
      expect(pool.minWorkers).to.equal(3);
      await pool.scale(1, 4);
      expect(pool.workers().length).to.equal(1);
      expect(pool.maxWorkers).to.equal(4);
    } finally {
      await pool.stop();
    }
  });

  it('should not log a scale-down as a worker death nor schedule a restart (regression)', async () => {
    const logs: string[] = [];
    const clock = new FakeClock();
    const pool = new WorkerPool(model({ minWorkers: 3 }), { ...deps([]), clock, log: recordingLog(logs) });
    await pool.start();
    try {
      await pool.scale(1, 4); // resolves after the retired workers' exit events have been handled
      expect(clock.pending).to.equal(0); // no restart armed
      expect(pool.workers().length).to.equal(1);
      expect(logs.filter((l) => !l.startsWith('info: '))).to.deep.equal([]);
      expect(pool.lastError).to.equal(null);
    } finally {
      await pool.stop();
    }
  });

  it('should be unavailable, with the reason, when the model fails to load', async () => {
    const pool = new WorkerPool(model({ minWorkers: 1, handlerOptions: { failLoad: true } }), deps([]));
    await pool.start();
    try {
      expect(pool.unavailable).to.equal(true);
      expect(pool.lastError).to.equal('worker W-9000-m_1.0 failed to load: told to fail');
    } finally {
      await pool.stop();
    }
  });
});

describe('WorkerPool (hard edges)', () => {
  it("should record a load time that is not a duration as 0 (the IPC channel is the handler's too)", async () => {
    for (const loadTimeMs of ['soon', -1, null]) {
      const events: string[] = [];
      const pool = new WorkerPool(model({ minWorkers: 1, handlerOptions: { loadTimeMs } }), deps(events));
      await pool.start();
      await pool.stop();
      expect(events).to.deep.equal(['loaded W-9000-m_1.0 0', 'gone W-9000-m_1.0']);
    }
  });

  it('should start workers through the start gate, at most its limit loading at once', async () => {
    const gate = new StartGate(2);
    const pool = new WorkerPool(model({ minWorkers: 1 }), { ...deps([]), startGate: gate });
    await pool.start();
    try {
      await pool.scale(5, 5);
      expect(pool.workers().map((w) => w.status)).to.deep.equal(['READY', 'READY', 'READY', 'READY', 'READY']);
      expect([gate.peak, gate.held]).to.deep.equal([2, 0]);
    } finally {
      await pool.stop();
    }
  });

  it('should kill a worker that does not load within the load timeout and report it as the load failure', async () => {
    const logs: string[] = [];
    const pool = new WorkerPool(model({ minWorkers: 1, handlerOptions: { neverReady: true } }), {
      ...deps([]),
      log: recordingLog(logs),
      loadTimeoutMs: 300,
      clock: new FakeClock(),
    });
    await pool.start();
    try {
      expect(pool.unavailable).to.equal(true);
      expect(pool.lastError).to.equal(
        'worker W-9000-m_1.0 did not load within the model load timeout of 0.3 s; killed',
      );
      await until(() => pool.workers().length === 0, {
        message: 'the killed worker to exit',
        observe: () => pool.workers(),
      });
      expect(logs.filter((l) => l.startsWith('error: '))).to.deep.equal([
        'error: worker W-9000-m_1.0 did not load within the model load timeout of 0.3 s; killed {"worker":"W-9000-m_1.0","model":"m"}',
      ]);
    } finally {
      await pool.stop();
    }
  });

  it('should kill a worker whose batch outlives responseTimeout, fail the batch with the reason and replace the worker', async () => {
    const events: string[] = [];
    const pool = new WorkerPool(
      model({ minWorkers: 1, responseTimeoutSec: 0.3, handlerOptions: { delayMs: 60_000 } }),
      deps(events),
    );
    await pool.start();
    try {
      const w = pool.idleWorker()!;
      // At the deadline, before the kill: alive, but no longer offered a batch (it would only fail with it).
      const atDeadline = new Promise<unknown[]>((resolve) =>
        w.once('overdue', () => resolve([w.alive, w.canTake, pool.idleWorker()])),
      );
      const lost = await w.runBatch([{ requestId: 'r', body: 1 }]).then(
        () => 'answered',
        (e: Error) => e.message,
      );
      expect(await atDeadline).to.deep.equal([true, false, null]);
      expect(lost).to.equal('worker W-9000-m_1.0: a batch outlived responseTimeout 0.3 s; killed (it is replaced)');
      await until(() => pool.readyCount === 1, { message: 'a replacement worker', observe: () => pool.workers() });
      expect(pool.workers().map((x) => x.id)).to.deep.equal(['W-9001-m_1.0']);
      expect(events).to.deep.equal(['loaded W-9000-m_1.0 5', 'gone W-9000-m_1.0', 'loaded W-9001-m_1.0 5']);
    } finally {
      await pool.stop();
    }
  });
});

describe('WorkerProcess (answers a worker must never give)', () => {
  it('should answer a malformed result 500 naming the worker, drop extra responses and unknown batches, count each by reason, and log each kind once a minute', async () => {
    const lines: string[] = [];
    const counted: string[] = [];
    const clock = new FakeClock();
    const pool = new WorkerPool(model({ minWorkers: 1 }), {
      ...deps([]),
      log: recordingLog(lines),
      clock,
      faultCounter: (m, reason) => ({ record: (n) => counted.push(`${m} ${reason} ${n}`) }),
    });
    await pool.start();
    try {
      const w = pool.idleWorker()!;
      const answers: unknown[] = [];
      for (const body of ['short', 'short', 'short', 'extra', 'forge', 'ok'])
        answers.push((await w.runBatch([{ requestId: 'r', body }])).result.responses);
      clock.advance(60_000);
      answers.push((await w.runBatch([{ requestId: 'r', body: 'short' }])).result.responses);
      const short = [
        {
          ok: false,
          status: 500,
          message:
            'worker W-9000-m_1.0 sent 0 responses for a batch of 1 requests; they cannot be matched to the requests',
        },
      ];
      const echo = (body: string): unknown => [
        { ok: true, body: { echo: body, batch: 1, worker: 'W-9000-m_1.0', pid: w.pid } },
      ];
      expect(answers).to.deep.equal([
        short,
        short,
        short,
        [
          {
            ok: false,
            status: 500,
            message:
              'worker W-9000-m_1.0 sent 3 responses for a batch of 1 requests; they cannot be matched to the requests',
          },
        ],
        echo('forge'),
        echo('ok'),
        short,
      ]);
      expect(counted).to.deep.equal([
        'm malformed_result 1',
        'm malformed_result 1',
        'm malformed_result 1',
        'm extra_response 2',
        'm unknown_batch 1',
        'm malformed_result 1',
      ]);
      const bindings = ' {"worker":"W-9000-m_1.0","model":"m"}';
      expect(lines.filter((l) => l.startsWith('error: '))).to.deep.equal([
        'error: worker W-9000-m_1.0 sent a malformed result for batch 1: 0 responses for a batch of 1 requests (further ones are logged at most once a minute; all are counted in tsserve_worker_output_faults_total{reason="malformed_result"})' +
          bindings,
        'error: worker W-9000-m_1.0 sent a malformed result for batch 4: 3 responses for a batch of 1 requests (further ones are logged at most once a minute; all are counted in tsserve_worker_output_faults_total{reason="extra_response"})' +
          bindings,
        'error: worker W-9000-m_1.0 sent a result for batch 1005, which is not in flight at it; dropped (further ones are logged at most once a minute; all are counted in tsserve_worker_output_faults_total{reason="unknown_batch"})' +
          bindings,
        'error: worker W-9000-m_1.0 sent a malformed result for batch 7: 0 responses for a batch of 1 requests (2 more like it in the last 60 s were only counted)' +
          bindings,
      ]);
    } finally {
      await pool.stop();
    }
  });

  it('should count a worker log line cut at 64 KiB as log_line_truncated, the line saying how much was cut', async () => {
    const lines: string[] = [];
    const counted: string[] = [];
    const pool = new WorkerPool(model({ minWorkers: 1 }), {
      ...deps([]),
      log: recordingLog(lines),
      faultCounter: (m, reason) => ({ record: (n) => counted.push(`${m} ${reason} ${n}`) }),
    });
    await pool.start();
    try {
      await pool.idleWorker()!.runBatch([{ requestId: 'r', body: 'longline' }]);
      await until(() => counted.length > 0, { message: 'the truncated line counted', observe: () => counted });
      const cut = lines.filter((l) => l.startsWith('info: z'));
      expect([counted, cut.length, cut[0]!.slice(65_536 + 'info: '.length)]).to.deep.equal([
        ['m log_line_truncated 1'],
        1,
        '… (4464 more characters dropped: a worker log line is kept to 65536) {"worker":"W-9000-m_1.0","model":"m","stream":"stdout"}',
      ]);
    } finally {
      await pool.stop();
    }
  });
});

describe('WorkerProcess (batches sent ahead)', () => {
  it('should hand the metrics flush a result carries to the ingest, by the time the batch is answered', async () => {
    const handed: unknown[] = [];
    const pool = new WorkerPool(model({ minWorkers: 1, handlerOptions: { carryMetrics: true } }), {
      ...deps([]),
      ingest: { handle: (id, msg) => handed.push([id, msg]) > 0, forget: () => undefined },
    });
    await pool.start();
    try {
      const w = pool.idleWorker()!;
      const seenAtAnswer = await w
        .runBatch([{ requestId: 'a', body: 1 }])
        .then((r) => [r.result.batchId, handed.slice()]);
      expect(seenAtAnswer).to.deep.equal([1, [[w.id, { type: 'tsserve.metrics', batchId: 1 }]]]);
    } finally {
      await pool.stop();
    }
  });

  it('should announce a worker to the ingest before its fork, hand it metrics straight, pass only what it refuses to onOtherMessage, and forget the worker after its exit', async () => {
    const seen: string[] = [];
    const pool = new WorkerPool(model({ minWorkers: 1, handlerOptions: { carryMetrics: true } }), {
      ...deps([]),
      ingest: {
        started: (id, labels) => void seen.push(`started ${id} ${JSON.stringify(labels)}`),
        handle: (id, msg) => {
          const metrics = (msg as { type?: unknown }).type === 'tsserve.metrics';
          seen.push(`ingest ${metrics ? 'took' : 'refused'} ${id} ${JSON.stringify(msg)}`);
          return metrics;
        },
        forget: (id) => void seen.push(`forget ${id}`),
      },
      onOtherMessage: (id, msg) => void seen.push(`other ${id} ${JSON.stringify(msg)}`),
      onWorkerGone: (id) => void seen.push(`gone ${id}`),
      autoLabels: { Hostname: 'h1' },
    });
    await pool.start();
    await pool.idleWorker()!.runBatch([{ requestId: 'a', body: 'other' }]);
    await pool.stop();
    const w = 'W-9000-m_1.0';
    expect(seen).to.deep.equal([
      `started ${w} {"Hostname":"h1"}`,
      `ingest refused ${w} {"type":"other.message","batchId":1}`,
      `other ${w} {"type":"other.message","batchId":1}`,
      `ingest took ${w} {"type":"tsserve.metrics","batchId":1}`,
      `gone ${w}`,
      `forget ${w}`,
    ]);
  });

  it('should accept a second batch while the first runs, answer both in order, and refuse a third', async () => {
    const pool = new WorkerPool(model({ minWorkers: 1, handlerOptions: { delayMs: 50 } }), deps([]));
    await pool.start();
    try {
      const w = pool.idleWorker()!;
      const first = w.runBatch([{ requestId: 'a', body: 1 }]);
      expect(pool.idleWorker()).to.equal(w);
      const second = w.runBatch([{ requestId: 'b', body: 2 }]);
      expect(w.canTake).to.equal(false);
      expect(pool.idleWorker()).to.equal(null);
      const third = await w.runBatch([{ requestId: 'c', body: 3 }]).then(
        () => 'sent',
        (e: Error) => e.message,
      );
      expect(third).to.equal('worker W-9000-m_1.0 is BUSY with 2 batch(es) in flight');
      const [r1, r2] = await Promise.all([first, second]);
      expect(
        [r1.result.responses, r2.result.responses].map((r) => (r[0] as { body: { echo: number } }).body.echo),
      ).to.deep.equal([1, 2]);
      expect(w.status).to.equal('READY');
    } finally {
      await pool.stop();
    }
  });
});
