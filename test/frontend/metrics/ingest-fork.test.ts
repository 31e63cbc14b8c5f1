import { expect } from 'chai';
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { MetricsIngest } from '../../../frontend/metrics/ingest.js';
import { config, MODEL_SPECS } from '../../backend/metrics/config.js';
import type { FixtureDone, FixtureInit } from './fixtures/metrics-worker.js';

const WORKER = path.join(import.meta.dirname, 'fixtures', 'metrics-worker.js');
const CONFIG = config(MODEL_SPECS, { autoDetect: true, maxPointsPerFlush: 1000 });
const BATCHES = 5;
const BULK = 25_000;

/** Forks a real worker, feeds its messages to the ingest, resolves with its report on exit. */
function runWorker(key: string, ingest: MetricsIngest, children: ChildProcess[]): Promise<FixtureDone> {
  return new Promise((resolve, reject) => {
    const child = fork(WORKER, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    let done: FixtureDone | null = null;
    child.on('message', (m: unknown) => {
      if (ingest.handle(key, m)) return;
      if ((m as { type?: unknown }).type === 'fixture.done') done = m as FixtureDone;
    });
    child.on('error', reject);
    // 'close', not 'exit': the exit can be seen before the channel's last messages are read
    // (a loaded machine showed it: "exited with 0 (done: false)"); close waits for the channel.
    child.on('close', (code) => {
      ingest.forget(key);
      if (code === 0 && done !== null) resolve(done);
      else reject(new Error(`worker ${key} exited with ${code} (done: ${done !== null})`));
    });
    const init: FixtureInit = { type: 'fixture.init', config: CONFIG, worker: key, batches: BATCHES, bulk: BULK };
    child.send(init);
  });
}

/** The sample lines of `text` for the given metric names, in render order. */
function samples(text: string, names: readonly string[]): string[] {
  return text.split('\n').filter((l) => names.some((n) => l.startsWith(`${n}{`) || l.startsWith(`${n} `)));
}

describe('MetricsIngest with real forked workers', () => {
  let dir = '';
  let children: ChildProcess[] = [];
  let fm: FrontendMetrics | null = null;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-ingest-'));
    children = [];
  });

  afterEach(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    if (fm !== null) await fm.close();
    fm = null;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('should deliver every datapoint exactly once, with auto-detect raced by two workers and a replacement', async () => {
    const fmLogs: string[] = [];
    fm = new FrontendMetrics(CONFIG, {
      logDir: dir,
      hostname: 'h',
      modes: ['prometheus', 'tslog'],
      log: (level, m) => fmLogs.push(`${level}: ${m}`),
    });
    const logs: string[] = [];
    const ingest = new MetricsIngest(fm, { log: (m) => logs.push(m) });

    const first = await Promise.all([runWorker('w0', ingest, children), runWorker('w1', ingest, children)]);
    const replacement = await runWorker('w0b', ingest, children); // w0 "died"; its data stays
    const reports = [...first, replacement];

    const perWorker = BATCHES * (1 + 10 + 100 + 1) + BULK;
    expect(reports.map((r) => [r.points, r.dropped])).to.deep.equal([
      [perWorker, { negative_counter: BATCHES }],
      [perWorker, { negative_counter: BATCHES }],
      [perWorker, { negative_counter: BATCHES }],
    ]);
    // Per worker: one flush per batch, 24 automatic flushes at the 1000-point cap, one final.
    expect(reports.map((r) => r.messages)).to.deep.equal([BATCHES + 25, BATCHES + 25, BATCHES + 25]);

    const text = await fm.prometheusText();
    // The gauges (HandlerTime, PreTime) merge as `livelast` (the default): every worker has
    // exited, so none has a value left; counters keep everything the dead workers sent.
    expect(samples(text, ['HandlerTime', 'InferenceCount', 'NoDims', 'RaceHits', 'PreTime'])).to.deep.equal([
      'InferenceCount{ModelName="mlp",Level="Model",Device="cpu",Hostname="h"} 150',
      'NoDims{Hostname="h"} 75000',
      'RaceHits{ModelName="mlp",Level="Model",Hostname="h"} 1500',
    ]);
    expect(
      samples(text, [
        'tsserve_flush_batches_total',
        'tsserve_flush_datapoints_total',
        'tsserve_datapoints_dropped_total',
      ]),
    ).to.deep.equal([
      'tsserve_datapoints_dropped_total{reason="negative_counter",Hostname="h"} 15',
      `tsserve_flush_batches_total{Hostname="h"} ${3 * (BATCHES + 25)}`,
      `tsserve_flush_datapoints_total{Hostname="h"} ${3 * perWorker}`,
    ]);
    // Auto-detected types: RaceHits a counter, PreTime a gauge.
    expect(text.split('\n').filter((l) => l.startsWith('# TYPE ') && !l.startsWith('# TYPE tsserve_'))).to.deep.equal([
      '# TYPE Requests2XX counter',
      '# TYPE HandlerTime gauge',
      '# TYPE PredictionTime gauge',
      '# TYPE InferenceCount counter',
      '# TYPE LatencyHist histogram',
      '# TYPE NoDims counter',
      '# TYPE RaceHits counter',
      '# TYPE PreTime gauge',
    ]);
    expect(logs).to.deep.equal([]);
    expect(fmLogs).to.deep.equal([
      'warn: metrics: dropped a datapoint (negative_counter); further drops like it are only ' +
        'counted in tsserve_datapoints_dropped_total',
    ]);

    // tslog: one line per datapoint, with the batch's joined request ids or the explicit one.
    await fm.flush();
    const lines = fs.readFileSync(path.join(dir, 'model_metrics.log'), 'utf8').trimEnd().split('\n');
    const count = (name: string): number => lines.filter((l) => l.includes(` - ${name}.`)).length;
    expect([
      count('HandlerTime'),
      count('InferenceCount'),
      count('RaceHits'),
      count('PreTime'),
      count('NoDims'),
    ]).to.deep.equal([15, 150, 1500, 15, 75000]);
    const ids = (name: string): string[] =>
      lines
        .filter((l) => l.includes(` - ${name}.`))
        .map((l) => decodeURIComponent(/requestID:([^,]*)/.exec(l)?.[1] ?? '-'));
    expect(ids('HandlerTime').sort()).to.deep.equal(
      ['w0', 'w0b', 'w1'].flatMap((w) => [0, 1, 2, 3, 4].map((b) => `${w}-b${b}-r0,${w}-b${b}-r1`)).sort(),
    );
    expect([...new Set(ids('PreTime'))].sort()).to.deep.equal(['w0-explicit', 'w0b-explicit', 'w1-explicit']);
    expect([...new Set(ids('NoDims'))]).to.deep.equal(['-']);
    expect(lines.filter((l) => l.includes(' - PreTime.'))[0]).to.match(
      /^\S+ - PreTime\.Seconds:2\.0\|#ModelName:mlp,Level:Model\|#hostname:h,requestID:w\w+-explicit,timestamp:\d+$/,
    );
  });
});
