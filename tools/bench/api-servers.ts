/**
 * `npm run bench:api-servers` — api_servers_2_vs_1: served req/s of the demo `mlp` (light: the
 * frontend's per-request CPU sets the pace) with `--api-server-count 2` against 1, the server
 * and the load generator (autocannon, in this process, 64 connections, JSON bodies) sharing
 * both cores, unpinned. One JSON line `{"bench","ours","baseline","unit","ratio"}`.
 */
import autocannon from 'autocannon';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawnServer } from './spawn-server.js';

const CLI = path.resolve(import.meta.dirname, '..', '..', '..', 'bin', 'tsserve.js');
const WARMUP_S = 2;
const MEASURE_S = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const WIDTH = 784;

function note(msg: string): void {
  process.stderr.write(`# ${msg}\n`);
}

/** The machine's CPU time so far, all cores, in clock ticks (/proc/stat's `cpu` line): idle (idle + iowait) and total. */
function machineCpu(): { idle: number; total: number } {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { idle: f[3]! + f[4]!, total: f.reduce((a, b) => a + b, 0) };
}

/** req/s of `mlp` served with `count` API servers. */
async function served(store: string, count: number): Promise<number> {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-api-'));
  const server = await spawnServer(['--model-store', store, '--models', 'mlp=mlp', '--log-dir', logDir, '--api-server-count', String(count)], logDir);
  try {
    const body = JSON.stringify(Array.from({ length: WIDTH }, (_v, i) => ((i * 31 + 17) % 100) / 100));
    const opts = { url: `${server.inference}/predictions/mlp`, method: 'POST' as const, connections: CONNECTIONS, headers: { 'content-type': 'application/json' }, body };
    await autocannon({ ...opts, duration: WARMUP_S });
    const cpu0 = machineCpu();
    const self0 = process.cpuUsage();
    const r = await autocannon({ ...opts, duration: MEASURE_S });
    const cpu1 = machineCpu();
    const self = process.cpuUsage(self0);
    if (r.non2xx > 0 || r.errors > 0) note(`warning: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    const rps = r.requests.total / MEASURE_S;
    // How full the two cores were: whether a second front had any CPU left to use.
    const busy = (1 - (cpu1.idle - cpu0.idle) / (cpu1.total - cpu0.total)) * 100;
    const loadGen = ((self.user + self.system) / 1e6 / MEASURE_S) * 100;
    note(`api servers ${count}: ${Math.round(rps)} req/s; both cores ${busy.toFixed(0)}% busy, of which autocannon ${loadGen.toFixed(0)}% of one core`);
    return rps;
  } finally {
    const exited = new Promise((resolve) => server.proc.once('exit', resolve));
    server.proc.kill('SIGTERM');
    await exited;
    fs.rmSync(logDir, { recursive: true, force: true });
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-api-store-'));
const store = path.join(dir, 'store');
const gen = spawnSync(process.execPath, [CLI, 'models', 'generate', store, '--only', 'mlp'], { encoding: 'utf8' });
if (gen.status !== 0) throw new Error(`tsserve models generate failed: ${gen.stderr}`);
try {
  note(`${os.availableParallelism()} CPUs; server and autocannon unpinned; ${CONNECTIONS} connections; ${MEASURE_S} s per run`);
  const one = await served(store, 1);
  const two = await served(store, 2);
  process.stdout.write(JSON.stringify({ bench: 'api_servers_2_vs_1', ours: Math.round(two * 10) / 10, baseline: Math.round(one * 10) / 10, unit: 'req/s', ratio: Math.round((two / one) * 1000) / 1000 }) + '\n');
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
