/**
 * A REAL Prometheus running the shipped deploy/haproxy/prometheus.yml (file-based service
 * discovery), copied into a temp dir with a 1 s scrape interval, its targets file written here.
 */
import { spawn } from 'child_process';
import type { ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { freePort, ROOT, tempDir } from './harness.js';
import { until } from '../support/until.js';

/** The shipped config the test runs. */
export const PROMETHEUS_SD_CFG = path.join(ROOT, 'deploy', 'haproxy', 'prometheus.yml');

/** One series of an instant query's answer. */
export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: readonly [number, string];
}

/** A running Prometheus with file-based discovery. */
export interface PrometheusSd {
  readonly url: string;
  /** Rewrites the targets file (Prometheus re-reads it on change): metrics `HOST:PORT`s. */
  setTargets(targets: readonly string[]): void;
  /** An instant query through /api/v1/query; throws unless Prometheus answers `success`. */
  query(promql: string): Promise<PromSample[]>;
  stop(): void;
}

/** Starts Prometheus on a free port over `targets`. */
export async function startPrometheusSd(targets: readonly string[]): Promise<PrometheusSd> {
  const dir = tempDir('prom-sd');
  const cfg = fs.readFileSync(PROMETHEUS_SD_CFG, 'utf8');
  if (!cfg.includes('  scrape_interval: 15s\n')) throw new Error(`${PROMETHEUS_SD_CFG}: no 'scrape_interval: 15s' line to shorten`);
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), cfg.replace('  scrape_interval: 15s\n', '  scrape_interval: 1s\n'));
  fs.mkdirSync(path.join(dir, 'targets'));
  const setTargets = (t: readonly string[]): void => {
    // Written whole, then renamed: Prometheus never reads half a file.
    const tmp = path.join(dir, 'targets.tmp');
    fs.writeFileSync(tmp, JSON.stringify([{ targets: t, labels: { service: 'tsserve' } }], null, 2) + '\n');
    fs.renameSync(tmp, path.join(dir, 'targets', 'tsserve.json'));
  };
  setTargets(targets);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc: ChildProcess = spawn('prometheus', [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore', detached: true });
  const stop = (): void => {
    try { process.kill(-(proc.pid as number), 'SIGKILL'); } catch { /* gone */ }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const query = async (promql: string): Promise<PromSample[]> => {
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: PromSample[] } };
    if (body.status !== 'success' || body.data === undefined) throw new Error(`prometheus: ${promql}: ${body.error ?? body.status}`);
    return body.data.resultType === 'vector' ? body.data.result : [];
  };
  try {
    await until(async () => {
      if (proc.exitCode !== null) throw new Error('prometheus exited during start-up');
      try { return (await fetch(`${url}/-/ready`)).status === 200; } catch { return false; }
    }, { message: 'prometheus /-/ready', timeoutMs: 30_000 });
  } catch (err) {
    stop();
    throw err;
  }
  return { url, setTargets, query, stop };
}
