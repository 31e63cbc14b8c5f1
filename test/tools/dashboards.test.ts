/**
 * The generated Grafana dashboards: the committed tools/grafana/*.json equal a regenerate, the
 * JSON has Grafana's shape, queries follow the yaml's names (a rename changes them, a removal
 * drops the panels), custom and unknown families get panels by type, and the pipelines
 * dashboard says so when the yaml declares no pipeline family.
 */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { FrontendMetrics } from '../../frontend/metrics/frontend-metrics.js';
import { defaultMetricsConfigPath, loadMetricsConfig, parseMetricsConfig } from '../../schema/config/load.js';
import type { MetricsConfig } from '../../schema/types.js';
import { dashboardQueries } from '../../tools/dashboards/grafana.js';
import { renderDashboards } from '../../tools/dashboards/render.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const BIN = path.join(ROOT, 'bin', 'tsserve.js');
/** The vLLM profile: `vllm:gpu_cache_usage_perc` and `vllm:time_per_output_token_seconds` are hidden in 0.1 and shown with --show-hidden-metrics-for-version 0.0. */
const VLLM_YAML = path.join(ROOT, 'metrics-vllm.yaml');
/**
 * The repo's metrics.yaml without its pipeline (`ts_omni_*`) families: each entry's lines, from
 * its `- name:` to the next entry or list, dropped. What the pipeline cases start from.
 */
function withoutPipelineFamilies(text: string): string {
  const out: string[] = [];
  let skipping = false;
  for (const line of text.split('\n')) {
    if (/^ {4}- name: /.test(line) || /^\S|^ {2}\S/.test(line)) skipping = /^ {4}- name: ts_omni_/.test(line);
    if (!skipping) out.push(line);
  }
  return out.join('\n');
}

const REPO_YAML = withoutPipelineFamilies(fs.readFileSync(defaultMetricsConfigPath(), 'utf8'));

interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { h: number; w: number; x: number; y: number };
  readonly datasource?: { type: string; uid: string };
  readonly options?: { content?: string };
  readonly fieldConfig?: { defaults: { unit: string } };
  readonly targets?: ReadonlyArray<{ expr: string; refId: string; format?: string; datasource: { uid: string } }>;
}
interface Dashboard {
  readonly uid: string;
  readonly schemaVersion: number;
  readonly panels: readonly Panel[];
  readonly templating: { list: ReadonlyArray<{ name: string; type: string; query: unknown }> };
}

function config(text: string): MetricsConfig {
  const r = parseMetricsConfig(text, 'metrics.yaml');
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  return r.config;
}

function dashboards(text: string): Record<string, Dashboard> {
  return Object.fromEntries(renderDashboards(config(text)).map((f) => [f.file, JSON.parse(f.text) as Dashboard]));
}

function panel(d: Dashboard, title: string): Panel {
  const p = d.panels.find((x) => x.title === title);
  if (p === undefined) throw new Error(`no panel "${title}" in ${d.uid}: ${d.panels.map((x) => x.title).join(', ')}`);
  return p;
}

/** The repo's metrics.yaml with `entries` put first in the list of one section's type. */
function withEntries(
  section: 'ts_metrics' | 'model_metrics',
  type: 'counter' | 'gauge' | 'histogram',
  entries: string,
): string {
  const start = REPO_YAML.indexOf(`\n${section}:\n`);
  const head = `\n  ${type}:\n`;
  const at = REPO_YAML.indexOf(head, start);
  if (start < 0 || at < 0) throw new Error(`no ${section}.${type} in metrics.yaml`);
  return REPO_YAML.slice(0, at + head.length) + entries + REPO_YAML.slice(at + head.length);
}

/** `text` with `entries` put first in ts_metrics' list of `type`. */
function withEntriesIn(text: string, type: 'counter' | 'gauge' | 'histogram', entries: string): string {
  const head = `\n  ${type}:\n`;
  const at = text.indexOf(head, text.indexOf('\nts_metrics:\n'));
  return text.slice(0, at + head.length) + entries + text.slice(at + head.length);
}

/** A query variable's PromQL (`query.query`); '' for the datasource variable, whose query is a plain type name. */
const variableQuery = (q: unknown): string =>
  typeof q === 'object' && q !== null ? String((q as { query?: unknown }).query ?? '') : '';

describe('tsserve metrics dashboard', () => {
  it('should regenerate exactly the committed tools/grafana/*.json (npm run dashboards rewrites them)', () => {
    const r = loadMetricsConfig(defaultMetricsConfigPath());
    if (!r.ok) throw new Error('the repo metrics.yaml does not load');
    const files = renderDashboards(r.config);
    expect(files.map((f) => f.file)).to.deep.equal([
      'tsserve-serving.json',
      'tsserve-generation.json',
      'tsserve-pipelines.json',
    ]);
    for (const f of files)
      expect(fs.readFileSync(path.join(ROOT, 'tools', 'grafana', f.file), 'utf8'), f.file).to.equal(f.text);
  });

  it('should write the three files with --out and --metrics-config, as the CLI', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-dashboards-'));
    try {
      const r = spawnSync(
        process.execPath,
        [BIN, 'metrics', 'dashboard', '--metrics-config', 'metrics.yaml', '--out', dir],
        { cwd: ROOT, encoding: 'utf8' },
      );
      expect([r.status, r.stderr]).to.deep.equal([0, '']);
      const names = ['tsserve-serving.json', 'tsserve-generation.json', 'tsserve-pipelines.json'];
      expect(r.stdout).to.equal(names.map((n) => `wrote ${path.join(dir, n)}\n`).join(''));
      for (const n of names)
        expect(fs.readFileSync(path.join(dir, n), 'utf8'), n).to.equal(
          fs.readFileSync(path.join(ROOT, 'tools', 'grafana', n), 'utf8'),
        );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should refuse an unknown option with exit 2 and an invalid metrics.yaml with its problems and exit 1', () => {
    const bad = spawnSync(process.execPath, [BIN, 'metrics', 'dashboard', '--outt', 'x'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.match(/^tsserve metrics dashboard: unknown option '--outt'/);
    const invalid = spawnSync(
      process.execPath,
      [
        BIN,
        'metrics',
        'dashboard',
        '--metrics-config',
        'test/fixtures/metrics/invalid/several-problems.yaml',
        '--out',
        os.tmpdir(),
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(invalid.status).to.equal(1);
    expect(invalid.stdout).to.equal('');
    expect(invalid.stderr.split('\n')[0]).to.match(
      /^test\/fixtures\/metrics\/invalid\/several-problems\.yaml:\d+:\d+: /,
    );
    // An --out that cannot be written: one line naming it, exit 1, no stack trace.
    const onFile = spawnSync(process.execPath, [BIN, 'metrics', 'dashboard', '--out', 'package.json'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect([onFile.status, onFile.stdout, onFile.stderr]).to.deep.equal([
      1,
      '',
      'tsserve metrics dashboard: --out: package.json exists and is not a directory (the dashboards are three files)\n',
    ]);
    const rules = spawnSync(process.execPath, [BIN, 'metrics', 'rules', '--out', 'package.json/x.yml'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect([rules.status, rules.stderr]).to.deep.equal([
      1,
      "tsserve metrics rules: ENOTDIR: not a directory, open 'package.json/x.yml'\n",
    ]);
  });

  // Node 20's mkdirSync(dir, {recursive: true}) retries an ENOENT under an existing parent forever;
  // the timeout only turns a regression into a failure instead of a hung suite.
  it('should refuse an --out that cannot be created under /proc with its mkdir error and exit 1 (the command spun at 100% CPU forever)', () => {
    const run = (args: readonly string[]): [number | null, string, string] => {
      const r = spawnSync(process.execPath, [BIN, 'metrics', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 30_000,
      });
      return [r.status, r.stdout, r.stderr];
    };
    expect(run(['dashboard', '--out', '/proc/tsserve-dashboards/grafana'])).to.deep.equal([
      1,
      '',
      "tsserve metrics dashboard: ENOENT: no such file or directory, mkdir '/proc/tsserve-dashboards'\n",
    ]);
    expect(run(['rules', '--out', '/proc/tsserve-rules/x.yml'])).to.deep.equal([
      1,
      '',
      "tsserve metrics rules: ENOENT: no such file or directory, mkdir '/proc/tsserve-rules'\n",
    ]);
  });

  it("should name each frontend process in the process panels' legends by its pid (with --api-server-count 2 all lines of an instance had one name)", () => {
    const serving = dashboards(REPO_YAML)['tsserve-serving.json']!;
    expect(
      ['Frontend CPU (cores)', 'Frontend resident memory', 'Event loop lag p99'].map((t) => [
        t,
        (panel(serving, t).targets as ReadonlyArray<{ legendFormat?: string }>).map((q) => q.legendFormat),
      ]),
    ).to.deep.equal([
      ['Frontend CPU (cores)', ['{{instance}} {{pid}}']],
      ['Frontend resident memory', ['{{instance}} {{pid}}']],
      ['Event loop lag p99', ['{{instance}} {{pid}}']],
    ]);
  });

  it("should be Grafana's classic dashboard model: schemaVersion 41, the DS_PROMETHEUS datasource variable on every panel and query, unique ids, a 24-column grid", () => {
    for (const d of Object.values(dashboards(REPO_YAML))) {
      expect(d.schemaVersion).to.equal(41);
      expect(d.templating.list[0]).to.deep.equal({
        hide: 0,
        includeAll: false,
        label: 'Prometheus',
        multi: false,
        name: 'DS_PROMETHEUS',
        options: [],
        query: 'prometheus',
        refresh: 1,
        regex: '',
        type: 'datasource',
      });
      const ids = d.panels.map((p) => p.id);
      expect(new Set(ids).size).to.equal(ids.length);
      for (const p of d.panels) {
        expect(p.gridPos.x + p.gridPos.w, p.title).to.be.at.most(24);
        if (p.type === 'row' || p.type === 'text') continue;
        expect(p.datasource, p.title).to.deep.equal({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
        for (const t of p.targets ?? []) expect(t.datasource.uid).to.equal('${DS_PROMETHEUS}');
      }
    }
  });

  it('should give the serving dashboard instance and model_name variables, and the generation dashboard engine too', () => {
    const d = dashboards(REPO_YAML);
    const vars = (x: Dashboard): string[] => x.templating.list.map((v) => `${v.name}=${variableQuery(v.query)}`);
    expect(vars(d['tsserve-serving.json']!)).to.deep.equal([
      'DS_PROMETHEUS=',
      'instance=label_values(ts_inference_requests_total, instance)',
      'model_name=label_values(ts_inference_requests_total, model_name)',
    ]);
    expect(vars(d['tsserve-generation.json']!)).to.deep.equal([
      'DS_PROMETHEUS=',
      'instance=label_values(ts_request_success_total, instance)',
      'model_name=label_values(ts_request_success_total, model_name)',
      'engine=label_values(ts_request_success_total, engine)',
    ]);
  });

  it('should draw a histogram as p50/p90/p99 and mean, and as a heatmap of its buckets', () => {
    const g = dashboards(REPO_YAML)['tsserve-generation.json']!;
    const sel = '{instance=~"$instance", model_name=~"$model_name", engine=~"$engine"}';
    expect(panel(g, 'Time to first token: p50 / p90 / p99').targets!.map((t) => t.expr)).to.deep.equal([
      `histogram_quantile(0.5, sum by (le) (rate(ts_time_to_first_token_seconds_bucket${sel}[$__rate_interval])))`,
      `histogram_quantile(0.9, sum by (le) (rate(ts_time_to_first_token_seconds_bucket${sel}[$__rate_interval])))`,
      `histogram_quantile(0.99, sum by (le) (rate(ts_time_to_first_token_seconds_bucket${sel}[$__rate_interval])))`,
      `sum(rate(ts_time_to_first_token_seconds_sum${sel}[$__rate_interval])) / sum(rate(ts_time_to_first_token_seconds_count${sel}[$__rate_interval]))`,
    ]);
    const heat = panel(g, 'Time to first token: heatmap');
    expect(heat.type).to.equal('heatmap');
    expect(heat.targets!.map((t) => [t.expr, t.format])).to.deep.equal([
      [`sum by (le) (increase(ts_time_to_first_token_seconds_bucket${sel}[$__rate_interval]))`, 'heatmap'],
    ]);
    expect(panel(g, 'Prefix cache hit rate').targets!.map((t) => t.expr)).to.deep.equal([
      `sum by (model_name) (rate(ts_prefix_cache_hits_total${sel}[$__rate_interval])) / sum by (model_name) (rate(ts_prefix_cache_queries_total${sel}[$__rate_interval]))`,
    ]);
  });

  it("should query the yaml's names: vLLM's names change every query, a family left out takes its panels with it", () => {
    let text = REPO_YAML;
    for (const n of ['time_to_first_token_seconds', 'num_requests_waiting', 'prompt_tokens_total'])
      text = text.replaceAll(`name: ts_${n}`, `name: vllm:${n}`);
    text = text.replace(/ {4}- name: ts_num_preemptions_total\n(?: {6}.*\n)+/, '');
    const g = dashboards(text)['tsserve-generation.json']!;
    const exprs = dashboardQueries(g)
      .map((q) => q.expr)
      .join('\n');
    expect(exprs).to.contain('rate(vllm:time_to_first_token_seconds_bucket{');
    expect(exprs).to.contain('sum by (model_name) (vllm:num_requests_waiting{');
    expect(exprs).to.contain('rate(vllm:prompt_tokens_total{');
    expect(exprs).to.not.match(
      /ts_time_to_first_token_seconds|ts_num_requests_waiting|ts_prompt_tokens_total|preemptions/,
    );
    expect(g.panels.map((p) => p.title)).to.not.include('Preemptions (per second)');
  });

  it("should find a family by the yaml's key: (llm.time_to_first_token) whatever its name, so a renamed family keeps its panels", () => {
    const base = config(REPO_YAML);
    const renamed = {
      ...base,
      metrics: base.metrics.map((m) =>
        m.name === 'ts_time_to_first_token_seconds' ? { ...m, name: 'my_ttft', key: 'llm.time_to_first_token' } : m,
      ),
    } as MetricsConfig;
    const g = JSON.parse(renderDashboards(renamed)[1]!.text) as Dashboard;
    expect(panel(g, 'Time to first token: heatmap').targets!.map((t) => t.expr)).to.deep.equal([
      'sum by (le) (increase(my_ttft_bucket{instance=~"$instance", model_name=~"$model_name", engine=~"$engine"}[$__rate_interval]))',
    ]);
    expect(g.panels.map((p) => p.title)).to.not.include('my_ttft: heatmap');
  });

  it('should give custom model metrics panels by type: counter as a rate (stored with _total), gauge as its value, histogram as quantiles and a heatmap', () => {
    const s = dashboards(REPO_YAML)['tsserve-serving.json']!;
    expect(panel(s, 'PreprocessCallCount (per second)').targets!.map((t) => t.expr)).to.deep.equal([
      'sum by (instance, ModelName) (rate(PreprocessCallCount_total{instance=~"$instance", ModelName=~"$model_name"}[$__rate_interval]))',
    ]);
    expect(panel(s, 'HandlerTime').targets!.map((t) => t.expr)).to.deep.equal([
      'HandlerTime{instance=~"$instance", ModelName=~"$model_name"}',
    ]);
    expect(panel(s, 'ExamplePercentMetric: heatmap').targets!.map((t) => t.expr)).to.deep.equal([
      'sum by (le) (increase(ExamplePercentMetric_bucket{instance=~"$instance", ModelName=~"$model_name"}[$__rate_interval]))',
    ]);
    expect(panel(s, 'ExamplePercentMetric: p50 / p90 / p99').targets!.length).to.equal(4);
  });

  // Grafana's reqps reads "req/s", and its deckbytes counts 1000 bytes to the kB; tsserve's kB is 1024 B (addSize, the system metrics).
  it("should show a counter's rate in counts per second (requests per second only for a count of requests, by its unit or name), and sizes in Grafana's binary units", () => {
    const counters = dashboards(
      withEntries(
        'model_metrics',
        'counter',
        [
          '    - name: WordsSeen',
          '      unit: count',
          '      dimensions: [*model_name, *level]',
          '    - name: PagesServed',
          '      unit: requests',
          '      dimensions: [*model_name, *level]',
          '',
        ].join('\n'),
      ),
    )['tsserve-serving.json']!;
    const gauges = dashboards(
      withEntries(
        'model_metrics',
        'gauge',
        [
          '    - name: PayloadSize',
          '      unit: kB',
          '      dimensions: [*model_name, *level]',
          '    - name: ArchiveSize',
          '      unit: TB',
          '      dimensions: [*model_name, *level]',
          '',
        ].join('\n'),
      ),
    )['tsserve-serving.json']!;
    const unit = (d: Dashboard, title: string): string | undefined => panel(d, title).fieldConfig?.defaults.unit;
    expect(
      [
        'WordsSeen (per second)',
        'PagesServed (per second)',
        'InitializeCallCount (per second)',
        'PostprocessCallCount (per second)',
        'tsserve_datapoints_dropped_total (per second)',
        'InferenceRequestCount (per second)',
        'tsserve_requests_refused_total (per second)',
        'Inference requests (per second)',
      ].map((t) => unit(counters, t)),
    ).to.deep.equal(['cps', 'reqps', 'cps', 'cps', 'cps', 'reqps', 'reqps', 'reqps']);
    expect(
      ['PayloadSize', 'ArchiveSize', 'SizeOfImage', 'MemoryUsed', 'DiskUsage'].map((t) => unit(gauges, t)),
    ).to.deep.equal(['kbytes', 'tbytes', 'kbytes', 'mbytes', 'gbytes']);
  });

  it('should give an engine family no curated panel takes a generic panel in the generation dashboard', () => {
    const text = withEntries(
      'ts_metrics',
      'counter',
      [
        '    - name: ts_example_engine_events_total',
        '      unit: Count',
        '      dimensions: [*llm_model, *engine]',
        '      help: "Events of an engine no panel knows."',
        '',
      ].join('\n'),
    );
    const g = dashboards(text)['tsserve-generation.json']!;
    expect(panel(g, 'ts_example_engine_events_total (per second)').targets!.map((t) => t.expr)).to.deep.equal([
      'sum by (instance, model_name, engine) (rate(ts_example_engine_events_total{instance=~"$instance", model_name=~"$model_name", engine=~"$engine"}[$__rate_interval]))',
    ]);
    expect(
      dashboardQueries(dashboards(text)['tsserve-serving.json']!)
        .map((q) => q.expr)
        .join('\n'),
    ).to.not.contain('ts_example_engine_events');
  });

  it("should say so in a text panel when metrics.yaml declares no pipeline family (the repo's yaml without its ts_omni_ entries)", () => {
    const p = dashboards(REPO_YAML)['tsserve-pipelines.json']!;
    expect(p.panels.map((x) => [x.type, x.title])).to.deep.equal([
      ['row', 'Pipelines'],
      ['text', 'No pipeline metrics declared'],
    ]);
    expect(p.panels[1]!.options!.content).to.equal(
      'metrics.yaml declares no pipeline families (names starting `ts_omni_`, or labelled `stage` / `replica`). Declare them and regenerate with `npm run dashboards`.',
    );
    expect(p.templating.list.map((v) => v.name)).to.deep.equal(['DS_PROMETHEUS']);
  });

  it('should put ts_omni_* and stage-labelled families in the pipelines dashboard, with stage and replica variables', () => {
    let text = withEntries(
      'ts_metrics',
      'gauge',
      [
        '    - name: ts_omni_num_requests_running',
        '      unit: Count',
        '      dimensions: [*llm_model]',
        '      help: "Pipeline requests running."',
        '      merge: livesum',
        '',
      ].join('\n'),
    );
    text = text.replace(
      '  - &finished_reason "finished_reason"\n',
      '  - &finished_reason "finished_reason"\n  - &stage "stage"\n  - &replica "replica"\n',
    );
    text = withEntriesIn(
      text,
      'histogram',
      [
        '    - name: ts_omni_stage_gen_time_seconds',
        '      unit: Seconds',
        '      dimensions: [*llm_model, *stage, *replica]',
        '      help: "Stage time."',
        '      buckets: [0.1, 1]',
        '',
      ].join('\n'),
    );
    const all = dashboards(text);
    const p = all['tsserve-pipelines.json']!;
    expect(p.panels.map((x) => x.title)).to.deep.equal([
      'Pipeline requests',
      'ts_omni_num_requests_running',
      'Stages',
      'ts_omni_stage_gen_time_seconds: p50 / p90 / p99',
      'ts_omni_stage_gen_time_seconds: heatmap',
    ]);
    expect(p.templating.list.map((v) => `${v.name}=${variableQuery(v.query)}`)).to.deep.equal([
      'DS_PROMETHEUS=',
      'instance=label_values(ts_omni_num_requests_running, instance)',
      'model_name=label_values(ts_omni_num_requests_running, model_name)',
      'stage=label_values(ts_omni_stage_gen_time_seconds_count, stage)',
      'replica=label_values(ts_omni_stage_gen_time_seconds_count, replica)',
    ]);
    expect(panel(p, 'ts_omni_stage_gen_time_seconds: heatmap').targets![0]!.expr).to.equal(
      'sum by (le) (increase(ts_omni_stage_gen_time_seconds_bucket{instance=~"$instance", model_name=~"$model_name", stage=~"$stage", replica=~"$replica"}[$__rate_interval]))',
    );
    expect(
      dashboardQueries(all['tsserve-generation.json']!)
        .map((q) => q.expr)
        .join('\n'),
    ).to.not.contain('omni');
  });

  describe('--show-hidden-metrics-for-version', () => {
    /** Runs `tsserve metrics dashboard` as version 0.1.0 over the vLLM profile; the generated dashboards, parsed. */
    function generate(...flags: string[]): Record<string, Dashboard> {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-dashboards-hidden-'));
      try {
        const r = spawnSync(
          process.execPath,
          [BIN, 'metrics', 'dashboard', '--metrics-config', VLLM_YAML, '--out', dir, ...flags],
          { cwd: ROOT, encoding: 'utf8', env: { ...process.env, TS_SERVER_VERSION: '0.1.0' } },
        );
        expect([r.status, r.stderr]).to.deep.equal([0, '']);
        return Object.fromEntries(
          fs
            .readdirSync(dir)
            .sort()
            .map((f) => [f, JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Dashboard]),
        );
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }

    /** The declared families the server exposes as version 0.1.0 with `showHidden` (the config its caches are built from). */
    async function serverFamilies(showHidden: string | null): Promise<string[]> {
      const r = loadMetricsConfig(VLLM_YAML);
      if (!r.ok) throw new Error('metrics-vllm.yaml does not load');
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-dashboards-server-'));
      const fm = new FrontendMetrics(r.config, {
        logDir: dir,
        modes: [],
        log: () => undefined,
        serverVersion: '0.1.0',
        showHiddenMetricsForVersion: showHidden,
      });
      try {
        return fm.config.metrics
          .filter((m) => m.hidden !== true)
          .map((m) => m.name)
          .sort();
      } finally {
        await fm.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }

    /** The declared families of the vLLM profile that some query of `all` reads (as `_total`, `_bucket`, `_count` or `_sum` too). */
    function queried(all: Record<string, Dashboard>): string[] {
      const r = loadMetricsConfig(VLLM_YAML);
      if (!r.ok) throw new Error('metrics-vllm.yaml does not load');
      const exprs = Object.values(all)
        .flatMap((d) => dashboardQueries(d).map((q) => q.expr))
        .join('\n');
      return r.config.metrics
        .map((m) => m.name)
        .filter((n) =>
          new RegExp(
            `(?<![\\w:])${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(_total|_bucket|_count|_sum)?(?![\\w:])`,
          ).test(exprs),
        )
        .sort();
    }

    it('should leave a family hidden at the version out of every dashboard without the flag, and give it its panel with it, as the server exposes it', async () => {
      const hidden = generate();
      const shown = generate('--show-hidden-metrics-for-version', '0.0');
      const titles = (d: Dashboard): string[] => d.panels.map((p) => p.title);
      expect(
        Object.keys(shown).map((f) => [
          f,
          titles(shown[f]!).filter((t) => !titles(hidden[f]!).includes(t)),
          titles(hidden[f]!).filter((t) => !titles(shown[f]!).includes(t)),
        ]),
      ).to.deep.equal([
        [
          'tsserve-generation.json',
          [
            'vllm:gpu_cache_usage_perc',
            'vllm:time_per_output_token_seconds: p50 / p90 / p99',
            'vllm:time_per_output_token_seconds: heatmap',
          ],
          [],
        ],
        ['tsserve-pipelines.json', [], []],
        ['tsserve-serving.json', [], []],
      ]);
      expect(
        panel(shown['tsserve-generation.json']!, 'vllm:gpu_cache_usage_perc').targets!.map((t) => t.expr),
      ).to.deep.equal([
        'vllm:gpu_cache_usage_perc{instance=~"$instance", model_name=~"$model_name", engine=~"$engine"}',
      ]);
      // Exactly the families /metrics renders for the same flag: none it hides, none it shows left out.
      const [exposed, exposedWithFlag] = [await serverFamilies(null), await serverFamilies('0.0')];
      expect(queried(hidden)).to.deep.equal(exposed);
      expect(queried(shown)).to.deep.equal(exposedWithFlag);
      expect(exposedWithFlag.filter((n) => !exposed.includes(n))).to.deep.equal([
        'vllm:gpu_cache_usage_perc',
        'vllm:time_per_output_token_seconds',
      ]);
    });

    it("should refuse a version the server refuses, with the server's message and exit 2", () => {
      const r = spawnSync(
        process.execPath,
        [BIN, 'metrics', 'dashboard', '--show-hidden-metrics-for-version', '0.1', '--out', os.tmpdir()],
        { cwd: ROOT, encoding: 'utf8', env: { ...process.env, TS_SERVER_VERSION: '0.3.0' } },
      );
      expect([r.status, r.stdout, r.stderr]).to.deep.equal([
        2,
        '',
        'tsserve metrics dashboard: --show-hidden-metrics-for-version: 0.1 is not accepted; only 0.2, the previous minor version of tsserve 0.3, is accepted\n',
      ]);
    });
  });
});
