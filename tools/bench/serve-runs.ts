/**
 * The machinery of `bench:serve` (tools/bench/serve.ts): the raw onnxruntime baseline, a served
 * run under autocannon with its processes pinned and their CPU read from /proc, the bare
 * node:http floor, and the stores of the two models. Each export says what it measures.
 */
import autocannon from 'autocannon';
import { spawnSync } from 'child_process';
import type { ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { createSession, tensorF32 } from '../../backend/onnx/ort.js';
import { writeMlpHeavy } from '../models/demo-models.js';
import { MLP_HIDDEN, MLP_SEED, writeMlp } from '../models/mlp.js';
import { writeModelConfig } from '../models/model-config.js';
import { spawnServer } from './spawn-server.js';
import { startHttpFloor } from './http-floor.js';
import type { FloorMode } from './http-floor.js';
import { smoke } from './smoke.js';

const WIDTH = 784;
/** Seconds of autocannon before each measured run (none in smoke mode). */
export const WARMUP_S = smoke(2, 0);
/** Seconds of each measured served run (BENCH_SECONDS). */
export const MEASURE_S = Number(process.env.BENCH_SECONDS ?? smoke(5, 1));
/** Seconds of each raw baseline measurement (run twice: before and after the served runs). */
const RAW_S = smoke(4, 1);
/** autocannon's connections (BENCH_CONNECTIONS). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);

/** Whether `taskset` is there to pin processes to cores. */
export const HAVE_TASKSET = spawnSync('taskset', ['--version']).status === 0;

/** Pins every thread of `pid` to core `cpu` (when taskset is there). */
export function pin(pid: number, cpu: number): void {
  if (HAVE_TASKSET) spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

/** A note on stderr (the JSON figures go to stdout). */
export function note(msg: string): void {
  process.stderr.write(`# ${msg}\n`);
}

function input(seed: number): number[] {
  return Array.from({ length: WIDTH }, (_v, i) => ((i * 31 + seed * 17) % 100) / 100);
}

/**
 * CPU seconds per item of the last measurement: per request of the server (its worker and
 * frontend together), or per sample of the raw baseline. On a loaded shared machine the
 * throughputs fall with the CPU share each run gets; the CPU cost per item much less.
 */
export let lastCpuPerItem = Number.NaN;
/** The same split by process: [worker, frontend] CPU seconds per request of the last served run. */
export let lastCpuSplit: [number, number] = [Number.NaN, Number.NaN];

/** Raw onnxruntime, in this process: samples/s at `batch`, 1 thread. */
export async function rawOrt(modelFile: string, batch: number): Promise<number> {
  const session = await createSession(modelFile, { threads: 1 });
  const data = new Float32Array(batch * WIDTH);
  for (let i = 0; i < data.length; i++) data[i] = (i % 100) / 100;
  const feeds = { [session.inputNames[0]!]: tensorF32(data, [batch, WIDTH]) };
  const until = (s: number): number => performance.now() + s * 1000;
  for (const end = until(1); performance.now() < end;) await session.run(feeds);
  let runs = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (const end = until(RAW_S); performance.now() < end; runs++) await session.run(feeds);
  const secs = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  lastCpuPerItem = (c.user + c.system) / 1e6 / (runs * batch);
  await session.release();
  return (runs * batch) / secs;
}

interface Server {
  readonly proc: ChildProcess;
  readonly model: string;
  readonly inference: string;
  readonly management: string;
  readonly workerPid: number;
  stop(): Promise<void>;
}

/** Where the server's processes run: `split` worker core 0, frontend core 1; `one` both on core 0. */
type Placement = 'split' | 'one';

/** CPU seconds (user + system) a process has used so far, from /proc; NaN where unavailable. */
function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return Number.NaN;
  }
}

async function startServer(
  store: string,
  model: string,
  logDir: string,
  extra: readonly string[],
  placement: Placement,
): Promise<Server> {
  const { proc, inference, management } = await spawnServer([
    '--model-store',
    store,
    '--log-dir',
    logDir,
    '--disable-system-metrics',
    '--job-queue-size',
    '1024',
    ...extra,
  ]);
  const desc = (await (await fetch(`${management}/models/${model}`)).json()) as Array<{
    workers: Array<{ pid: number }>;
  }>;
  if (proc.pid !== undefined) pin(proc.pid, placement === 'split' ? 1 : 0);
  for (const w of desc[0]!.workers) pin(w.pid, 0);
  return {
    proc,
    model,
    inference,
    management,
    workerPid: desc[0]!.workers[0]!.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => {
          try {
            process.kill(-(proc.pid as number), 'SIGKILL');
          } catch {
            /* gone */
          }
        }, 20_000).unref();
      }),
  };
}

/** Waits until requests left over from the previous run (autocannon stops without them) are served. */
async function settle(server: Server): Promise<void> {
  for (;;) {
    const d = (await (await fetch(`${server.management}/models/${server.model}`)).json()) as Array<{
      jobQueueStatus: { pendingRequests: number };
    }>;
    if (d[0]!.jobQueueStatus.pendingRequests === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 200));
}

/** How requests carry the input: a JSON array, a float32 binary body, or an Open Inference Protocol JSON request. */
type Body = 'json' | 'binary' | 'oip';

/** Served samples/s (one sample per request) under autocannon, bodies of kind `body`. */
async function load(server: Server, tag: string, body: Body): Promise<number> {
  const bodies: Record<Body, { url: string; headers: Record<string, string>; body: string | Buffer }> = {
    json: {
      url: `${server.inference}/predictions/${server.model}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input(1)),
    },
    binary: {
      url: `${server.inference}/predictions/${server.model}`,
      headers: { 'content-type': 'application/octet-stream', 'x-tensor-shape': `1,${WIDTH}` },
      body: Buffer.from(Float32Array.from(input(1)).buffer),
    },
    oip: {
      url: `${server.inference}/v2/models/${server.model}/infer`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'input', shape: [1, WIDTH], datatype: 'FP32', data: input(1) }] }),
    },
  };
  const opts = { method: 'POST', connections: CONNECTIONS, ...bodies[body] };
  if (WARMUP_S > 0) await autocannon({ ...opts, duration: WARMUP_S });
  await settle(server);
  const pids = [server.workerPid, server.proc.pid ?? 0, process.pid];
  const cpu0 = pids.map(cpuSeconds);
  const r = await autocannon({ ...opts, duration: MEASURE_S });
  const used = pids.map((p, i) => cpuSeconds(p) - cpu0[i]!);
  const busy = used.map((s) => Math.round((s / MEASURE_S) * 100));
  lastCpuPerItem = (used[0]! + used[1]!) / r.requests.total;
  lastCpuSplit = [used[0]! / r.requests.total, used[1]! / r.requests.total];
  note(`  [${tag}] cpu busy: worker ${busy[0]}%, frontend ${busy[1]}%, autocannon ${busy[2]}%`);
  if (r.non2xx > 0 || r.errors > 0) note(`warning: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return r.requests.total / MEASURE_S;
}

/**
 * CPU seconds per request of the bare node:http floor (tools/bench/http-floor.ts; `mode`
 * decode: with the JSON tensor decode) on core 0 under the same autocannon load and JSON body
 * as the light server.
 */
export async function httpFloorCpuPerRequest(mode: FloorMode = 'bare'): Promise<number> {
  const floor = await startHttpFloor(mode);
  try {
    if (floor.proc.pid !== undefined) pin(floor.proc.pid, 0);
    const opts = {
      url: floor.url,
      method: 'POST' as const,
      connections: CONNECTIONS,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input(1)),
    };
    if (WARMUP_S > 0) await autocannon({ ...opts, duration: WARMUP_S });
    const c0 = cpuSeconds(floor.proc.pid ?? 0);
    const r = await autocannon({ ...opts, duration: MEASURE_S });
    const used = cpuSeconds(floor.proc.pid ?? 0) - c0;
    if (r.non2xx > 0 || r.errors > 0) note(`warning: http floor: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    note(
      `  [http-floor${mode === 'bare' ? '' : ` ${mode}`}] ${(r.requests.total / MEASURE_S).toFixed(0)} req/s, cpu busy ${Math.round((used / MEASURE_S) * 100)}%`,
    );
    return used / r.requests.total;
  } finally {
    await floor.stop();
  }
}

/** A store with `mlp-heavy` at batch size `batchSize`, 5 ms. */
export function makeStore(root: string, batchSize: number): string {
  const store = path.join(root, `store-b${batchSize}`);
  fs.mkdirSync(path.join(store, 'mlp-heavy'), { recursive: true });
  writeMlpHeavy(path.join(store, 'mlp-heavy'), { batchSize, maxBatchDelay: 5 });
  return store;
}

/** A store with the demo `mlp` on the issue's settings: batch 32, 5 ms, one worker, 1 thread. */
export function makeLightStore(root: string): string {
  const dir = path.join(root, 'store-light', 'mlp');
  fs.mkdirSync(dir, { recursive: true });
  writeMlp(dir, { hidden: MLP_HIDDEN, seed: MLP_SEED });
  writeModelConfig(
    dir,
    {
      handler: 'onnx',
      model: 'model.onnx',
      batchSize: 32,
      maxBatchDelay: 5,
      minWorkers: 1,
      maxWorkers: 1,
      responseTimeout: 60,
      threads: 1,
    },
    'bench:serve light model',
  );
  return path.dirname(dir);
}

/** Which model a served run loads, where its processes run, and the body kind. */
export interface Run {
  readonly model: string;
  readonly placement: Placement;
  readonly body?: Body;
}

const HEAVY: Run = { model: 'mlp-heavy', placement: 'split' };
/** The light model's run: the demo mlp, the whole server on core 0. */
export const LIGHT: Run = { model: 'mlp', placement: 'one' };

/** Starts a server on `store`, loads it with autocannon, stops it: served samples/s (req/s). */
export async function served(
  store: string,
  root: string,
  tag: string,
  extra: readonly string[],
  run: Run = HEAVY,
): Promise<number> {
  const logDir = path.join(root, `logs-${tag}`);
  const server = await startServer(store, run.model, logDir, extra, run.placement);
  try {
    return await load(server, tag, run.body ?? 'json');
  } finally {
    await server.stop();
  }
}

/**
 * Mean `PredictionTime` (ms) of the full batches of a served run, from the server's own
 * model_metrics.log (one line per batch, its request ids in the `requestID` dimension): how long
 * the worker's onnxruntime took for the same 32-row input the raw baseline runs.
 */
export function fullBatchPredictionMs(logDir: string, batch: number): number {
  let sum = 0;
  let n = 0;
  let text: string;
  try {
    text = fs.readFileSync(path.join(logDir, 'model_metrics.log'), 'utf8');
  } catch {
    return Number.NaN;
  }
  for (const l of text.split('\n')) {
    const m = /PredictionTime\.ms:([\d.]+)\|.*requestID:([^,]*)/.exec(l);
    if (m === null || m[2]!.split('%2C').length !== batch) continue;
    sum += Number(m[1]);
    n++;
  }
  return n === 0 ? Number.NaN : sum / n;
}
