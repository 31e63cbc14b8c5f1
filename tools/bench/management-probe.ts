/**
 * `npm run bench:management-probe`: does one management-port request leave the light model's
 * path dearer (issue 28's figure)? Each run starts a server with the light `mlp`, warms it up,
 * measures load A (autocannon on `POST /predictions/mlp`), then sends ONE request (`GET /models`
 * on the management port, or `PROBE_REQUEST=<port>:<path>` with port `inference`, `management`
 * or `metrics`; a `/predictions` path is POSTed the load's body, through the fast route and not
 * express, but with fetch's headers), then measures load B. The control run is the same with no
 * request between A and B (an A/A run). Runs come as pairs, alternating which goes first; each
 * figure is the run whose B/A ratio is the median. The frontend's CPU per request is read from /proc (user + system, 10 ms
 * ticks), so a busy machine's throughput noise cancels. `PROBE_NODE_OPTIONS` is handed to the
 * server's processes as NODE_OPTIONS (e.g. `--cpu-prof --cpu-prof-dir=<dir>` to profile them).
 * `PROBE_RATE=N` holds each window at N requests a second (a saturating load's batch sizes, and
 * so its CPU per request, move with the machine's other load). `PROBE_STEADY=1` first sends, in
 * both runs, `STEADY_ROUNDS` rounds of requests to the listeners' express apps (steady-state.ts),
 * as a running server has had, so the probe request meets code already megamorphic.
 * `BENCH_SMOKE=1`: one short pair.
 */
import autocannon from 'autocannon';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MLP_HIDDEN, MLP_SEED, writeMlp } from '../models/mlp.js';
import { writeModelConfig } from '../models/model-config.js';
import { procCpuSeconds } from './proc-cpu.js';
import type { SpawnedServer } from './spawn-server.js';
import { spawnServer, stopServer } from './spawn-server.js';
import { servedByExpress } from './steady-state.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const PAIRS = SMOKE ? 1 : Number(process.env.BENCH_PAIRS ?? 3);
const MEASURE_S = SMOKE ? 1 : Number(process.env.BENCH_MEASURE_S ?? 8);
const WARMUP_S = SMOKE ? 1 : 2;
const PROBE = process.env.PROBE_REQUEST ?? 'management:/models';
const STEADY = process.env.PROBE_STEADY === '1';
/** Requests a second of each load window (autocannon's overallRate), or as fast as it can when unset. */
const RATE = process.env.PROBE_RATE === undefined ? undefined : Number(process.env.PROBE_RATE);

const note = (m: string): void => void process.stderr.write(`bench:management-probe: ${m}\n`);

/** One load window: requests/s and the frontend's CPU µs per request. */
interface Window {
  readonly rps: number;
  readonly cpuUs: number;
}

/** One run: load A, then the probe request (or none), then load B. */
interface Run {
  readonly a: Window;
  readonly b: Window;
}

/** The URL of `PROBE` (`<port>:<path>`) on a server. */
function probeUrl(s: SpawnedServer): string {
  const colon = PROBE.indexOf(':');
  const port = PROBE.slice(0, colon);
  const base = port === 'inference' ? s.inference : port === 'metrics' ? s.metrics : s.management;
  return `${base}${PROBE.slice(colon + 1)}`;
}

async function window(opts: Record<string, unknown>, pid: number): Promise<Window> {
  const cpu0 = procCpuSeconds(pid);
  const r = await autocannon({ ...opts, duration: MEASURE_S });
  const cpu = procCpuSeconds(pid) - cpu0;
  if (r.non2xx > 0 || r.errors > 0) note(`warning: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  const n = Math.max(1, r.requests.total);
  return { rps: r.requests.total / MEASURE_S, cpuUs: (cpu / n) * 1e6 };
}

async function run(store: string, root: string, tag: string, probe: boolean): Promise<Run> {
  const saved = process.env.NODE_OPTIONS;
  if (process.env.PROBE_NODE_OPTIONS !== undefined) process.env.NODE_OPTIONS = process.env.PROBE_NODE_OPTIONS;
  let server: SpawnedServer;
  try {
    server = await spawnServer(
      ['--model-store', store, '--models', 'mlp=mlp', '--log-dir', path.join(root, `logs-${tag}`)],
      root,
    );
  } finally {
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
  }
  try {
    const opts = {
      url: `${server.inference}/predictions/mlp`,
      method: 'POST' as const,
      connections: 32,
      ...(RATE === undefined ? {} : { overallRate: RATE }),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Array.from({ length: 784 }, (_v, i) => ((i * 31 + 17) % 100) / 100)),
    };
    const pid = server.proc.pid ?? 0;
    if (STEADY) await servedByExpress(server);
    await autocannon({ ...opts, duration: WARMUP_S });
    const a = await window(opts, pid);
    if (probe) {
      // A probe of /predictions is a POST of the load's body (the fast route, not express), with fetch's headers.
      const post = PROBE.includes(':/predictions');
      const r = await fetch(probeUrl(server), post ? { method: 'POST', headers: opts.headers, body: opts.body } : {});
      await r.arrayBuffer();
      if (r.status !== 200) note(`warning: the probe request answered ${r.status}`);
    }
    const b = await window(opts, pid);
    return { a, b };
  } finally {
    await stopServer(server);
  }
}

/** The run of the median B/A ratio. */
function median(runs: readonly Run[]): Run {
  const sorted = [...runs].sort((x, y) => x.b.cpuUs / x.a.cpuUs - y.b.cpuUs / y.a.cpuUs);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

const r1 = (x: number): number => Math.round(x * 10) / 10;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-probe-'));
  try {
    const dir = path.join(root, 'store', 'mlp');
    fs.mkdirSync(dir, { recursive: true });
    writeMlp(dir, { hidden: MLP_HIDDEN, seed: MLP_SEED });
    const cfg = { handler: 'onnx', model: 'model.onnx', batchSize: 32, maxBatchDelay: 5, minWorkers: 1, maxWorkers: 1 };
    writeModelConfig(dir, { ...cfg, responseTimeout: 60, threads: 1 }, 'bench:management-probe light model');
    const probed: Run[] = [];
    const control: Run[] = [];
    note(
      `probe ${PROBE}${STEADY ? ' after the steady-state requests to each express app' : ''}${RATE === undefined ? '' : ` at ${RATE} req/s`}; load ${os.loadavg()[0]!.toFixed(2)}`,
    );
    for (let i = 0; i < PAIRS; i++) {
      for (const which of i % 2 === 0 ? (['probe', 'none'] as const) : (['none', 'probe'] as const)) {
        const r = await run(path.dirname(dir), root, `${which}-${i}`, which === 'probe');
        (which === 'probe' ? probed : control).push(r);
        note(
          `${which}: A ${r.a.cpuUs.toFixed(1)} µs/req (${r.a.rps.toFixed(0)} req/s), B ${r.b.cpuUs.toFixed(1)} µs/req (${r.b.rps.toFixed(0)} req/s): B/A ${(r.b.cpuUs / r.a.cpuUs).toFixed(3)}; load ${os.loadavg()[0]!.toFixed(2)}`,
        );
      }
    }
    const p = median(probed);
    const c = median(control);
    for (const [bench, r] of [
      ['probe_light_cpu_per_request_after_vs_before', p],
      ['probe_control_light_cpu_per_request_after_vs_before', c],
    ] as const)
      process.stdout.write(
        JSON.stringify({
          bench,
          ours: r1(r.b.cpuUs),
          baseline: r1(r.a.cpuUs),
          unit: 'us',
          ratio: r3(r.b.cpuUs / r.a.cpuUs),
          better: 'lower',
        }) + '\n',
      );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
