/**
 * A new user's custom metrics, end to end: a counter and a histogram with a dimension of their
 * own (plus a gauge and a second of each) declared in a copy of the repo's metrics.yaml, recorded
 * by a handler of their own through every call of the cache (addMetric, getMetric, addOrUpdate,
 * addCounter, addTime, addSize, addPercent), the model registered through the management API,
 * then the exact values in model_metrics.log (TorchServe's line), on /metrics, at the real statsd
 * daemon, and the panels `tsserve metrics dashboard` generates for them.
 */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { call, CLI, post, ROOT, scrape, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { mgmtCommand, startStatsd } from './statsd-daemon.js';
import type { StatsdDaemon } from './statsd-daemon.js';
import { until } from '../support/until.js';

const H = os.hostname();
const MODEL = 'journey';

/** The user's entries, each put at the end of its model_metrics list. */
const ENTRIES: Readonly<Record<'counter' | 'gauge' | 'histogram', string>> = {
  counter: [
    '    - name: WordsSeen',
    '      unit: count',
    '      dimensions: ["Outcome", *model_name, *level]',
    '    - name: BatchesSeen',
    '      unit: count',
    '      dimensions: [*model_name, *level]',
  ].join('\n'),
  gauge: ['    - name: PayloadSize', '      unit: kB', '      dimensions: [*model_name, *level]'].join('\n'),
  histogram: [
    '    - name: ScoreTime',
    '      unit: ms',
    '      dimensions: ["Outcome", *model_name, *level]',
    '      buckets: [100, 250, 500, 1000]',
    '    - name: Confidence',
    '      unit: percent',
    '      dimensions: [*model_name, *level]',
    '      buckets: [25, 50, 90, 100]',
  ].join('\n'),
};

/** The user's handler: fixed values (no clock), so every sink's value is exact. */
const HANDLER = `// journey: scores a text; records its metrics with every call of ctx.metrics.
export function initialize(ctx) {
  ctx.metrics.addMetric('WordsSeen', 'count', ['Outcome', 'ModelName', 'Level'], 'counter');
}
const outcome = (text) => (text.includes('good') ? 'positive' : 'negative');
export function preprocess(requests, ctx) {
  requests.forEach((r, i) => {
    const text = String(r.body.text);
    ctx.metrics.getMetric('WordsSeen', 'counter')
      .addOrUpdate(text.split(' ').length, { Outcome: outcome(text), ModelName: ctx.modelName, Level: 'Model' }, r.requestId);
    ctx.metrics.addSize('PayloadSize', JSON.stringify(r.body).length, i, 'B');
  });
  ctx.metrics.addCounter('BatchesSeen', 1);
  return requests.map((r) => String(r.body.text));
}
export function inference(texts, ctx) {
  texts.forEach((t, i) => ctx.metrics.addTime('ScoreTime', 0.5, i, 's', { Outcome: outcome(t) }));
  return texts.map((t) => (outcome(t) === 'positive' ? 0.9 : 0.25));
}
export function postprocess(scores, ctx) {
  scores.forEach((s, i) => ctx.metrics.addPercent('Confidence', s * 100, i, undefined, 'histogram'));
  return scores.map((s) => ({ score: s }));
}
`;

const TEXTS = ['good film', 'bad long boring film', 'so good'];

/** `text` (a metrics.yaml) with `snippet` after the last entry of `model_metrics.<list>`. */
function appendToModelList(text: string, list: string, snippet: string): string {
  const lines = text.split('\n');
  const top = lines.indexOf('model_metrics:');
  const key = lines.findIndex((l, i) => i > top && l === `  ${list}:`);
  if (top < 0 || key < 0) throw new Error(`no model_metrics.${list} in metrics.yaml`);
  let end = key + 1;
  while (end < lines.length && (/^ {3,}/.test(lines[end]!) || lines[end]!.trimStart().startsWith('#'))) end++;
  return [...lines.slice(0, end), snippet, ...lines.slice(end)].join('\n');
}

/** The model_metrics.log lines of `names`, time and timestamp written as T. */
function logLines(server: Tsserve, names: readonly string[]): string[] {
  const file = path.join(server.logDir, 'model_metrics.log');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => names.some((n) => l.includes(` - ${n}.`)))
    .map((l) => l.replace(/^\S+ - /, 'T - ').replace(/timestamp:\d+$/, 'timestamp:T'));
}

describe('a custom counter and histogram, from metrics.yaml to every sink and the dashboard (real server, real statsd daemon)', function () {
  this.timeout(120_000);
  let dir = '';
  let yaml = '';
  let statsd: StatsdDaemon | undefined;
  let server: Tsserve | undefined;
  const ids: string[] = [];

  before(async () => {
    dir = tempDir('journey');
    yaml = path.join(dir, 'my-metrics.yaml');
    let text = fs.readFileSync(path.join(ROOT, 'metrics.yaml'), 'utf8');
    for (const [list, snippet] of Object.entries(ENTRIES)) text = appendToModelList(text, list, snippet);
    fs.writeFileSync(yaml, text);
    const store = path.join(dir, 'store');
    fs.mkdirSync(store);
    statsd = await startStatsd();
    server = await startTsserve({
      store,
      args: [
        '--metrics-config',
        yaml,
        '--metrics-mode',
        'tslog,prometheus,statsd',
        '--statsd-address',
        `127.0.0.1:${statsd.port}`,
        '--disable-system-metrics',
      ],
    });
    // The model arrives in the store after start, and is registered through the management API.
    fs.mkdirSync(path.join(store, MODEL));
    fs.writeFileSync(path.join(store, MODEL, 'handler.mjs'), HANDLER);
    fs.writeFileSync(
      path.join(store, MODEL, 'model-config.yaml'),
      'handler: handler.mjs\nbatchSize: 1\nmaxBatchDelay: 5\nminWorkers: 1\nmaxWorkers: 1\nresponseTimeout: 30\n',
    );
    const reg = await call('POST', `${server.management}/models?url=${MODEL}&initial_workers=1`);
    expect(reg).to.deep.equal({
      status: 200,
      json: { status: `Model "${MODEL}" Version: 1.0 registered with 1 initial workers` },
    });
    for (const text of TEXTS) {
      const r = await post(`${server.inference}/predictions/${MODEL}`, { text });
      expect([r.status, r.json]).to.deep.equal([200, { score: text.includes('good') ? 0.9 : 0.25 }]);
      ids.push(r.requestId ?? '');
    }
  });

  after(() => {
    server?.kill();
    statsd?.stop();
    if (dir !== '') fs.rmSync(dir, { recursive: true, force: true });
  });

  it("should validate the user's metrics.yaml", () => {
    const r = spawnSync(process.execPath, [CLI, 'metrics', 'validate', yaml], { encoding: 'utf8' });
    expect([r.status, r.stdout.replace(/\(\d+ metrics\)/, '(N metrics)')]).to.deep.equal([
      0,
      `${yaml}: OK (N metrics)\n`,
    ]);
  });

  it('should write one TorchServe line per record to model_metrics.log: the converted value, the dimensions in declared order, the request id', async () => {
    const names = ['WordsSeen', 'PayloadSize', 'BatchesSeen', 'ScoreTime', 'Confidence'];
    const lines = await until(
      () => {
        const ls = logLines(server!, names);
        return ls.length === 15 ? ls : null;
      },
      { message: '15 lines of the custom metrics in model_metrics.log', observe: () => logLines(server!, names) },
    );
    const bodyKb = (text: string): number => JSON.stringify({ text }).length / 1024;
    expect(lines).to.deep.equal(
      TEXTS.flatMap((text, i) => {
        const tail = `|#hostname:${H},requestID:${ids[i]},timestamp:T`;
        const outcome = text.includes('good') ? 'positive' : 'negative';
        return [
          `T - WordsSeen.count:${text.split(' ').length}.0|#Outcome:${outcome},ModelName:${MODEL},Level:Model${tail}`,
          `T - PayloadSize.kB:${bodyKb(text)}|#ModelName:${MODEL},Level:Model${tail}`,
          `T - BatchesSeen.count:1.0|#ModelName:${MODEL},Level:Model${tail}`,
          `T - ScoreTime.ms:500.0|#Outcome:${outcome},ModelName:${MODEL},Level:Model${tail}`,
          `T - Confidence.percent:${outcome === 'positive' ? '90.0' : '25.0'}|#ModelName:${MODEL},Level:Model${tail}`,
        ];
      }),
    );
    expect(bodyKb(TEXTS[1]!)).to.equal(0.0302734375);
  });

  it('should expose the counter per Outcome, the histogram in its declared buckets and the gauge at its last value on /metrics', async () => {
    const query = '?name[]=WordsSeen&name[]=BatchesSeen&name[]=PayloadSize&name[]=ScoreTime&name[]=Confidence';
    const samples = (t: string): string[] => t.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    const text = await until(
      async () => {
        const t = await scrape(server!, query);
        return samples(t).includes(`Confidence_count{ModelName="${MODEL}",Level="Model",Hostname="${H}"} 3`) ? t : null;
      },
      { message: 'Confidence_count 3 on /metrics' },
    );
    const m = `ModelName="${MODEL}",Level="Model",Hostname="${H}"`;
    const score = (outcome: string, counts: readonly number[], n: number): string[] => [
      ...['100', '250', '500', '1000', '+Inf'].map(
        (le, i) => `ScoreTime_bucket{le="${le}",Outcome="${outcome}",${m}} ${counts[i]}`,
      ),
      `ScoreTime_sum{Outcome="${outcome}",${m}} ${500 * n}`,
      `ScoreTime_count{Outcome="${outcome}",${m}} ${n}`,
    ];
    expect(samples(text)).to.deep.equal([
      `WordsSeen{Outcome="positive",${m}} 4`,
      `WordsSeen{Outcome="negative",${m}} 4`,
      `BatchesSeen{${m}} 3`,
      `PayloadSize{${m}} ${JSON.stringify({ text: TEXTS[2] }).length / 1024}`,
      ...score('positive', [0, 0, 2, 2, 2], 2),
      ...score('negative', [0, 0, 1, 1, 1], 1),
      ...['25', '50', '90', '100', '+Inf'].map((le, i) => `Confidence_bucket{le="${le}",${m}} ${[1, 1, 3, 3, 3][i]}`),
      `Confidence_sum{${m}} 205`,
      `Confidence_count{${m}} 3`,
    ]);
  });

  // The statsd daemon's management port shows what it aggregated: counters summed, timers as their values.
  it('should send the counter as c, the ms histogram as ms timers and the percent histogram as h to the statsd daemon', async () => {
    const tags = `ModelName=${MODEL};Level=Model;Hostname=${H}`;
    const want = {
      counters: [
        `'WordsSeen;Outcome=positive;${tags}': 4`,
        `'WordsSeen;Outcome=negative;${tags}': 4`,
        `'BatchesSeen;${tags}': 3`,
        // The plain Etsy daemon sums a DogStatsD h as a counter (docs/sinks.md): 90 + 25 + 90.
        `'Confidence;${tags}': 205`,
      ],
      timers: [`'ScoreTime;Outcome=positive;${tags}': [ 500, 500 ]`, `'ScoreTime;Outcome=negative;${tags}': [ 500 ]`],
      gauges: [`'PayloadSize;${tags}': ${JSON.stringify({ text: TEXTS[2] }).length / 1024}`],
    };
    for (const [command, lines] of Object.entries(want)) {
      const seen = (text: string): string[] => lines.filter((l) => text.includes(l));
      await until(async () => seen(await mgmtCommand(statsd!.mgmtPort, command)).length === lines.length, {
        message: `the daemon's ${command}`,
        observe: () => lines,
      });
    }
    expect(statsd!.lines.filter((l) => l.startsWith('ScoreTime:') || l.startsWith('Confidence:'))).to.deep.equal([
      ...TEXTS.flatMap((text) =>
        text.includes('good')
          ? [
              `ScoreTime:500|ms|#Outcome:positive,ModelName:${MODEL},Level:Model,Hostname:${H}`,
              `Confidence:90|h|#ModelName:${MODEL},Level:Model,Hostname:${H}`,
            ]
          : [
              `ScoreTime:500|ms|#Outcome:negative,ModelName:${MODEL},Level:Model,Hostname:${H}`,
              `Confidence:25|h|#ModelName:${MODEL},Level:Model,Hostname:${H}`,
            ],
      ),
    ]);
  });

  it("should give the families panels in the generated serving dashboard that query their stored series, with their type's function and unit", () => {
    const out = path.join(dir, 'dashboards');
    const r = spawnSync(process.execPath, [CLI, 'metrics', 'dashboard', '--metrics-config', yaml, '--out', out], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).to.equal(0);
    interface Panel {
      title: string;
      fieldConfig?: { defaults: { unit: string } };
      targets?: { expr: string }[];
    }
    const panels = (JSON.parse(fs.readFileSync(path.join(out, 'tsserve-serving.json'), 'utf8')) as { panels: Panel[] })
      .panels;
    const shown = (title: string): [string | undefined, string[]] => {
      const p = panels.find((x) => x.title === title);
      if (p === undefined) throw new Error(`no panel "${title}"`);
      return [p.fieldConfig?.defaults.unit, (p.targets ?? []).map((t) => t.expr)];
    };
    const sel = 'instance=~"$instance", ModelName=~"$model_name"';
    const quantiles = (name: string): string[] => [
      ...[0.5, 0.9, 0.99].map(
        (q) => `histogram_quantile(${q}, sum by (le) (rate(${name}_bucket{${sel}}[$__rate_interval])))`,
      ),
      `sum(rate(${name}_sum{${sel}}[$__rate_interval])) / sum(rate(${name}_count{${sel}}[$__rate_interval]))`,
    ];
    expect(shown('WordsSeen (per second)')).to.deep.equal([
      'cps',
      [`sum by (instance, Outcome, ModelName, Level) (rate(WordsSeen_total{${sel}}[$__rate_interval]))`],
    ]);
    expect(shown('BatchesSeen (per second)')).to.deep.equal([
      'cps',
      [`sum by (instance, ModelName, Level) (rate(BatchesSeen_total{${sel}}[$__rate_interval]))`],
    ]);
    expect(shown('PayloadSize')).to.deep.equal(['kbytes', [`PayloadSize{${sel}}`]]);
    expect(shown('ScoreTime: p50 / p90 / p99')).to.deep.equal(['ms', quantiles('ScoreTime')]);
    expect(shown('ScoreTime: heatmap')).to.deep.equal([
      'ms',
      [`sum by (le) (increase(ScoreTime_bucket{${sel}}[$__rate_interval]))`],
    ]);
    expect(shown('Confidence: p50 / p90 / p99')).to.deep.equal(['percent', quantiles('Confidence')]);
  });
});
