/**
 * The self-metrics' section, `tsserve_metrics:` (schema/config/self-section.ts): the bundled
 * metrics.yaml's is the built-in declaration, a file without the section still gets every
 * self-metric, and a file carrying it may change the help only (the built-in help is shown).
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  defaultMetricsConfigPath,
  formatProblem,
  loadMetricsConfig,
  parseMetricsConfig,
} from '../../../schema/config/load.js';
import { builtInSelfSpecs } from '../../../schema/config/self-section.js';
import { SELF_METRICS } from '../../../schema/metric-catalog.js';
import type { MetricsConfig } from '../../../schema/types.js';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..');
const TORCHSERVE = path.join(ROOT, 'test', 'fixtures', 'torchserve', 'torchserve-default-metrics.yaml');
const REPO_TEXT = fs.readFileSync(defaultMetricsConfigPath(), 'utf8');

/** The `# TYPE` and `# HELP` lines of the self-metrics in a server's exposition built from `config`. */
async function selfExposition(config: MetricsConfig): Promise<string[]> {
  const fm = new FrontendMetrics(config, {
    logDir: os.tmpdir(),
    hostname: 'h',
    modes: ['prometheus'],
    log: () => undefined,
  });
  try {
    const text = await fm.prometheusText();
    return text.split('\n').filter((l) => /^# (TYPE|HELP) tsserve_/.test(l));
  } finally {
    await fm.close();
  }
}

function mustLoad(text: string, file: string): MetricsConfig {
  const r = parseMetricsConfig(text, file);
  if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
  return r.config;
}

describe('tsserve_metrics (the self-metrics section)', () => {
  it("should give a metrics.yaml without the section (TorchServe's default) all 12 self-metrics, each of its type", async () => {
    const r = loadMetricsConfig(TORCHSERVE);
    if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
    expect(REPO_TEXT.includes('\ntsserve_metrics:\n')).to.equal(true);
    expect(fs.readFileSync(TORCHSERVE, 'utf8').includes('tsserve_metrics')).to.equal(false);
    const types = (await selfExposition(r.config)).filter((l) => l.startsWith('# TYPE'));
    expect(types).to.deep.equal([
      '# TYPE tsserve_datapoints_dropped_total counter',
      '# TYPE tsserve_series gauge',
      '# TYPE tsserve_series_overflow_total counter',
      '# TYPE tsserve_flush_batches_total counter',
      '# TYPE tsserve_flush_datapoints_total counter',
      '# TYPE tsserve_sink_errors_total counter',
      '# TYPE tsserve_worker_restarts_total counter',
      '# TYPE tsserve_front_restarts_total counter',
      '# TYPE tsserve_requests_refused_total counter',
      '# TYPE tsserve_worker_output_faults_total counter',
      '# TYPE tsserve_log_errors_total counter',
      '# TYPE tsserve_cache_evictions_total counter',
    ]);
  });

  it('should load a copy of the bundled file whose self-metric has a help of its own, and show the built-in help', async () => {
    const own = REPO_TEXT.replace(
      'help: "Datapoints dropped instead of recorded, by reason"',
      'help: "Our own words for the drops"',
    );
    expect(own).to.not.equal(REPO_TEXT);
    const shown = await selfExposition(mustLoad(own, 'own-help.yaml'));
    expect(shown.filter((l) => l.includes('tsserve_datapoints_dropped_total'))).to.deep.equal([
      '# HELP tsserve_datapoints_dropped_total Datapoints dropped instead of recorded, by reason (unit: Count)',
      '# TYPE tsserve_datapoints_dropped_total counter',
    ]);
  });

  it('should refuse a copy of the bundled file whose self-metric changed a dimension, naming the file, line and column', () => {
    const changed = REPO_TEXT.replace(
      'dimensions: ["reason", *hostname]\n      help: "Datapoints dropped',
      'dimensions: ["cause", *hostname]\n      help: "Datapoints dropped',
    );
    expect(changed).to.not.equal(REPO_TEXT);
    const line = changed.split('\n').findIndex((l) => l.includes('["cause", *hostname]')) + 1;
    const r = parseMetricsConfig(changed, 'changed.yaml');
    expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
      `changed.yaml:${line}:19: metric "tsserve_datapoints_dropped_total" in tsserve_metrics.counter: dimensions must be ["reason", "Hostname"], not ["cause", "Hostname"] (a self-metric's type, unit and dimensions are fixed by the server; only its help may differ, and the built-in help is shown)`,
    ]);
  });

  it('should refuse to start from a bundled file whose section lacks a self-metric or declares an unknown one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-self-'));
    try {
      const file = path.join(dir, 'metrics.yaml');
      fs.writeFileSync(
        file,
        REPO_TEXT.replace('- name: tsserve_flush_batches_total', '- name: tsserve_flush_batch_total'),
      );
      expect(() => builtInSelfSpecs(file, SELF_METRICS)).to.throw(
        `${file}: tsserve_metrics lacks [tsserve_flush_batches_total] and declares unknown [tsserve_flush_batch_total]; the bundled ${file} declares the self-metrics (its tsserve_metrics: section); restore it from the release`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
