/**
 * `npm run bench:status`: what an open status page costs the light model (`mlp`, the demo's
 * 784→10 MLP). Served requests/s under autocannon with a page "open" (GET / once, then
 * `/status.json?since=T` once a second, as the page's script polls) against none, as pairs of
 * back-to-back runs alternating which goes first; the figure is the pair whose ratio is the
 * median. Prints `status_page_on_vs_off` (goal ≥ 0.99) and the frontend process's CPU per request
 * with the page open vs none (`status_page_frontend_cpu_per_request_on_vs_off`, from /proc: the
 * cost itself, which a busy machine's throughput noise hides). `BENCH_SMOKE=1`: one short pair.
 */
import autocannon from 'autocannon';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MLP_HIDDEN, MLP_SEED, writeMlp } from '../models/mlp.js';
import { writeModelConfig } from '../models/model-config.js';
import { spawnServer } from './spawn-server.js';
import { procCpuSeconds } from './proc-cpu.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const PAIRS = SMOKE ? 1 : Number(process.env.BENCH_PAIRS ?? 3);
const MEASURE_S = SMOKE ? 1 : 10;
const WARMUP_S = SMOKE ? 1 : 2;

const note = (m: string): void => void process.stderr.write(`bench:status: ${m}\n`);

/** Served requests/s of one run, with a 1 Hz poller of the page's data when `page`. */
async function run(
  store: string,
  root: string,
  tag: string,
  page: boolean,
): Promise<{ rps: number; polls: number; cpuPerRequest: number }> {
  const server = await spawnServer(
    ['--model-store', store, '--models', 'mlp=mlp', '--log-dir', path.join(root, `logs-${tag}`)],
    root,
  );
  let polls = 0;
  let timer: NodeJS.Timeout | null = null;
  try {
    const opts = {
      url: `${server.inference}/predictions/mlp`,
      method: 'POST' as const,
      connections: 32,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Array.from({ length: 784 }, (_v, i) => ((i * 31 + 17) % 100) / 100)),
    };
    await autocannon({ ...opts, duration: WARMUP_S });
    if (page) {
      await (await fetch(`${server.management}/`)).text();
      let since = 0;
      timer = setInterval(() => {
        void fetch(`${server.management}/status.json${since > 0 ? `?since=${since}` : ''}`)
          .then((r) => r.json() as Promise<{ charts: { requestsPerS: Array<[number, number | null]> } }>)
          .then((s) => {
            polls++;
            const last = s.charts.requestsPerS[s.charts.requestsPerS.length - 1];
            if (last !== undefined) since = last[0];
          })
          .catch(() => undefined);
      }, 1000);
    }
    const pid = server.proc.pid ?? 0;
    const cpu0 = procCpuSeconds(pid);
    const r = await autocannon({ ...opts, duration: MEASURE_S });
    const cpu = procCpuSeconds(pid) - cpu0;
    if (r.non2xx > 0 || r.errors > 0) note(`warning: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    return { rps: r.requests.total / MEASURE_S, polls, cpuPerRequest: cpu / Math.max(1, r.requests.total) };
  } finally {
    if (timer !== null) clearInterval(timer);
    const exited = new Promise<void>((r) => server.proc.once('exit', () => r()));
    server.proc.kill('SIGTERM');
    await exited;
  }
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-status-'));
  try {
    const dir = path.join(root, 'store', 'mlp');
    fs.mkdirSync(dir, { recursive: true });
    writeMlp(dir, { hidden: MLP_HIDDEN, seed: MLP_SEED });
    const cfg = { handler: 'onnx', model: 'model.onnx', batchSize: 32, maxBatchDelay: 5, minWorkers: 1, maxWorkers: 1 };
    writeModelConfig(dir, { ...cfg, responseTimeout: 60, threads: 1 }, 'bench:status light model');
    const pairs: Array<{ on: number; off: number; polls: number; onCpu: number; offCpu: number }> = [];
    for (let i = 0; i < PAIRS; i++) {
      const p = { on: 0, off: 0, polls: 0, onCpu: 0, offCpu: 0 };
      for (const which of i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const r = await run(path.dirname(dir), root, `${which}-${i}`, which === 'on');
        p[which] = r.rps;
        if (which === 'on') {
          p.polls = r.polls;
          p.onCpu = r.cpuPerRequest;
        } else p.offCpu = r.cpuPerRequest;
      }
      pairs.push(p);
    }
    pairs.sort((a, b) => a.on / a.off - b.on / b.off);
    const mid = pairs[Math.floor((pairs.length - 1) / 2)]!;
    note(
      `pairs (page open / none, req/s): ${pairs.map((p) => `${p.on.toFixed(0)}/${p.off.toFixed(0)} (${p.polls} polls)`).join(', ')}; load ${os.loadavg()[0]!.toFixed(2)}`,
    );
    process.stdout.write(
      JSON.stringify({
        bench: 'status_page_on_vs_off',
        ours: Math.round(mid.on * 10) / 10,
        baseline: Math.round(mid.off * 10) / 10,
        unit: 'req/s',
        ratio: Math.round((mid.on / mid.off) * 1000) / 1000,
      }) + '\n',
    );
    // The frontend process's own CPU per request, page open vs none (the machine's noise cancels).
    const byCpu = [...pairs].sort((a, b) => a.onCpu / a.offCpu - b.onCpu / b.offCpu);
    const midCpu = byCpu[Math.floor((byCpu.length - 1) / 2)]!;
    process.stdout.write(
      JSON.stringify({
        bench: 'status_page_frontend_cpu_per_request_on_vs_off',
        ours: Math.round(midCpu.onCpu * 1e7) / 10,
        baseline: Math.round(midCpu.offCpu * 1e7) / 10,
        unit: 'us',
        ratio: Math.round((midCpu.onCpu / midCpu.offCpu) * 1000) / 1000,
        better: 'lower',
      }) + '\n',
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
