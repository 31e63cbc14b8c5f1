import { expect } from 'chai';
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GaugeMerge } from '../../../schema/types.js';
import { GAUGE_MERGES } from '../../../schema/types.js';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { MetricsIngest } from '../../../frontend/metrics/ingest.js';
import { config, spec } from '../../backend/metrics/config.js';
import type { GaugeWorkerInit } from './fixtures/gauge-worker.js';

const WORKER = path.join(import.meta.dirname, 'fixtures', 'gauge-worker.js');
const CONFIG = config([
  ...GAUGE_MERGES.map((mode: GaugeMerge) => ({ ...spec(`g_${mode}`, 'gauge', 'Count', ['ModelName']), merge: mode })),
  spec('c_total', 'counter', 'Count', ['ModelName']),
  spec('h_seconds', 'histogram', 'Seconds', ['ModelName']),
]);

/** Forks a real worker that records `value`; resolves once its flush is ingested. */
function startWorker(
  key: string,
  value: number,
  ingest: MetricsIngest,
  children: ChildProcess[],
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = fork(WORKER, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    child.on('message', (m: unknown) => {
      if (ingest.handle(key, m)) return;
      if ((m as { type?: unknown }).type === 'fixture.ready') resolve(child);
    });
    child.on('error', reject);
    // The pool's worker-exit report, as the server wires it.
    child.on('exit', () => ingest.forget(key));
    const init: GaugeWorkerInit = { type: 'fixture.init', config: CONFIG, value };
    child.send(init);
  });
}

/** `name value` of every g_*, c_total and h_seconds_count sample of a text exposition. */
function values(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of text.split('\n')) {
    const m = /^(g_\w+|c_total|h_seconds_count)\{[^}]*\} (\S+)$/.exec(l);
    if (m !== null) out[m[1] as string] = Number(m[2]);
  }
  return out;
}

describe('Gauge merge with real forked workers', () => {
  const children: ChildProcess[] = [];

  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  it('should merge two live workers per mode, then drop a SIGKILLed one in live modes only while counters keep its counts', async () => {
    const fm = new FrontendMetrics(CONFIG, {
      logDir: os.tmpdir(),
      hostname: 'h',
      modes: ['prometheus'],
      log: () => undefined,
    });
    const ingest = new MetricsIngest(fm, { log: () => undefined });
    await startWorker('w1', 3, ingest, children);
    const w2 = await startWorker('w2', 5, ingest, children);
    expect(values(await fm.prometheusText())).to.deep.equal({
      g_livelast: 5,
      g_livesum: 8,
      g_livemax: 5,
      g_livemin: 3,
      g_last: 5,
      g_sum: 8,
      g_max: 5,
      g_min: 3,
      c_total: 2,
      h_seconds_count: 2,
    });

    const exited = new Promise<void>((resolve) => w2.once('exit', () => resolve()));
    w2.kill('SIGKILL');
    await exited;
    expect(values(await fm.prometheusText())).to.deep.equal({
      g_livelast: 3,
      g_livesum: 3,
      g_livemax: 3,
      g_livemin: 3,
      g_last: 5,
      g_sum: 8,
      g_max: 5,
      g_min: 3,
      c_total: 2,
      h_seconds_count: 2,
    });
    await fm.close();
  });
});
