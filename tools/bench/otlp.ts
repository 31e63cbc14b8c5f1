/**
 * `npm run bench:otlp`: the otlp sink's cost on the heavy model (`mlp-heavy`, compute-bound).
 * Served requests/s with `--metrics-mode prometheus,otlp` (exporting every 1 s, ten times
 * OpenTelemetry's default rate, to an OTLP/HTTP receiver in this process that reads and drops
 * each body) against `--metrics-mode prometheus`, as pairs of back-to-back runs alternating which
 * goes first; the figure is the pair whose ratio is the median. Prints `otlp_sink_on_vs_off`
 * (goal ≥ 0.98). `BENCH_SMOKE=1`: one short pair, nothing judged.
 */
import autocannon from 'autocannon';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeMlpHeavy } from '../models/demo-models.js';
import { spawnServer, stopServer } from './spawn-server.js';
import { otlpReceiver } from './otlp-receiver.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const PAIRS = SMOKE ? 1 : Number(process.env.BENCH_PAIRS ?? 3);
const MEASURE_S = SMOKE ? 1 : 8;
const WARMUP_S = SMOKE ? 1 : 2;
const CONNECTIONS = 64;
const WIDTH = 784;

const note = (m: string): void => void process.stderr.write(`bench:otlp: ${m}\n`);

/** Served requests/s of one run with `modes`. */
async function run(store: string, root: string, tag: string, modeArgs: readonly string[]): Promise<number> {
  const logDir = path.join(root, `logs-${tag}`);
  const server = await spawnServer(
    ['--model-store', store, '--models', 'mlp-heavy=mlp-heavy', '--log-dir', logDir, ...modeArgs],
    root,
  );
  try {
    const opts = {
      url: `${server.inference}/predictions/mlp-heavy`,
      method: 'POST' as const,
      connections: CONNECTIONS,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Array.from({ length: WIDTH }, (_v, i) => ((i * 31 + 17) % 100) / 100)),
    };
    await autocannon({ ...opts, duration: WARMUP_S });
    const r = await autocannon({ ...opts, duration: MEASURE_S });
    if (r.non2xx > 0 || r.errors > 0) note(`warning: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    return r.requests.total / MEASURE_S;
  } finally {
    await stopServer(server);
  }
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-otlp-'));
  const rx = await otlpReceiver('/v1/metrics');
  try {
    const store = path.join(root, 'store');
    fs.mkdirSync(path.join(store, 'mlp-heavy'), { recursive: true });
    writeMlpHeavy(path.join(store, 'mlp-heavy'), { batchSize: 32, maxBatchDelay: 5 });
    process.env.OTEL_METRIC_EXPORT_INTERVAL = '1000';
    const on = ['--metrics-mode', 'prometheus,otlp', '--otlp-metrics-endpoint', rx.url];
    const off = ['--metrics-mode', 'prometheus'];
    const pairs: Array<{ on: number; off: number }> = [];
    for (let i = 0; i < PAIRS; i++) {
      const p = { on: 0, off: 0 };
      for (const which of i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const))
        p[which] = await run(store, root, `${which}-${i}`, which === 'on' ? on : off);
      pairs.push(p);
    }
    pairs.sort((a, b) => a.on / a.off - b.on / b.off);
    const mid = pairs[Math.floor((pairs.length - 1) / 2)]!;
    note(
      `pairs (on/off req/s): ${pairs.map((p) => `${p.on.toFixed(0)}/${p.off.toFixed(0)}`).join(', ')}; ${rx.bodies()} OTLP bodies received; load ${os.loadavg()[0]!.toFixed(2)}`,
    );
    process.stdout.write(
      JSON.stringify({
        bench: 'otlp_sink_on_vs_off',
        ours: Math.round(mid.on * 10) / 10,
        baseline: Math.round(mid.off * 10) / 10,
        unit: 'req/s',
        ratio: Math.round((mid.on / mid.off) * 1000) / 1000,
      }) + '\n',
    );
  } finally {
    await rx.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
