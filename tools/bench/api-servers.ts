/**
 * `npm run bench:api-servers` — api_servers_2_vs_1: served req/s of the demo `mlp` (light: the
 * frontend's per-request CPU sets the pace) with `--api-server-count 2` against 1, the server
 * and the load generator (autocannon, in this process, 64 connections, JSON bodies) sharing
 * both cores, unpinned. Three JSON lines `{"bench","ours","baseline","unit","ratio"}`:
 *
 * - `api_servers_2_vs_1`: req/s with 2 fronts over req/s with 1.
 * - `api_servers_cpu_ceiling`: the machine's ceiling for that ratio, measured in the N=1 run:
 *   all cores' time over the CPU time N=1 used (server and load generator). If every request
 *   cost no more CPU than it does with one front, no front count could serve more than this
 *   many times N=1's req/s on this machine.
 * - `api_servers_cpu_per_request_2_vs_1`: the server's own CPU per request (µs: its primary,
 *   fronts and worker, from /proc), N=2 over N=1 (above 1: a request costs more CPU with two
 *   fronts). Goal ≤ 1.1.
 * `api_servers_2_vs_1` carries `nproc`: its goal (≥ 1.5) applies only where nproc ≥ 4.
 */
import { printFigure } from './figure-line.js';
import autocannon from 'autocannon';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawnServer } from './spawn-server.js';
import { smoke } from './smoke.js';

const CLI = path.resolve(import.meta.dirname, '..', '..', '..', 'bin', 'tsserve.js');
const WARMUP_S = smoke(2, 0);
const MEASURE_S = Number(process.env.BENCH_SECONDS ?? smoke(5, 1));
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

/**
 * CPU seconds (user + system, clock ticks of USER_HZ 100) used so far by `root` and every
 * process under it (/proc/PID/stat): the server's primary, its fronts and its workers. Unlike
 * the machine's busy share, other jobs on a shared machine do not count in it.
 */
function treeCpuSeconds(root: number): number {
  const procs = new Map<number, { ppid: number; ticks: number }>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(d), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      /* gone meanwhile */
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = procs.get(p)?.ppid ?? 0, hops++) if (p === root) return true;
    return false;
  };
  let ticks = 0;
  for (const [pid, p] of procs) if (inTree(pid)) ticks += p.ticks;
  return ticks / 100;
}

/** One run: req/s, the machine's busy share of all cores (0..1), and the server's own CPU a request (s). */
interface Served {
  readonly rps: number;
  readonly busy: number;
  readonly serverCpuPerRequest: number;
}

/** req/s of `mlp` served with `count` API servers. */
async function served(store: string, count: number): Promise<Served> {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-api-'));
  const server = await spawnServer(
    ['--model-store', store, '--models', 'mlp=mlp', '--log-dir', logDir, '--api-server-count', String(count)],
    logDir,
  );
  try {
    const body = JSON.stringify(Array.from({ length: WIDTH }, (_v, i) => ((i * 31 + 17) % 100) / 100));
    const opts = {
      url: `${server.inference}/predictions/mlp`,
      method: 'POST' as const,
      connections: CONNECTIONS,
      headers: { 'content-type': 'application/json' },
      body,
    };
    if (WARMUP_S > 0) await autocannon({ ...opts, duration: WARMUP_S });
    const cpu0 = machineCpu();
    const tree0 = treeCpuSeconds(server.proc.pid ?? 0);
    const self0 = process.cpuUsage();
    const r = await autocannon({ ...opts, duration: MEASURE_S });
    const cpu1 = machineCpu();
    const serverCpuPerRequest = (treeCpuSeconds(server.proc.pid ?? 0) - tree0) / r.requests.total;
    const self = process.cpuUsage(self0);
    if (r.non2xx > 0 || r.errors > 0) note(`warning: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    const rps = r.requests.total / MEASURE_S;
    // How full the two cores were: whether a second front had any CPU left to use.
    const busy = 1 - (cpu1.idle - cpu0.idle) / (cpu1.total - cpu0.total);
    const loadGen = ((self.user + self.system) / 1e6 / MEASURE_S) * 100;
    note(
      `api servers ${count}: ${Math.round(rps)} req/s; all cores ${(busy * 100).toFixed(0)}% busy, of which autocannon ${loadGen.toFixed(0)}% of one core; ${((busy * os.availableParallelism() * 1e6) / rps).toFixed(0)} µs machine CPU a request; the server's own processes ${(serverCpuPerRequest * 1e6).toFixed(1)} µs a request`,
    );
    return { rps, busy, serverCpuPerRequest };
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
  note(
    `${os.availableParallelism()} CPUs; server and autocannon unpinned; ${CONNECTIONS} connections; ${MEASURE_S} s per run`,
  );
  const one = await served(store, 1);
  const two = await served(store, 2);
  const line = printFigure;
  // The goal (≥ 1.5) holds only where there are cores for a second front: nproc ≥ 4.
  line('api_servers_2_vs_1', two.rps, one.rps, 'req/s', { nproc: os.availableParallelism() });
  line('api_servers_cpu_ceiling', one.rps / one.busy, one.rps, 'req/s');
  // The server's own CPU a request (µs: primary, fronts and worker), N=2 over N=1: ≤ 1.1 is the goal.
  line(
    'api_servers_cpu_per_request_2_vs_1',
    two.serverCpuPerRequest * 1e6,
    one.serverCpuPerRequest * 1e6,
    'µs server CPU per request',
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
