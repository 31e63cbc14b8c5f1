/** `tsserve metrics validate|list`, run as a real process through bin/tsserve.js. */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { defaultMetricsConfigPath, loadMetricsConfig } from '../../schema/config/load.js';

// Runs from dist/test/tools.
const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const BIN = path.join(ROOT, 'bin', 'tsserve.js');

/** How many metrics the repo's metrics.yaml declares (others add metrics; the count is not pinned). */
function repoMetricCount(): number {
  const r = loadMetricsConfig(defaultMetricsConfigPath());
  if (!r.ok) throw new Error('the repo metrics.yaml does not load');
  return r.config.metrics.length;
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function tsserve(...args: string[]): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tsserve metrics validate', () => {
  it("should accept TorchServe's default metrics.yaml", () => {
    const file = path.join(ROOT, 'test', 'fixtures', 'torchserve', 'torchserve-default-metrics.yaml');
    expect(tsserve('metrics', 'validate', file)).to.deep.equal({
      code: 0,
      stdout: `${file}: OK (21 metrics)\n`,
      stderr: '',
    });
  });

  it("should accept the repo's metrics.yaml", () => {
    expect(tsserve('metrics', 'validate', 'metrics.yaml')).to.deep.equal({
      code: 0,
      stdout: `metrics.yaml: OK (${repoMetricCount()} metrics)\n`,
      stderr: '',
    });
  });

  it('should print every problem as FILE:LINE:COL: message on stderr and exit 1', () => {
    const file = 'test/fixtures/metrics/invalid/several-problems.yaml';
    const r = tsserve('metrics', 'validate', file);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    expect(r.stderr.split('\n')).to.deep.equal([
      `${file}:8:20: metric "Requests2XX" in ts_metrics.counter: dimension "Hostname" must be the last one (the hostname is filled in automatically and rendered last); move it to the end of the list`,
      `${file}:9:7: metric "Requests2XX" in ts_metrics.counter: missing "unit"; add it (e.g. unit: Count, unit: Milliseconds or unit: Percent)`,
      `${file}:9:13: metric "Requests2XX" in ts_metrics.counter: name already used by the metric in ts_metrics.counter at line 6; names must be unique across the file (any section, any type), rename one`,
      `${file}:11:3: ts_metrics: unknown metric type "summary"; use counter, gauge or histogram (summaries are not supported; declare a histogram)`,
      `${file}:14:13: metric "bad name" in model_metrics.histogram: name "bad name" is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "bad_name"`,
      `${file}:16:20: metric "bad name" in model_metrics.histogram: buckets must be in increasing order, but 1 comes after 5; sort the list`,
      `${file}:17:7: mode: unknown mode "carrier-pigeon"; use tslog (alias log), prometheus or statsd`,
      '',
    ]);
  });

  it('should refuse what tsserve start refuses: a frontend metric declared with other dimensions (it printed OK)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-validate-'));
    const file = path.join(dir, 'bad2.yaml');
    try {
      const text = fs.readFileSync(path.join(ROOT, 'metrics.yaml'), 'utf8');
      const bad = text.replace('dimensions: [*level, *hostname]', 'dimensions: [*level, *model_name, *hostname]');
      expect(bad).to.not.equal(text);
      fs.writeFileSync(file, bad);
      expect(tsserve('metrics', 'validate', file)).to.deep.equal({
        code: 1,
        stdout: '',
        stderr: `${file}:27:7: metric Requests2XX must have dimensions [Level] (+ the hostname), declared [Level, ModelName]\n`,
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should exit 1 for a missing file', () => {
    expect(tsserve('metrics', 'validate', 'no-such.yaml')).to.deep.equal({
      code: 1,
      stdout: '',
      stderr: 'no-such.yaml:1:1: cannot read the file: no such file; check the path (or pass --metrics-config FILE)\n',
    });
  });

  it('should exit 2 with usage when FILE is missing', () => {
    const r = tsserve('metrics', 'validate');
    expect(r.code).to.equal(2);
    expect(r.stderr.split('\n')[0]).to.equal('tsserve metrics validate: FILE is required');
  });
});

describe('tsserve metrics list', () => {
  it('should print the repo catalog as JSON MetricSpecs by default file', () => {
    const r = tsserve('metrics', 'list', '--format', 'json');
    expect(r.code).to.equal(0);
    const specs = JSON.parse(r.stdout) as { name: string; hostLabel: string | null; buckets: number[] }[];
    expect(specs.length).to.equal(repoMetricCount());
    expect(specs[0]).to.deep.include({ name: 'Requests2XX', hostLabel: 'Hostname', buckets: [] });
  });

  it('should print a table with a header and the hostname marked (auto)', () => {
    const r = tsserve(
      'metrics',
      'list',
      path.join(ROOT, 'test', 'fixtures', 'torchserve', 'torchserve-default-metrics.yaml'),
      '--format=table',
    );
    const lines = r.stdout.split('\n');
    expect(r.code).to.equal(0);
    expect(lines.length).to.equal(23);
    expect(lines[0]?.split(/\s{2,}/)).to.deep.equal([
      'NAME',
      'SECTION',
      'TYPE',
      'UNIT',
      'DIMENSIONS',
      'BUCKETS',
      'HELP',
    ]);
    expect(lines[20]?.split(/\s{2,}/)).to.deep.equal([
      'HandlerTime',
      'model_metrics',
      'gauge',
      'ms',
      'ModelName, Level, Hostname (auto)',
      '-',
      'HandlerTime',
    ]);
  });

  it('should reject an unknown format with exit 2', () => {
    expect(tsserve('metrics', 'list', '--format', 'xml')).to.deep.equal({
      code: 2,
      stdout: '',
      stderr: 'tsserve metrics list: --format must be one of table, json, markdown\n',
    });
  });

  it('should print the same help for --help on each subcommand', () => {
    const a = tsserve('metrics', '--help');
    const b = tsserve('metrics', 'validate', '--help');
    const c = tsserve('metrics', 'list', '--help');
    expect(a.code).to.equal(0);
    expect(a.stdout.split('\n')[0]).to.equal('Usage:');
    expect(b).to.deep.equal(a);
    expect(c).to.deep.equal(a);
  });
});

describe('docs/metrics.md', () => {
  it('should equal `tsserve metrics list --format markdown` (run `npm run docs:metrics` after editing metrics.yaml)', () => {
    const r = tsserve('metrics', 'list', '--format', 'markdown');
    expect(r.code).to.equal(0);
    expect(fs.readFileSync(path.join(ROOT, 'docs', 'metrics.md'), 'utf8')).to.equal(r.stdout);
  });
});
