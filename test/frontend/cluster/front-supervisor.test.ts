/**
 * FrontSupervisor over real front processes (node:cluster, the compiled front entry) serving no
 * model: how a front is replaced and stopped.
 */
import { expect } from 'chai';
import cluster from 'cluster';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Worker } from 'cluster';
import { FrontIngest } from '../../../frontend/cluster/front-ingest.js';
import { FrontSupervisor } from '../../../frontend/cluster/front-supervisor.js';
import { bodyLimits } from '../../../frontend/http/body-limits.js';
import type { Log } from '../../../frontend/log/log.js';
import type { MetricsPort } from '../../../frontend/server/metrics-port.js';
import { until } from '../../support/until.js';

const NO_METRICS: MetricsPort = {
  prometheusContentType: 'text/plain', modes: [], get: () => null, byKey: () => null,
  prometheusText: () => Promise.resolve(''), close: () => Promise.resolve(),
};

/** A log keeping its lines as `level: message`. */
function recordingLog(lines: string[]): Log {
  const at = (level: string) => (msg: string): void => { lines.push(`${level}: ${msg}`); };
  const log: Log = { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal'), child: () => log, isLevelEnabled: () => true };
  return log;
}

function supervisor(lines: string[], extra: { entry?: string; restartBackoffMs?: number } = {}): FrontSupervisor {
  const log = recordingLog(lines);
  return new FrontSupervisor({
    ...extra,
    count: 1,
    init: { host: '127.0.0.1', port: 0, maxRequestSizeBytes: 1 << 20, bodyLimits: bodyLimits(), headerTimeoutMs: 0, metrics: [], processMetrics: false },
    models: () => ({ models: [], health: { ping: 'Healthy', serving: true } }),
    lookup: () => undefined,
    ingest: new FrontIngest(NO_METRICS, log, undefined),
    log,
  });
}

describe('FrontSupervisor', function () {
  this.timeout(60_000);

  it('should stop a front it is still starting (a replacement) at once, not kill it after 15 s (regression: SIGTERM right after a front died took 17 s and SIGKILLed the new one)', async () => {
    const lines: string[] = [];
    const sup = supervisor(lines);
    await sup.start();
    const first = Object.values(cluster.workers ?? {})[0] as Worker;
    const exits: string[] = [];
    cluster.on('exit', (w, code, signal) => exits.push(`${w === first ? 'first' : 'replacement'} ${signal ?? `code ${code}`}`));
    // The supervisor's own 'exit' listener came first: the replacement is forked when this one runs.
    const stopped = new Promise<void>((resolve) => first.once('exit', () => { void sup.stop().then(resolve); }));
    first.process.kill('SIGKILL');
    await stopped;
    expect(exits).to.deep.equal(['first SIGKILL', 'replacement code 0']);
    expect(lines).to.deep.equal([`error: front process ${first.process.pid} exited (SIGKILL); starting another (restart 1)`]);
  });

  it('should start a front that died before it listened again after a doubling backoff, not at once in a loop (regression: a front failing at start was forked again and again, as fast as it could die)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'front-sup-'));
    const dies = path.join(dir, 'dies.cjs');
    fs.writeFileSync(dies, 'process.exit(3);\n');
    const lines: string[] = [];
    const sup = supervisor(lines, { restartBackoffMs: 5 });
    try {
      await sup.start();
      // From now on a new front fails at once (as a broken install would).
      cluster.setupPrimary({ exec: dies });
      const first = Object.values(cluster.workers ?? {})[0] as Worker;
      first.process.kill('SIGKILL');
      await until(() => lines.length >= 4, { message: 'four restarts', observe: () => lines });
      await sup.stop();
      expect(lines.slice(0, 4).map((l) => l.replace(/process \d+/, 'process P'))).to.deep.equal([
        'error: front process P exited (SIGKILL); starting another (restart 1)',
        'error: front process P exited before it listened (code 3); starting another in 5 ms (restart 2)',
        'error: front process P exited before it listened (code 3); starting another in 10 ms (restart 3)',
        'error: front process P exited before it listened (code 3); starting another in 20 ms (restart 4)',
      ]);
    } finally {
      await sup.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should fail its start with the exit of a front that never listened, and start none again (the server stops)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'front-sup-'));
    const entry = path.join(dir, 'dies.cjs');
    fs.writeFileSync(entry, 'process.exit(3);\n');
    const lines: string[] = [];
    const sup = supervisor(lines, { entry });
    try {
      const refused = await sup.start().then(() => 'started', (e: unknown) => String(e).replace(/\d{2,}/, 'P'));
      expect([refused, lines, sup.restarts]).to.deep.equal(['Error: front process P exited before listening (code 3)', [], 0]);
    } finally {
      await sup.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
