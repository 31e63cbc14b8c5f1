/**
 * The built-in `image_classifier` handler on the real server serving a realistic-size classifier
 * generated here (tools/models/resnet-classifier.ts: ResNet-style, [N, 3, 224, 224] → 1000
 * classes, seeded, with a 1000-entry index_to_name.json in TorchServe's `[wnid, name]` format)
 * behind TorchServe's default preprocessing: each answer is exactly the 5 best labels of
 * softmax(raw onnxruntime-node) on the tensor the frontend's decoder makes of the same JPEG, each
 * probability within 1e-5, for photos sent together (batched in one run) as for one alone.
 */
import { expect } from 'chai';
import * as path from 'path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { resizePlan } from '../../frontend/image/resize-plan.js';
import { readImageHeader } from '../../frontend/image/image-header.js';
import { decodeResized } from '../../frontend/image/sharp-image.js';
import { parseImageClassifierOptions } from '../../schema/image/classifier-options.js';
import { imageTensor } from '../../schema/image/image-tensor.js';
import { textImage } from '../../tools/models/glyph-image.js';
import { RESNET_CLASSES, resnetLabel, writeResnetClassifier } from '../../tools/models/resnet-classifier.js';
import { startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

/** A 640x480 JPEG photo: a background colour and a line of text. */
async function photo(background: string, text: string): Promise<Buffer> {
  const t = textImage(text, 6);
  const line = await sharp(t.data, { raw: { width: t.width, height: t.height, channels: 3 } })
    .png()
    .toBuffer();
  return sharp({ create: { width: 640, height: 480, channels: 3, background } })
    .composite([{ input: line, top: 150, left: 20 }])
    .jpeg({ quality: 90 })
    .toBuffer();
}

describe('image_classifier serving a generated ResNet-style ImageNet classifier (real tsserve start, real onnxruntime)', function () {
  this.timeout(180_000);
  let server: Tsserve;
  let session: ort.InferenceSession;
  const options = parseImageClassifierOptions({});

  before(async () => {
    const store = path.join(tempDir('resnet-store'), 'store');
    const file = writeResnetClassifier(path.join(store, 'resnet'), { batchSize: 4, maxBatchDelay: 200 });
    server = await startTsserve({ store, args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'] });
    session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
  });

  after(async () => {
    await server?.stop('SIGTERM');
    await session?.release();
  });

  /** The 5 best [label, probability] of softmax(raw onnxruntime) on the decoder's tensor of `jpeg`. */
  async function rawTop5(jpeg: Buffer): Promise<[string, number][]> {
    const header = readImageHeader(jpeg);
    if ('reason' in header) throw new Error(header.message);
    const px = await decodeResized(jpeg, resizePlan(options, header), options.maxPixels, 10);
    if ('reason' in px) throw new Error(px.message);
    const out = await session.run({ input: new ort.Tensor('float32', imageTensor(options, px), [1, 3, 224, 224]) });
    const logits = Array.from(out['logits']!.data as Float32Array);
    expect(logits.length).to.equal(RESNET_CLASSES);
    const max = Math.max(...logits);
    const sum = logits.reduce((a, l) => a + Math.exp(l - max), 0);
    return logits
      .map((l, i) => [resnetLabel(i), Math.exp(l - max) / sum] as [string, number])
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5);
  }

  async function served(jpeg: Buffer): Promise<[string, number][]> {
    const res = await fetch(`${server.inference}/predictions/resnet`, { method: 'PUT', body: jpeg });
    expect(res.status).to.equal(200);
    return Object.entries((await res.json()) as Record<string, number>);
  }

  function expectTop5(got: [string, number][], want: [string, number][]): void {
    expect(got.map(([k]) => k)).to.deep.equal(want.map(([k]) => k));
    got.forEach(([k, v], i) => expect(v, k).to.be.closeTo(want[i]![1], 1e-5));
  }

  it('should answer one photo with the 5 best labels of softmax(raw onnxruntime) on the same decoded tensor', async () => {
    const jpeg = await photo('#3070c0', 'Hello World');
    expectTop5(await served(jpeg), await rawTop5(jpeg));
  });

  it('should answer three photos sent at once (batched: batchSize 4, maxBatchDelay 200 ms) each as raw onnxruntime answers it alone', async () => {
    const jpegs = await Promise.all([
      photo('#c03070', 'The Label'),
      photo('#70c030', 'A cat'),
      photo('#202020', 'Serving images'),
    ]);
    const got = await Promise.all(jpegs.map((j) => served(j)));
    const want = await Promise.all(jpegs.map((j) => rawTop5(j)));
    // The three raw answers differ, so an answer given to the wrong request would fail below.
    expect(new Set(want.map((w) => JSON.stringify(w))).size).to.equal(3);
    for (let i = 0; i < jpegs.length; i++) expectTop5(got[i]!, want[i]!);
  });
});
