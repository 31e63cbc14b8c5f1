/**
 * The metric lifecycle against the REAL server: the repo's metrics.yaml with HandlerTime
 * deprecated since 0.1, served as version 0.3 (TS_SERVER_VERSION): hidden from /metrics and from
 * model_metrics.log (the workers' records are no-ops, not drops), and shown again, notice first
 * in HELP, with --show-hidden-metrics-for-version 0.2.
 */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { until } from '../support/until.js';
import { CLI, generateStore, mlpInput, post, ROOT, scrape, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

const N = 3;
const NOTICE = '(Deprecated since 0.1, use PredictionTime instead)';

const dirs: string[] = [];

/** The repo's metrics.yaml with HandlerTime deprecated since 0.1 (in a temp dir removed after the tests). */
function deprecatedConfig(): string {
  const text = fs.readFileSync(path.join(ROOT, 'metrics.yaml'), 'utf8');
  const entry = '    - name: HandlerTime\n      unit: ms\n';
  if (!text.includes(entry)) throw new Error('metrics.yaml no longer declares HandlerTime as expected');
  const dir = tempDir('deprecated');
  dirs.push(dir);
  const file = path.join(dir, 'metrics.yaml');
  fs.writeFileSync(
    file,
    text.replace(entry, `${entry}      deprecated: {since: "0.1", replacement: PredictionTime}\n`),
  );
  return file;
}

/** [level, msg] of the server's JSON log records about metrics. */
function records(out: string): [string, string][] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level?: unknown; msg?: unknown })
    .filter((x) => typeof x.msg === 'string' && x.msg.startsWith('metrics: '))
    .map((x) => [String(x.level), String(x.msg)]);
}

/** Names of the model_metrics.log lines, counted. */
function logged(server: Tsserve): Record<string, number> {
  const out: Record<string, number> = {};
  const text = fs.readFileSync(path.join(server.logDir, 'model_metrics.log'), 'utf8');
  for (const l of text.split('\n')) {
    const m = / - (HandlerTime|PredictionTime)\./.exec(l);
    if (m !== null) out[m[1] as string] = (out[m[1] as string] ?? 0) + 1;
  }
  return out;
}

describe('e2e: deprecated and hidden metrics', () => {
  let server: Tsserve | null = null;
  afterEach(() => {
    server?.kill();
    server = null;
  });
  after(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  async function serve(extra: readonly string[]): Promise<{ text: string; logs: Record<string, number>; out: string }> {
    server = await startTsserve({
      store: generateStore(['mlp']),
      env: { TS_SERVER_VERSION: '0.3.0' },
      args: [
        '--metrics-config',
        deprecatedConfig(),
        '--metrics-mode',
        'tslog,prometheus',
        '--disable-system-metrics',
        ...extra,
      ],
    });
    const s = server;
    // One request at a time: one batch each, so exactly N datapoints per model metric.
    for (let i = 0; i < N; i++)
      expect((await post(`${s.inference}/predictions/mlp`, mlpInput(i))).status).to.equal(200);
    const text = await until(
      async () => {
        const t = await scrape(s);
        return t.includes('\nPredictionTime{') ? t : null;
      },
      { message: 'PredictionTime on /metrics' },
    );
    expect(await s.stop()).to.equal(0);
    return { text, logs: logged(s), out: s.output() };
  }

  it('should hide a metric deprecated two minor versions ago: not on /metrics, not in model_metrics.log, not a drop', async () => {
    const r = await serve([]);
    expect(r.text).to.not.include('HandlerTime');
    expect(r.text).to.include('\nPredictionTime{');
    expect(r.text).to.not.match(/tsserve_datapoints_dropped_total\{[^}]*\} [1-9]/);
    expect(r.logs).to.deep.equal({ PredictionTime: N });
    expect(records(r.out)).to.deep.include([
      'warn',
      'metrics: hidden metrics (not exposed, logged or sent): HandlerTime',
    ]);
  });

  it('should show it again, notice first in HELP, with --show-hidden-metrics-for-version 0.2', async () => {
    const r = await serve(['--show-hidden-metrics-for-version', '0.2']);
    expect(r.text).to.include(
      `# HELP HandlerTime ${NOTICE} Time the handler took for the last batch (preprocess, inference, postprocess). (unit: ms)\n`,
    );
    expect(r.logs).to.deep.equal({ HandlerTime: N, PredictionTime: N });
    expect(records(r.out)).to.deep.include(['warn', `metrics: deprecated metrics in use: HandlerTime ${NOTICE}`]);
  });

  it('should refuse to start with a version other than the previous minor one', () => {
    const r = spawnSync(process.execPath, [CLI, 'start', '--show-hidden-metrics-for-version', '0.1'], {
      encoding: 'utf8',
      env: { ...process.env, TS_SERVER_VERSION: '0.3.0' },
    });
    expect([r.status, r.stderr]).to.deep.equal([
      2,
      'tsserve start: --show-hidden-metrics-for-version: 0.1 is not accepted; only 0.2, the previous minor version of tsserve 0.3, is accepted\n',
    ]);
  });
});
