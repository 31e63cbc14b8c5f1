/**
 * FrontSupervisor over real front processes (node:cluster, the compiled front entry) serving no
 * model: how a front is replaced and stopped.
 */
import { expect } from 'chai';
import cluster from 'cluster';
import type { Worker } from 'cluster';
import { FrontIngest } from '../../../frontend/cluster/front-ingest.js';
import { FrontSupervisor } from '../../../frontend/cluster/front-supervisor.js';
import { bodyLimits } from '../../../frontend/http/body-limits.js';
import type { Log } from '../../../frontend/log/log.js';
import type { MetricsPort } from '../../../frontend/server/metrics-port.js';

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

function supervisor(lines: string[]): FrontSupervisor {
  const log = recordingLog(lines);
  return new FrontSupervisor({
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
});
