/** Valid files: TorchServe's own files load unchanged; normalization and defaults are exact. */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { MetricsConfig } from '../../../schema/types.js';
import {
  buildMetricsConfig,
  defaultMetricsConfigPath,
  formatProblem,
  loadMetricsConfig,
  parseMetricsConfig,
} from '../../../schema/config/load.js';

/** Copies of TorchServe's own metrics.yaml files (test/fixtures/torchserve/), kept in the repo so a clone is self-contained. */
const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'torchserve');
const VALID = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'metrics', 'valid');

function mustLoad(file: string): MetricsConfig {
  const r = loadMetricsConfig(file);
  if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
  return r.config;
}

describe('loadMetricsConfig (valid files)', () => {
  it("should load TorchServe's default metrics.yaml unchanged", () => {
    const file = path.join(SHARED, 'torchserve-default-metrics.yaml');
    const c = mustLoad(file);
    expect(c.metrics.map((m) => m.name)).to.deep.equal([
      'Requests2XX',
      'Requests4XX',
      'Requests5XX',
      'ts_inference_requests_total',
      'ts_inference_latency_microseconds',
      'ts_queue_latency_microseconds',
      'QueueTime',
      'WorkerThreadTime',
      'WorkerLoadTime',
      'CPUUtilization',
      'MemoryUsed',
      'MemoryAvailable',
      'MemoryUtilization',
      'DiskUsage',
      'DiskUtilization',
      'DiskAvailable',
      'GPUMemoryUtilization',
      'GPUMemoryUsed',
      'GPUUtilization',
      'HandlerTime',
      'PredictionTime',
    ]);
    expect(c.metrics[0]).to.deep.equal({
      name: 'Requests2XX',
      section: 'ts_metrics',
      type: 'counter',
      unit: 'Count',
      dimensions: ['Level'],
      hostLabel: 'Hostname',
      help: 'Requests2XX',
      buckets: [],
      pos: { line: 10, col: 7 },
    });
    expect(c.metrics[3]).to.deep.equal({
      name: 'ts_inference_requests_total',
      section: 'ts_metrics',
      type: 'counter',
      unit: 'Count',
      dimensions: ['model_name', 'model_version'],
      hostLabel: 'hostname',
      help: 'ts_inference_requests_total',
      buckets: [],
      pos: { line: 19, col: 7 },
    });
    expect(c.metrics[8]?.dimensions).to.deep.equal(['WorkerName', 'Level']);
    expect(c.metrics[19]).to.deep.equal({
      name: 'HandlerTime',
      section: 'model_metrics',
      type: 'gauge',
      unit: 'ms',
      dimensions: ['ModelName', 'Level'],
      hostLabel: 'Hostname',
      help: 'HandlerTime',
      buckets: [],
      pos: { line: 73, col: 7 },
    });
    expect(c.modes).to.deep.equal(['tslog', 'prometheus']);
    expect(c.statsd).to.deep.equal({
      host: '127.0.0.1',
      port: 8125,
      prefix: '',
      tagStyle: 'datadog',
      histogramType: 'h',
    });
    expect(c.limits).to.deep.equal({
      maxSeriesPerMetric: 10000,
      maxPointsPerFlush: 65536,
      maxAutoDetectedMetrics: 100,
      maxDimensionsPerMetric: 16,
    });
    expect(c.autoDetect).to.equal(false);
    expect(c.file).to.equal(file);
  });

  it("should load TorchServe's custom-metrics example (free-form units, empty dimensions)", () => {
    const file = path.join(SHARED, 'torchserve-custom-metrics-example.yaml');
    const c = mustLoad(file);
    expect(c.metrics.length).to.equal(27);
    const byName = new Map(c.metrics.map((m) => [m.name, m]));
    expect(byName.get('InferenceRequestCount')).to.deep.equal({
      name: 'InferenceRequestCount',
      section: 'model_metrics',
      type: 'counter',
      unit: 'count',
      dimensions: [],
      hostLabel: 'Hostname',
      help: 'InferenceRequestCount',
      buckets: [],
      pos: { line: 73, col: 7 },
    });
    expect(byName.get('PostprocessCallCount')?.unit).to.equal('CallCount');
    expect(byName.get('SizeOfImage')?.unit).to.equal('kB');
  });

  it('should return a deeply frozen, JSON-clean config', () => {
    const c = mustLoad(path.join(VALID, 'extended.yaml'));
    expect(Object.isFrozen(c)).to.equal(true);
    expect(Object.isFrozen(c.metrics)).to.equal(true);
    expect(Object.isFrozen(c.metrics[0]?.buckets)).to.equal(true);
    expect(JSON.parse(JSON.stringify(c))).to.deep.equal(c);
  });

  it('should apply every extension of the format exactly', () => {
    const c = mustLoad(path.join(VALID, 'extended.yaml'));
    expect(c.modes).to.deep.equal(['tslog', 'statsd']);
    expect(c.statsd).to.deep.equal({
      host: 'agent.local',
      port: 9125,
      prefix: 'tsserve.',
      tagStyle: 'telegraf',
      histogramType: 'd',
    });
    expect(c.limits).to.deep.equal({
      maxSeriesPerMetric: 50,
      maxPointsPerFlush: 65536,
      maxAutoDetectedMetrics: 100,
      maxDimensionsPerMetric: 16,
    });
    expect(c.autoDetect).to.equal(true);
    expect(c.metrics.map((m) => [m.name, m.type, m.buckets.join(',')])).to.deep.equal([
      ['TokensPerRequest', 'histogram', '1,2,5,10,20,50,100,200,500,1000,2000,5000,10000'],
      ['StepTime', 'histogram', '1,2.5,5,10,25,50,100,250,500,1000,2500,5000,10000,30000,60000'],
      [
        'StepTimeUs',
        'histogram',
        '100,250,500,1000,2500,5000,10000,25000,50000,100000,250000,500000,1000000,2500000,10000000',
      ],
      ['WallSeconds', 'histogram', '0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5,5,10,30,60'],
      ['Utilization', 'histogram', '5,10,20,30,40,50,60,70,80,90,95,99,100'],
      ['Fanout', 'histogram', '1,2,5,10,20'],
      ['Explicit', 'histogram', '0.5,1,4'],
      ['Odd', 'histogram', '0.001,0.01,0.1,0.25,0.5,1,2.5,5,10,25,50,100,250,500,1000,10000,100000'],
      ['Calls', 'counter', ''],
      ['OldCalls', 'counter', ''],
      ['ModelCalls', 'counter', ''],
    ]);
    const byName = new Map(c.metrics.map((m) => [m.name, m]));
    expect(byName.get('TokensPerRequest')?.help).to.equal('Tokens generated per request.');
    expect(byName.get('StepTime')?.help).to.equal('StepTime');
    expect(byName.get('OldCalls')?.help).to.equal('(Deprecated: use Calls instead.) Calls, old name.');
    expect(byName.get('Calls')).to.deep.equal({
      name: 'Calls',
      section: 'ts_metrics',
      type: 'counter',
      unit: 'Count',
      dimensions: [],
      hostLabel: null,
      help: 'Calls',
      buckets: [],
      pos: { line: 33, col: 7 },
    });
    expect(byName.get('ModelCalls')).to.deep.equal({
      name: 'ModelCalls',
      section: 'model_metrics',
      type: 'counter',
      unit: 'Count',
      dimensions: ['ModelName'],
      hostLabel: 'hostname',
      help: 'ModelCalls',
      buckets: [],
      pos: { line: 42, col: 7 },
    });
    expect(byName.get('Odd')?.pos).to.deep.equal({ line: 30, col: 7 });
  });

  it('should accept a mode string that is a comma list, in any case, with blanks', () => {
    const r = parseMetricsConfig('mode: " LOG , Prometheus,tslog"\n', 'inline.yaml');
    expect(r.ok && r.config.modes).to.deep.equal(['tslog', 'prometheus']);
  });

  it('should accept empty sections and type lists, and a metric without dimensions', () => {
    const r = parseMetricsConfig(
      'ts_metrics:\nmodel_metrics:\n  gauge:\n    - {name: G, unit: ms}\n  counter:\n',
      'inline.yaml',
    );
    expect(r.ok && r.config.metrics.map((m) => [m.name, m.dimensions.length, m.hostLabel])).to.deep.equal([
      ['G', 0, 'Hostname'],
    ]);
  });

  it('should accept a file with only a mapping and no metrics', () => {
    const r = parseMetricsConfig('{}\n', 'inline.yaml');
    expect(r.ok && r.config.metrics.length).to.equal(0);
  });

  it('should accept CRLF line endings and report positions on the right lines', () => {
    const r = parseMetricsConfig(
      'ts_metrics:\r\n  counter:\r\n    - name: A\r\n      unit: Count\r\n      dimensions: Level\r\n',
      'crlf.yaml',
    );
    expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
      'crlf.yaml:5:19: metric "A" in ts_metrics.counter: "dimensions" must be a list, not "Level"',
    ]);
  });

  it('should point at the item of a flow list and at keys of flow mappings', () => {
    const r = parseMetricsConfig(
      'model_metrics: {gauge: [{name: A, unit: ms, dimensions: [X, X]}], summary: []}\n',
      'flow.yaml',
    );
    expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
      'flow.yaml:1:61: metric "A" in model_metrics.gauge: dimension "X" listed twice; remove the duplicate',
      'flow.yaml:1:67: model_metrics: unknown metric type "summary"; use counter, gauge or histogram (summaries are not supported; declare a histogram)',
    ]);
  });

  it('should report statsd, limits and type problems with their field names', () => {
    const text = [
      'statsd: {host: "", port: 70000, tag_style: dog, extra: 1}',
      'limits: {max_series_per_metric: 0, max_points_per_flush: 1.5}',
      'model_metrics_auto_detect: yes',
      'mode: []',
      '',
    ].join('\n');
    const r = parseMetricsConfig(text, 'x.yaml');
    expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
      'x.yaml:1:16: statsd: "host" is empty; give it a value',
      'x.yaml:1:26: statsd: "port" must be at most 65535, not 70000',
      'x.yaml:1:44: statsd: "tag_style" must be one of datadog, telegraf, none, not "dog"',
      'x.yaml:1:49: statsd: unknown field "extra"; remove it (allowed: host, port, prefix, tag_style, histogram_type)',
      'x.yaml:2:33: limits: "max_series_per_metric" must be at least 1, not 0',
      'x.yaml:2:58: limits: "max_points_per_flush" must be a whole number, not 1.5',
      'x.yaml:3:28: "model_metrics_auto_detect" must be true or false, not "yes"',
      'x.yaml:4:7: mode: the list is empty; use tslog (alias log), prometheus or statsd, or remove mode: for the default [tslog, prometheus]',
    ]);
  });

  it('should load limits at their ceilings (limits-too-high.yaml has the refusals)', () => {
    const atCeiling = parseMetricsConfig(
      'limits: {max_series_per_metric: 1000000, max_points_per_flush: 1048576, max_auto_detected_metrics: 10000, max_dimensions_per_metric: 64}\n',
      'y.yaml',
    );
    expect(atCeiling.ok ? atCeiling.config.limits : atCeiling.problems.map(formatProblem)).to.deep.equal({
      maxSeriesPerMetric: 1000000,
      maxPointsPerFlush: 1048576,
      maxAutoDetectedMetrics: 10000,
      maxDimensionsPerMetric: 64,
    });
  });

  it('should reject a top level that is not a mapping', () => {
    const r = parseMetricsConfig('- a\n', 'list.yaml');
    expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
      'list.yaml:1:1: the top level must be a mapping (keys such as ts_metrics:, model_metrics:), not a list',
    ]);
    // A file that is not YAML at all (a scalar of 200 characters) is quoted by its first 60.
    const text = `${'word '.repeat(40)}`;
    const t = parseMetricsConfig(text, 'text.yaml');
    expect(t.ok ? [] : t.problems.map(formatProblem)).to.deep.equal([
      `text.yaml:1:1: the top level must be a mapping (keys such as ts_metrics:, model_metrics:), not "${'word '.repeat(12)}"… (199 characters)`,
    ]);
  });
});

describe('buildMetricsConfig', () => {
  it('should validate a JS object and print problems without positions', () => {
    const r = buildMetricsConfig({ ts_metrics: { counter: [{ name: 'a-b' }] } });
    expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
      '<config>: metric "a-b" in ts_metrics.counter: missing "unit"; add it (e.g. unit: Count, unit: Milliseconds or unit: Percent)',
      '<config>: metric "a-b" in ts_metrics.counter: name "a-b" is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "a_b"',
    ]);
  });

  it('should build a config with pos null and file as given', () => {
    const r = buildMetricsConfig({ model_metrics: { counter: [{ name: 'C', unit: 'Count' }] } });
    expect(r.ok && r.config.metrics[0]).to.deep.equal({
      name: 'C',
      section: 'model_metrics',
      type: 'counter',
      unit: 'Count',
      dimensions: [],
      hostLabel: 'Hostname',
      help: 'C',
      buckets: [],
      pos: null,
    });
    expect(r.ok && r.config.file).to.equal('');
  });
});

describe('defaultMetricsConfigPath', () => {
  it('should point at the repo root metrics.yaml', () => {
    expect(defaultMetricsConfigPath()).to.equal(
      path.resolve(import.meta.dirname, '..', '..', '..', '..', 'metrics.yaml'),
    );
  });
});

describe('loadMetricsConfig (temp files)', () => {
  it('should report a file holding only comments as empty', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-cfg-'));
    try {
      const file = path.join(dir, 'm.yaml');
      fs.writeFileSync(file, '# nothing here\n');
      const r = loadMetricsConfig(file);
      expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
        `${file}:1:1: the file is empty (no YAML document); declare ts_metrics: and/or model_metrics: (start from the repo's metrics.yaml)`,
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
