/**
 * A REAL Prometheus running the shipped deploy/haproxy/prometheus.yml (file-based service
 * discovery) and the rules it loads, copied into a temp dir with a 1 s scrape interval, its
 * targets file written here.
 */
import * as fs from 'fs';
import * as path from 'path';
import { ROOT, tempDir } from './harness.js';
import { startPrometheus } from './prometheus.js';
import type { Prometheus } from './prometheus.js';

/** The shipped config the test runs. */
export const PROMETHEUS_SD_CFG = path.join(ROOT, 'deploy', 'haproxy', 'prometheus.yml');

/** A running Prometheus with file-based discovery. */
export interface PrometheusSd extends Prometheus {
  /** Rewrites the targets file (Prometheus re-reads it on change): metrics `HOST:PORT`s. */
  setTargets(targets: readonly string[]): void;
}

/** Starts Prometheus on a free port over `targets`. */
export async function startPrometheusSd(targets: readonly string[]): Promise<PrometheusSd> {
  const dir = tempDir('prom-sd');
  const cfg = fs.readFileSync(PROMETHEUS_SD_CFG, 'utf8');
  if (!cfg.includes('  scrape_interval: 15s\n'))
    throw new Error(`${PROMETHEUS_SD_CFG}: no 'scrape_interval: 15s' line to shorten`);
  fs.mkdirSync(path.join(dir, 'targets'));
  // The shipped config loads the generated rules from beside it; without the copy Prometheus
  // would start with none and the test would not know.
  fs.copyFileSync(path.join(path.dirname(PROMETHEUS_SD_CFG), 'tsserve.rules.yml'), path.join(dir, 'tsserve.rules.yml'));
  const setTargets = (t: readonly string[]): void => {
    // Written whole, then renamed: Prometheus never reads half a file.
    const tmp = path.join(dir, 'targets.tmp');
    fs.writeFileSync(tmp, JSON.stringify([{ targets: t, labels: { service: 'tsserve' } }], null, 2) + '\n');
    fs.renameSync(tmp, path.join(dir, 'targets', 'tsserve.json'));
  };
  setTargets(targets);
  // The shipped file names its targets directory relatively: it is read from `dir`.
  const prom = await startPrometheus(dir, cfg.replace('  scrape_interval: 15s\n', '  scrape_interval: 1s\n'));
  return {
    ...prom,
    setTargets,
    stop: (): void => {
      prom.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
