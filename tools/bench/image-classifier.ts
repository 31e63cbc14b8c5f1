/**
 * bench:image — served image requests/s (autocannon, in-process, PUT of a JPEG, decoded and
 * resized by the server's frontend, normalized and batched by its one worker, 1 onnxruntime
 * thread) against raw onnxruntime in this process on the very tensor the server's decoder makes
 * of that image, at the model's batch size, no decode (pinned to core 0 where taskset exists).
 *
 * `image_classifier_vs_raw_ort` (goal ≥ 0.5): the model TorchServe's `image_classifier` is for, a
 * ResNet-style ImageNet classifier (tools/models/resnet-classifier.ts, ~1.4 G multiply-adds an
 * image) behind TorchServe's default preprocessing, on a 640x480 JPEG with a photo's entropy,
 * the server placed by the OS; `image_classifier_cpu_per_image`: CPU ms an image served
 * (frontend + worker, from /proc) vs raw.
 * `image_classifier_ocr_cls_vs_raw_ort` (reported): PaddleOCR's direction classifier on a JPEG
 * text line, whose inference (~1.4 ms) costs less than any decode; `…_split` with the worker on
 * core 0 and the frontend and autocannon on core 1 (where taskset exists); `…_cpu_per_image`.
 * What decode costs: `image_decode_640x480_jpeg_vs_inference` (ms of the frontend's decoder plus
 * the normalization, per image, in this process, one at a time, vs the ResNet's raw inference ms
 * per image) and `image_decode_ocr_line_vs_inference` (the text line vs the OCR classifier's).
 * `BENCH_SMOKE=1`: about 1 s per measurement, nothing judged.
 */
import autocannon from 'autocannon';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import sharp from 'sharp';
import { createSession, tensorF32 } from '../../backend/onnx/ort.js';
import { ImageDecoder } from '../../frontend/image/image-decoder.js';
import type { ImageClassifierOptions } from '../../schema/image/classifier-options.js';
import { imageInputDims, imageInputSize, parseImageClassifierOptions } from '../../schema/image/classifier-options.js';
import { imageTensor } from '../../schema/image/image-tensor.js';
import { textImage } from '../models/glyph-image.js';
import { Prng } from '../models/prng.js';
import { writeResnetClassifier } from '../models/resnet-classifier.js';
import { OCR_CLS_ONNX, OCR_CLS_OPTIONS, writeOcrCls } from '../models/ocr-cls.js';
import { SMOKE } from './smoke.js';
import { spawnServer } from './spawn-server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const MEASURE_S = SMOKE ? 1 : Number(process.env.BENCH_SECONDS ?? 6);
const WARMUP_S = SMOKE ? 0.5 : 2;
const BATCH = 8;
const CONNECTIONS = 32;
const HAVE_TASKSET = spawnSync('taskset', ['--version']).status === 0;

/** Pins `pid` (all its threads) to `cpu`; `null` lets it run on any core again. */
function pin(pid: number, cpu: number | null): void {
  const cpus = cpu === null ? `0-${os.availableParallelism() - 1}` : String(cpu);
  if (HAVE_TASKSET) spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

function note(msg: string): void {
  process.stderr.write(`# ${msg}\n`);
}

function line(bench: string, ours: number, baseline: number, unit: string): void {
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  process.stdout.write(
    `${JSON.stringify({ bench, ours: r(ours), baseline: r(baseline), unit, ratio: r(ours / baseline) })}\n`,
  );
}

const options = parseImageClassifierOptions(OCR_CLS_OPTIONS);
const refusals = { record: (): void => undefined };
const decoder = new ImageDecoder(options, () => refusals);
/** TorchServe's default preprocessing (resize 256, center crop 224, ImageNet mean/std), for the photo. */
const imagenet = new ImageDecoder(parseImageClassifierOptions({}), () => refusals);

async function tensorOf(image: Buffer, d: ImageDecoder = decoder): Promise<Float32Array> {
  const r = await d.decode(image);
  if (!('body' in r)) throw new Error(`the bench image was refused: ${r.message}`);
  const b = r.body;
  return imageTensor(d.options, { data: b.pixels, width: b.width, height: b.height, channels: b.channels });
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

/** CPU ms an image of the last raw run and of the last served run (frontend + worker). */
const cpuMs = { raw: Number.NaN, served: Number.NaN };

/** Raw onnxruntime (`file`, 1 thread) on `BATCH` copies of `one`: images/s. */
async function rawOrt(file: string, o: ImageClassifierOptions, one: Float32Array): Promise<number> {
  const session = await createSession(file, { threads: 1 });
  const data = new Float32Array(BATCH * imageInputSize(o));
  for (let i = 0; i < BATCH; i++) data.set(one, i * one.length);
  const feeds = { [session.inputNames[0]!]: tensorF32(data, imageInputDims(o, BATCH)) };
  const until = (s: number): number => performance.now() + s * 1000;
  for (const end = until(WARMUP_S); performance.now() < end;) await session.run(feeds);
  let runs = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (const end = until(MEASURE_S); performance.now() < end; runs++) await session.run(feeds);
  const perSec = (runs * BATCH) / ((performance.now() - t0) / 1000);
  const c = process.cpuUsage(c0);
  cpuMs.raw = (c.user + c.system) / 1000 / (runs * BATCH);
  await session.release();
  return perSec;
}

/** The frontend's decoder, one image at a time in this process: ms per image. */
async function decodeMs(image: Buffer, d: ImageDecoder = decoder): Promise<number> {
  const until = (s: number): number => performance.now() + s * 1000;
  for (const end = until(WARMUP_S / 2); performance.now() < end;) await tensorOf(image, d);
  let n = 0;
  const t0 = performance.now();
  for (const end = until(MEASURE_S / 2); performance.now() < end; n++) await tensorOf(image, d);
  return (performance.now() - t0) / n;
}

/** Writes one model directory of the bench's store. */
type ModelWriter = (dir: string) => void;

/** Served images/s of `model`; `split`: worker on core 0, frontend (and this process) on core 1; else the OS places them. */
async function served(
  image: Buffer,
  split: boolean,
  rawPerSec: number,
  model = 'ocr-cls',
  write?: ModelWriter,
): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-image-'));
  const store = path.join(dir, 'store');
  const cfg = { batchSize: BATCH, maxBatchDelay: 2 };
  (write ?? ((d: string) => writeOcrCls(d, ROOT, cfg)))(path.join(store, model));
  const { proc, inference, management } = await spawnServer([
    '--model-store',
    store,
    '--log-dir',
    path.join(dir, 'logs'),
    '--disable-system-metrics',
    '--job-queue-size',
    '1024',
  ]);
  try {
    const desc = (await (await fetch(`${management}/models/${model}`)).json()) as [{ workers: { pid: number }[] }];
    if (split) {
      if (proc.pid !== undefined) pin(proc.pid, 1);
      pin(desc[0].workers[0]!.pid, 0);
    }
    const opts = {
      url: `${inference}/predictions/${model}`,
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      body: image,
      connections: CONNECTIONS,
    };
    // Runs of a fixed number of requests, every one answered: a timed run left up to 32 requests
    // queued at its end (4 ResNet batches, about a second of the worker), whose work counted in
    // the next run's CPU and time but not in its requests. The measured run is sized to last
    // about MEASURE_S at raw's rate.
    await autocannon({ ...opts, amount: 2 * CONNECTIONS });
    const pids = [proc.pid ?? -1, desc[0].workers[0]!.pid];
    const c0 = pids.map(cpuSeconds);
    const r = await autocannon({ ...opts, amount: Math.max(2 * CONNECTIONS, Math.round(rawPerSec * MEASURE_S)) });
    const used = pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - c0[i]!, 0);
    cpuMs.served = (used * 1000) / r.requests.total;
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${r.non2xx} non-2xx answers, ${r.errors} errors`);
    return r.requests.total / r.duration;
  } finally {
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      if (proc.pid !== undefined) process.kill(-proc.pid, 'SIGTERM');
    });
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const page = textImage('Hello World', 8);
  const raw = { raw: { width: page.width, height: page.height, channels: 3 as const } };
  const line1 = await sharp(page.data, raw).jpeg({ quality: 90 }).toBuffer();
  // A photo's entropy (seeded noise, blurred: about 66 KB at quality 90, as a 640x480 camera
  // JPEG is), the text line on it; a flat colour decodes faster than any photo.
  const rng = new Prng(5);
  const noise = rng.normals(640 * 480 * 3, 40);
  const grain = Buffer.from(noise.map((v) => Math.max(0, Math.min(255, Math.round(128 + v)))));
  const photo = await sharp(grain, { raw: { width: 640, height: 480, channels: 3 } })
    .blur(1.5)
    .composite([{ input: await sharp(page.data, raw).png().toBuffer(), top: 184, left: 8 }])
    .jpeg({ quality: 90 })
    .toBuffer();
  const load = (): string =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  note(
    `images: 640x480 JPEG photo, ${photo.length} bytes; ${page.width}x${page.height} JPEG text line, ${line1.length} bytes; load ${load()}`,
  );
  // The goal's model: a ResNet-style classifier behind TorchServe's defaults, on the photo.
  const cfg = { batchSize: BATCH, maxBatchDelay: 2 };
  const writeResnet: ModelWriter = (d) => void writeResnetClassifier(d, cfg);
  const resnetDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-resnet-'));
  const resnetFile = writeResnetClassifier(resnetDir, cfg);
  pin(process.pid, 0);
  const resnetRaw = await rawOrt(resnetFile, imagenet.options, await tensorOf(photo, imagenet));
  pin(process.pid, null);
  fs.rmSync(resnetDir, { recursive: true, force: true });
  line(
    'image_classifier_vs_raw_ort',
    await served(photo, false, resnetRaw, 'resnet-classifier', writeResnet),
    resnetRaw,
    'images/s',
  );
  line('image_classifier_cpu_per_image', cpuMs.served, cpuMs.raw, 'ms CPU/image');
  // PaddleOCR's direction classifier: its inference costs less than the decode (reported, no goal).
  const tensor = await tensorOf(line1);
  pin(process.pid, 0);
  const ocrRaw = await rawOrt(path.join(ROOT, OCR_CLS_ONNX), options, tensor);
  pin(process.pid, null);
  line('image_classifier_ocr_cls_vs_raw_ort', await served(line1, false, ocrRaw), ocrRaw, 'images/s');
  // The same comparison in CPU, which a loaded machine distorts less than throughput: the ratio
  // is how many times the raw CPU an image costs served (frontend + worker, from /proc).
  line('image_classifier_ocr_cls_cpu_per_image', cpuMs.served, cpuMs.raw, 'ms CPU/image');
  if (HAVE_TASKSET) {
    pin(process.pid, 1);
    line('image_classifier_ocr_cls_vs_raw_ort_split', await served(line1, true, ocrRaw), ocrRaw, 'images/s');
    pin(process.pid, null);
  }
  line('image_decode_640x480_jpeg_vs_inference', await decodeMs(photo, imagenet), 1000 / resnetRaw, 'ms/image');
  line('image_decode_ocr_line_vs_inference', await decodeMs(line1), 1000 / ocrRaw, 'ms/image');
  note(`load after: ${load()}`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:image failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
