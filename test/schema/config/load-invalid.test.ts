/** One fixture per invalid configuration, named after its failure; asserts the exact lines. */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { formatProblem, loadMetricsConfig, MAX_CONFIG_BYTES, parseMetricsConfig } from '../../../schema/config/load.js';
import { MAX_BUCKETS } from '../../../schema/config/presets.js';

// Runs from dist/test/schema/config; fixtures stay in the source tree.
const DIR = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'metrics', 'invalid');

/** Expected `FILE:LINE:COL: message` lines, with FILE relative to the fixture folder. */
const EXPECTED: Readonly<Record<string, readonly string[]>> = {
  'bad-dimension-name': [
    'bad-dimension-name.yaml:2:5: dimensions: dimension "__internal" is not a valid dimension name (names starting with __ are reserved by Prometheus), e.g. "internal"',
    'bad-dimension-name.yaml:7:20: metric "Requests" in ts_metrics.counter: dimension "model-name" is not a valid label name (use letters, digits and _, not starting with a digit), e.g. "model_name"',
  ],
  'bad-metric-name': [
    'bad-metric-name.yaml:3:13: metric "my-metric" in ts_metrics.counter: name "my-metric" is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "my_metric"',
  ],
  'buckets-not-numbers': [
    'buckets-not-numbers.yaml:7:11: metric "Latency" in model_metrics.histogram: bucket "ten" is not a number; write plain numbers such as 0.5 or 100',
  ],
  'buckets-repeated': [
    'buckets-repeated.yaml:5:23: metric "Latency" in model_metrics.histogram: bucket 5 listed twice; remove the duplicate',
  ],
  'buckets-unsorted': [
    'buckets-unsorted.yaml:5:24: metric "Latency" in model_metrics.histogram: buckets must be in increasing order, but 5 comes after 10; sort the list',
  ],
  'duplicate-central-dimension': [
    'duplicate-central-dimension.yaml:4:5: dimensions: "Level" is declared twice (first at line 3); remove the duplicate',
  ],
  'duplicate-metric-dimension': [
    'duplicate-metric-dimension.yaml:9:28: metric "Requests2XX" in ts_metrics.counter: dimension "Level" listed twice; remove the duplicate',
  ],
  'duplicate-metric-name': [
    'duplicate-metric-name.yaml:7:13: metric "Foo" in model_metrics.gauge: name already used by the metric in ts_metrics.counter at line 3; names must be unique across the file (any section, any type), rename one',
    'duplicate-metric-name.yaml:10:13: metric "Foo" in model_metrics.histogram: name already used by the metric in ts_metrics.counter at line 3; names must be unique across the file (any section, any type), rename one',
  ],
  'empty-file': [
    "empty-file.yaml:1:1: the file is empty (no YAML document); declare ts_metrics: and/or model_metrics: (start from the repo's metrics.yaml)",
  ],
  'empty-name': [
    'empty-name.yaml:3:13: metric #1 in model_metrics.gauge: "name" is empty; give the metric a name matching [a-zA-Z_:][a-zA-Z0-9_:]*',
  ],
  'hostname-not-last': [
    'hostname-not-last.yaml:8:20: metric "QueueTime" in ts_metrics.gauge: dimension "Hostname" must be the last one (the hostname is filled in automatically and rendered last); move it to the end of the list',
  ],
  'metrics-format': [
    'metrics-format.yaml:1:1: unknown top-level key "metrics_format"; it was removed in TorchServe 0.8 (a config.properties option, never a metrics.yaml key) and is not read; use mode: prometheus (or tslog, statsd)',
  ],
  'missing-name': [
    'missing-name.yaml:5:7: metric #2 in ts_metrics.counter: missing "name"; add it (e.g. name: MyMetric)',
  ],
  'missing-unit': [
    'missing-unit.yaml:3:7: metric "HandlerTime" in model_metrics.gauge: missing "unit"; add it (e.g. unit: Count, unit: Milliseconds or unit: Percent)',
  ],
  'reserved-name': [
    'reserved-name.yaml:3:13: metric "tsserve_dropped_points" in ts_metrics.counter: names starting with "tsserve_" are reserved for tsserve\'s self-metrics; rename it (e.g. "dropped_points")',
  ],
  'self-metric-changed': [
    'self-metric-changed.yaml:5:13: metric "tsserve_series" in tsserve_metrics.counter: the server records it as a gauge, not a counter; move it under tsserve_metrics.gauge: (a self-metric\'s type, unit and dimensions are fixed by the server; only its help may differ, and the built-in help is shown)',
    'self-metric-changed.yaml:10:19: metric "tsserve_sink_errors_total" in tsserve_metrics.counter: dimensions must be ["sink", "Hostname"], not ["Hostname"] (a self-metric\'s type, unit and dimensions are fixed by the server; only its help may differ, and the built-in help is shown)',
    'self-metric-changed.yaml:13:13: metric "tsserve_flush_batches_total" in tsserve_metrics.counter: unit must be Count, not "Batches" (a self-metric\'s type, unit and dimensions are fixed by the server; only its help may differ, and the built-in help is shown)',
  ],
  'self-metric-unknown': [
    'self-metric-unknown.yaml:5:13: metric "tsserve_flush_batches_totl" in tsserve_metrics.counter: not a self-metric of this server; did you mean "tsserve_flush_batches_total"? declare a metric of your own under ts_metrics: (without the tsserve_ prefix)',
    'self-metric-unknown.yaml:11:7: metric "tsserve_front_restarts_total" in tsserve_metrics.counter: "hidden" cannot be set on a self-metric; remove it (a self-metric\'s type, unit and dimensions are fixed by the server; only its help may differ, and the built-in help is shown)',
    'self-metric-unknown.yaml:12:13: metric "tsserve_front_restarts_total" in tsserve_metrics.counter: declared twice in tsserve_metrics (first at line 8); remove one',
  ],
  'several-problems': [
    'several-problems.yaml:8:20: metric "Requests2XX" in ts_metrics.counter: dimension "Hostname" must be the last one (the hostname is filled in automatically and rendered last); move it to the end of the list',
    'several-problems.yaml:9:7: metric "Requests2XX" in ts_metrics.counter: missing "unit"; add it (e.g. unit: Count, unit: Milliseconds or unit: Percent)',
    'several-problems.yaml:9:13: metric "Requests2XX" in ts_metrics.counter: name already used by the metric in ts_metrics.counter at line 6; names must be unique across the file (any section, any type), rename one',
    'several-problems.yaml:11:3: ts_metrics: unknown metric type "summary"; use counter, gauge or histogram (summaries are not supported; declare a histogram)',
    'several-problems.yaml:14:13: metric "bad name" in model_metrics.histogram: name "bad name" is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "bad_name"',
    'several-problems.yaml:16:20: metric "bad name" in model_metrics.histogram: buckets must be in increasing order, but 1 comes after 5; sort the list',
    'several-problems.yaml:17:7: mode: unknown mode "carrier-pigeon"; use tslog (alias log), prometheus or statsd',
  ],
  'limits-too-high': [
    'limits-too-high.yaml:3:26: limits: "max_series_per_metric" must be at most 1000000, not 1000000000000; each series is held in every sink and rendered on every scrape; a dimension with more values than that (a request id, a user id) is unbounded: drop it from the metric',
    'limits-too-high.yaml:4:25: limits: "max_points_per_flush" must be at most 1048576, not 9007199254740992; a worker buffers this many datapoints (12 bytes each) before it flushes, and holds as many while the IPC channel is congested',
    'limits-too-high.yaml:5:30: limits: "max_auto_detected_metrics" must be at most 10000, not 10001; each is a family in every sink; declare the metrics you keep in metrics.yaml',
    'limits-too-high.yaml:6:30: limits: "max_dimensions_per_metric" must be at most 64, not 65; each dimension is a label on every series, log line and StatsD packet; fold what varies into fewer labels',
  ],
  'merge-not-on-gauge': [
    'merge-not-on-gauge.yaml:5:14: metric "Requests" in ts_metrics.counter: "merge" only applies to gauges (counters and histograms always sum across processes); remove it',
    'merge-not-on-gauge.yaml:10:7: metric "Latency" in model_metrics.histogram: unknown field "merge"; merge only applies to gauges (counters and histograms always sum); remove it',
  ],
  'merge-unknown-mode': [
    'merge-unknown-mode.yaml:5:14: metric "Running" in ts_metrics.gauge: unknown merge mode "livesumm"; did you mean "livesum"? Modes: livelast, livesum, livemax, livemin, last, sum, max, min',
  ],
  'undefined-alias': [
    'undefined-alias.yaml:8:28: undefined alias "*hostname": no anchor &hostname is defined above it; declare it in the top-level dimensions list (e.g. - &hostname "Name") or fix the spelling',
  ],
  'unknown-bucket-preset': [
    'unknown-bucket-preset.yaml:5:16: metric "Latency" in model_metrics.histogram: unknown bucket preset "latency_msec"; did you mean "latency_ms"? Presets: latency_ms, latency_us, latency_s, percent, ratio, bytes, count_1_2_5, count_pow2, generic, vllm_ttft, vllm_itl, vllm_request_latency, vllm_iteration_tokens, vllm_params_n',
  ],
  'unknown-field': [
    'unknown-field.yaml:5:7: metric "QueueTime" in ts_metrics.gauge: unknown field "description"; use help: for the description',
    'unknown-field.yaml:6:7: metric "QueueTime" in ts_metrics.gauge: unknown field "buckets"; buckets only apply to histograms; remove it or move the metric under histogram:',
  ],
  'unknown-mode': [
    'unknown-mode.yaml:1:20: mode: unknown mode "graphite"; use tslog (alias log), prometheus or statsd',
  ],
  'unknown-top-level-key': [
    'unknown-top-level-key.yaml:3:1: unknown top-level key "metrics_mode"; use mode: (e.g. mode: prometheus) in metrics.yaml',
  ],
  'unknown-type': [
    'unknown-type.yaml:2:3: model_metrics: unknown metric type "summary"; use counter, gauge or histogram (summaries are not supported; declare a histogram)',
  ],
  'unreadable-directory': [
    'unreadable-directory.yaml:1:1: cannot read the file: it is a directory; pass the path of a metrics.yaml file',
  ],
  'yaml-syntax': [
    'yaml-syntax.yaml:5:6: YAML syntax error: bad indentation of a sequence entry; the file must be valid YAML',
  ],
  // Regression: a newline in a quoted name split a problem over two lines, and could forge a third.
  'control-characters': [
    'control-characters.yaml:3:13: metric "x\\ny: z" in model_metrics.counter: name "x\\ny: z" is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "x_y:_z"',
    'control-characters.yaml:5:20: metric "x\\ny: z" in model_metrics.counter: dimension "a\\nfake.yaml:9:9: forged" is not a valid label name (use letters, digits and _, not starting with a digit), e.g. "a_fake_yaml_9_9__forged"',
    'control-characters.yaml:5:48: metric "x\\ny: z" in model_metrics.counter: dimension "b\\u0000\\t\\u2028" is not a valid label name (use letters, digits and _, not starting with a digit), e.g. "b___"',
  ],
  // Regression: these loaded, and promtool failed on the scrape: "second HELP line for metric name".
  'exposition-name-clash': [
    'exposition-name-clash.yaml:5:13: metric "Foo_total" in model_metrics.counter: its name "Foo_total" is also the OpenMetrics _total series of counter "Foo" (line 3) in the Prometheus exposition, where a scrape fails on a name two families claim; rename one of them',
    'exposition-name-clash.yaml:8:13: metric "Bar" in model_metrics.histogram: its _bucket series "Bar_bucket" is also the name of gauge "Bar_bucket" (line 13) in the Prometheus exposition, where a scrape fails on a name two families claim; rename one of them',
    'exposition-name-clash.yaml:8:13: metric "Bar" in model_metrics.histogram: its _count series "Bar_count" is also the name of gauge "Bar_count" (line 11) in the Prometheus exposition, where a scrape fails on a name two families claim; rename one of them',
  ],
  // Regression: ten nested anchors (10^9 strings once expanded) took the loader 30 s, or crashed it
  // with "RangeError: Invalid string length" instead of a problem.
  'alias-bomb': [
    'alias-bomb.yaml:7:45: YAML alias "*a3" brings in 11111 nodes, and all aliases together more than 100000 (a file of nested aliases, an "alias bomb", would exhaust memory); write the lists out, and keep anchors for names and small mappings',
  ],
  // Regression: a Latin-1 file loaded, its é read as U+FFFD, and "# HELP HandlerTime Temps d�ex�cution" was served.
  'not-utf8': [
    'not-utf8.yaml:6:21: the file is not valid UTF-8: the byte here is not (Latin-1 or Windows-1252?); save the file as UTF-8',
  ],
  // Regression: a duplicated key was a "YAML syntax error" that stopped the load: it was the only problem reported.
  'duplicate-key': [
    'duplicate-key.yaml:5:7: metric "PredictionTime" in model_metrics.gauge: key "name" is given twice in this mapping (first at line 3), and YAML keeps one; remove one',
    'duplicate-key.yaml:6:13: metric "bad-name" in model_metrics.gauge: name "bad-name" is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "bad_name"',
    'duplicate-key.yaml:9:7: metric "bad-name" in model_metrics.gauge: key "dimensions" is given twice in this mapping (first at line 8), and YAML keeps one; remove one',
  ],
  'file-missing': [
    'file-missing.yaml:1:1: cannot read the file: no such file; check the path (or pass --metrics-config FILE)',
  ],
};

function problemLines(file: string): string[] {
  const result = loadMetricsConfig(path.join(DIR, file));
  if (result.ok) return [];
  return result.problems.map((p) => formatProblem(p).slice(DIR.length + 1));
}

describe('loadMetricsConfig (invalid files)', () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`should report ${name} exactly`, () => {
      expect(problemLines(`${name}.yaml`)).to.deep.equal(expected);
    });
  }

  // Regression: a 10 MB file (168430 metrics) loaded, in 2.5 s and 750 MB, and started a server
  // holding every one of them in each worker; a file of gigabytes was read whole before any check.
  describe('reading the file (its size, its encoding)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-big-'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    // Entries of one length (`    - {name: M000042, unit: ms}`), then comment padding up to `bytes`.
    const HEAD = 'model_metrics:\n  gauge:\n';
    const entry = (i: number): string => `    - {name: M${String(i).padStart(6, '0')}, unit: ms}\n`;
    const count = (bytes: number): number => Math.floor((bytes - HEAD.length - 2) / entry(0).length);
    const text = (bytes: number): string => {
      const body = Array.from({ length: count(bytes) }, (_, i) => entry(i)).join('');
      return `${HEAD}${body}#`.padEnd(bytes, '#');
    };

    it('should be MAX_CONFIG_BYTES = 1 MiB (a Kubernetes ConfigMap holds no more)', () => {
      expect(MAX_CONFIG_BYTES).to.equal(1024 * 1024);
    });

    it('should refuse it at 1:1, saying how big it is, without parsing it', () => {
      const file = path.join(dir, 'big.yaml');
      fs.writeFileSync(file, text(10 * 1024 * 1024));
      const r = loadMetricsConfig(file);
      expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
        `${file}:1:1: the file is 10485760 bytes; a metrics.yaml may be at most 1048576 (1 MiB): declare the metrics you record, not one per value (a dimension tells series apart)`,
      ]);
    });

    it('should load one of exactly MAX_CONFIG_BYTES', () => {
      const file = path.join(dir, 'edge.yaml');
      fs.writeFileSync(file, text(MAX_CONFIG_BYTES));
      const r = loadMetricsConfig(file);
      expect([fs.statSync(file).size, r.ok ? r.config.metrics.length : r.problems.map(formatProblem)]).to.deep.equal([
        MAX_CONFIG_BYTES,
        count(MAX_CONFIG_BYTES),
      ]);
    });

    it('should refuse a device without a size after reading one byte past it (/dev/zero never ends)', () => {
      const r = loadMetricsConfig('/dev/zero');
      expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
        '/dev/zero:1:1: the file holds more than 1048576 bytes (1 MiB), the most a metrics.yaml may be: declare the metrics you record, not one per value (a dimension tells series apart)',
      ]);
    });

    it('should place a byte that is not UTF-8 after a byte-order mark and a character of three bytes', () => {
      const file = path.join(dir, 'bom.yaml');
      fs.writeFileSync(
        file,
        Buffer.concat([Buffer.from('\uFEFF# €'), Buffer.from([0xff]), Buffer.from('\nmodel_metrics: {}\n')]),
      );
      const r = loadMetricsConfig(file);
      expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
        `${file}:1:4: the file is not valid UTF-8: the byte here is not (Latin-1 or Windows-1252?); save the file as UTF-8`,
      ]);
    });

    // Regression: PowerShell 5's `>` writes UTF-16; such a file was "not UTF-8 (Latin-1 or Windows-1252?)".
    it('should name a UTF-16 file as such, by its byte-order mark', () => {
      const file = path.join(dir, 'utf16.yaml');
      fs.writeFileSync(file, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('model_metrics: {}\n', 'utf16le')]));
      const r = loadMetricsConfig(file);
      expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
        `${file}:1:1: the file is UTF-16 (it starts with a UTF-16 byte-order mark; PowerShell 5's > writes it); save the file as UTF-8`,
      ]);
    });

    it('should refuse text over it given to parseMetricsConfig, counting UTF-8 bytes', () => {
      const r = parseMetricsConfig(`model_metrics: {}\n#${'é'.repeat(MAX_CONFIG_BYTES / 2)}`, 'x.yaml');
      expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
        'x.yaml:1:1: the file is 1048595 bytes; a metrics.yaml may be at most 1048576 (1 MiB): declare the metrics you record, not one per value (a dimension tells series apart)',
      ]);
    });
  });

  // Regression: `mode: off` (the start flag's word) and a misspelt sink got only the list of sinks.
  it("should say that off is the start flag's, and guess a misspelt sink", () => {
    const lines = (text: string): string[] => {
      const r = parseMetricsConfig(text, 'm.yaml');
      return r.ok ? [] : r.problems.map(formatProblem);
    };
    expect([...lines('mode: off\n'), ...lines('mode: [promethues, NONE]\n')]).to.deep.equal([
      'm.yaml:1:7: mode: unknown mode "off"; metrics are switched off by the start flag --metrics-mode off, not here; use tslog (alias log), prometheus or statsd',
      'm.yaml:1:8: mode: unknown mode "promethues"; did you mean "prometheus"? use tslog (alias log), prometheus or statsd',
      'm.yaml:1:20: mode: unknown mode "NONE"; metrics are switched off by the start flag --metrics-mode off, not here; use tslog (alias log), prometheus or statsd',
    ]);
  });

  // Regression: a unit of blanks loaded and was logged as `A.   :1.0`; only "" was refused.
  it('should refuse a unit of blanks as it refuses an empty one', () => {
    const r = parseMetricsConfig(
      'model_metrics:\n  gauge:\n    - {name: A, unit: "   "}\n    - {name: B, unit: ""}\n',
      'u.yaml',
    );
    expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
      'u.yaml:3:23: metric "A" in model_metrics.gauge: "unit" holds only blanks; write the unit, e.g. Count, Milliseconds or Percent',
      'u.yaml:4:23: metric "B" in model_metrics.gauge: "unit" is empty; write the unit, e.g. Count, Milliseconds or Percent',
    ]);
  });

  // Regression: a list of 100000 bounds loaded (each series then renders 100001 lines per scrape),
  // and the same list in descending order gave 99999 problem lines.
  it('should refuse more than MAX_BUCKETS bounds in one problem, without checking each', () => {
    expect(MAX_BUCKETS).to.equal(256);
    const list = (n: number, down = false): string =>
      Array.from({ length: n }, (_, i) => (down ? n - i : i + 1)).join(', ');
    const text = (n: number, down = false): string =>
      `model_metrics:\n  histogram:\n    - {name: H, unit: ms, buckets: [${list(n, down)}]}\n`;
    const lines = (t: string): string[] => {
      const r = parseMetricsConfig(t, 'b.yaml');
      return r.ok ? [] : r.problems.map(formatProblem);
    };
    expect([...lines(text(256)), ...lines(text(100_000, true))]).to.deep.equal([
      'b.yaml:3:36: metric "H" in model_metrics.histogram: "buckets" has 100000 bounds, more than 256 (every series renders a line per bound in each scrape); keep the bounds that tell latencies apart',
    ]);
  });

  it('should refuse a metric or dimension name over 256 characters, the bound auto-detection keeps too', () => {
    const r = parseMetricsConfig(
      `model_metrics:\n  gauge:\n    - {name: ${'A'.repeat(257)}, unit: ms, dimensions: [${'d'.repeat(257)}]}\n`,
      'n.yaml',
    );
    expect(
      r.ok ? [] : r.problems.map((p) => formatProblem(p).replace(/([Ad])\1{9,}/g, (m) => `${m[0]}*${m.length}`)),
    ).to.deep.equal([
      'n.yaml:3:14: metric "A*257" in model_metrics.gauge: name has 257 characters, more than 256; shorten it',
      'n.yaml:3:296: metric "A*257" in model_metrics.gauge: dimension 1 has 257 characters, more than 256; shorten it',
    ]);
  });

  it('should have a test for every fixture in the folder', () => {
    const files = fs
      .readdirSync(DIR)
      .map((f) => f.replace(/\.yaml$/, ''))
      .sort();
    expect(files).to.deep.equal(
      Object.keys(EXPECTED)
        .filter((n) => n !== 'file-missing')
        .sort(),
    );
  });
});
