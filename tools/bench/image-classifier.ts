/**
 * bench:image — `image_classifier_vs_raw_ort`: image requests/s served (autocannon, in-process,
 * PUT of a JPEG text line, decoded and resized by the server's frontend, normalized and batched
 * by its one worker: PaddleOCR's direction classifier, 1 onnxruntime thread) against raw
 * onnxruntime in this process on the very tensor the server's decoder makes of that image, at
 * the model's batch size, no decode (pinned to core 0 where taskset exists). Goal ≥ 0.5. The
 * server runs twice: placed by the OS (`image_classifier_vs_raw_ort`), and, where taskset exists,
 * split (`…_split`: the worker on core 0, the frontend with its decoding and autocannon on core 1).
 *
 * Also prints what decode costs: `image_decode_vs_inference` (ms of the frontend's decoder, plus
 * the normalization, per image, in this process, one at a time, vs raw inference ms per image) for the bench's text
 * line and `image_decode_640x480_jpeg_224_vs_inference` for a 640x480 JPEG through TorchServe's
 * default preprocessing (resize 256, center crop 224).
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
import { imageInputDims, imageInputSize, parseImageClassifierOptions } from '../../schema/image/classifier-options.js';
import { imageTensor } from '../../schema/image/image-tensor.js';
import { textImage } from '../models/glyph-image.js';
import { OCR_CLS_ONNX, OCR_CLS_OPTIONS, writeOcrCls } from '../models/ocr-cls.js';
import { spawnServer } from './spawn-server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const SMOKE = process.env.BENCH_SMOKE === '1';
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

/** Raw onnxruntime on `BATCH` copies of `one`: images/s (and ms per image). */
async function rawOrt(one: Float32Array): Promise<number> {
  const session = await createSession(path.join(ROOT, OCR_CLS_ONNX), { threads: 1 });
  const data = new Float32Array(BATCH * imageInputSize(options));
  for (let i = 0; i < BATCH; i++) data.set(one, i * one.length);
  const feeds = { [session.inputNames[0]!]: tensorF32(data, imageInputDims(options, BATCH)) };
  const until = (s: number): number => performance.now() + s * 1000;
  for (const end = until(WARMUP_S); performance.now() < end;) await session.run(feeds);
  let runs = 0;
  const t0 = performance.now();
  for (const end = until(MEASURE_S); performance.now() < end; runs++) await session.run(feeds);
  const perSec = (runs * BATCH) / ((performance.now() - t0) / 1000);
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

/** Served images/s; `split`: worker on core 0, frontend (and this process) on core 1; else the OS places them. */
async function served(image: Buffer, split: boolean): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bench-image-'));
  const store = path.join(dir, 'store');
  writeOcrCls(path.join(store, 'ocr-cls'), ROOT, { batchSize: BATCH, maxBatchDelay: 2 });
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
    const desc = (await (await fetch(`${management}/models/ocr-cls`)).json()) as [{ workers: { pid: number }[] }];
    if (split) {
      if (proc.pid !== undefined) pin(proc.pid, 1);
      pin(desc[0].workers[0]!.pid, 0);
    }
    const opts = {
      url: `${inference}/predictions/ocr-cls`,
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      body: image,
      connections: CONNECTIONS,
    };
    await autocannon({ ...opts, duration: WARMUP_S });
    const r = await autocannon({ ...opts, duration: MEASURE_S });
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
  const photo = await sharp({
    create: { width: 640, height: 480, channels: 3, background: { r: 120, g: 160, b: 200 } },
  })
    .composite([{ input: await sharp(page.data, raw).png().toBuffer(), top: 184, left: 8 }])
    .jpeg({ quality: 90 })
    .toBuffer();
  const load = (): string =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  note(`image: ${page.width}x${page.height} JPEG text line, ${line1.length} bytes; load ${load()}`);
  const tensor = await tensorOf(line1);
  pin(process.pid, 0);
  const rawPerSec = await rawOrt(tensor);
  pin(process.pid, null);
  line('image_classifier_vs_raw_ort', await served(line1, false), rawPerSec, 'images/s');
  if (HAVE_TASKSET) {
    pin(process.pid, 1);
    line('image_classifier_vs_raw_ort_split', await served(line1, true), rawPerSec, 'images/s');
    pin(process.pid, null);
  }
  const inferMs = 1000 / rawPerSec;
  line('image_decode_vs_inference', await decodeMs(line1), inferMs, 'ms/image');
  line('image_decode_640x480_jpeg_224_vs_inference', await decodeMs(photo, imagenet), inferMs, 'ms/image');
  note(`load after: ${load()}`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:image failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
