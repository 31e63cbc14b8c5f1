/**
 * The real server with the built-in `onnx` handler on a generated model of several named inputs
 * (ids INT64 [N,*], mask BOOL [N,*], scale FP16 [N,4]) and two outputs (kept INT64, scaled
 * FP32): exact answers through /predictions (a JSON object of named inputs) and the Open
 * Inference Protocol (JSON and binary, a 64-bit integer beyond 2^53 kept whole); and every bad
 * input answered with its exact 400 before any worker runs it (OnnxRequestCount unchanged).
 */
import { expect } from 'chai';
import * as path from 'node:path';
import { writeFixedShapeModel, writeMultiInputModel } from '../../tools/models/multi-input.js';
import { configArgs } from './config-args.js';
import { Scrape, delta } from './generation-helpers.js';
import { post, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

/** The error text of a 400, in either body shape (TorchServe's `message`, the protocol's `error`). */
function errorOf(a: { json: unknown }): string {
  const j = a.json as { error?: string; message?: string };
  return j.error ?? j.message ?? JSON.stringify(a.json);
}

describe('built-in onnx handler on a multi-input model: INT64, BOOL, FP16 inputs, two outputs (real tsserve start)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  let base = '';

  before(async () => {
    const store = path.join(tempDir('tensor-store'), 'store');
    writeMultiInputModel(path.join(store, 'multi'));
    writeMultiInputModel(path.join(store, 'tight'), ['tensors:', '  maxBatchBytes: 64']);
    writeFixedShapeModel(path.join(store, 'fixed'));
    server = await startTsserve({
      store,
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics', '--models', 'all'],
    });
    base = server.inference;
  });

  after(() => server?.kill());

  it('should answer a /predictions object of named inputs with every output by name, exactly', async () => {
    const a = await post(`${base}/predictions/multi`, {
      ids: [7, -2, 9007199254740991],
      mask: [true, false, true],
      scale: [0.5, 1.5, -2, 65504],
    });
    expect(a.status).to.equal(200);
    expect(a.json).to.deep.equal({ kept: [7, 0, 9007199254740991], scaled: [1, 3, -4, 131008] });
  });

  it('should answer an OIP JSON request of 2 rows with each output named, its datatype and its shape [2, …]', async () => {
    const a = await post(`${base}/v2/models/multi/infer`, {
      id: 'r1',
      inputs: [
        {
          name: 'ids',
          shape: [2, 2],
          datatype: 'INT64',
          data: [
            [1, 2],
            [3, 4],
          ],
        },
        { name: 'mask', shape: [2, 2], datatype: 'BOOL', data: [true, false, false, true] },
        { name: 'scale', shape: [2, 4], datatype: 'FP16', data: [1, 2, 3, 4, 5, 6, 7, 0.1] },
      ],
    });
    expect(a.status).to.equal(200);
    // 0.1 in float16 is 0.0999755859375; doubled in float32, 0.199951171875.
    expect(a.json).to.deep.equal({
      model_name: 'multi',
      model_version: '1.0',
      id: 'r1',
      outputs: [
        { name: 'kept', shape: [2, 2], datatype: 'INT64', data: [1, 0, 0, 4] },
        { name: 'scaled', shape: [2, 4], datatype: 'FP32', data: [2, 4, 6, 8, 10, 12, 14, 0.199951171875] },
      ],
    });
  });

  it('should carry an INT64 beyond 2^53 whole through the binary extension, in binary and in JSON outputs', async () => {
    const ids = new BigInt64Array([2n ** 60n + 1n, -(2n ** 62n) - 3n]);
    const mask = new Uint8Array([1, 1]);
    const scale = new Uint16Array([0x3c00, 0x4000, 0xbc00, 0]); // 1, 2, -1, 0 as float16
    const header = Buffer.from(
      JSON.stringify({
        inputs: [
          { name: 'ids', shape: [1, 2], datatype: 'INT64', parameters: { binary_data_size: 16 } },
          { name: 'mask', shape: [1, 2], datatype: 'BOOL', parameters: { binary_data_size: 2 } },
          { name: 'scale', shape: [1, 4], datatype: 'FP16', parameters: { binary_data_size: 8 } },
        ],
        outputs: [{ name: 'kept', parameters: { binary_data: true } }, { name: 'scaled' }],
      }),
    );
    const res = await fetch(`${base}/v2/models/multi/infer`, {
      method: 'POST',
      headers: { 'inference-header-content-length': String(header.length) },
      body: Buffer.concat([header, Buffer.from(ids.buffer), Buffer.from(mask), Buffer.from(scale.buffer)]),
    });
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status).to.equal(200);
    const n = Number(res.headers.get('inference-header-content-length'));
    expect(JSON.parse(body.subarray(0, n).toString())).to.deep.equal({
      model_name: 'multi',
      model_version: '1.0',
      outputs: [
        { name: 'kept', shape: [1, 2], datatype: 'INT64', parameters: { binary_data_size: 16 } },
        { name: 'scaled', shape: [1, 4], datatype: 'FP32', data: [2, 4, -2, 0] },
      ],
    });
    expect([body.readBigInt64LE(n), body.readBigInt64LE(n + 8)]).to.deep.equal([2n ** 60n + 1n, -(2n ** 62n) - 3n]);
    // The same as JSON: the integers written whole, not rounded through a double.
    const asJson = Buffer.from(header.toString().replace('{"name":"kept","parameters":{"binary_data":true}},', ''));
    const text = await (
      await fetch(`${base}/v2/models/multi/infer`, {
        method: 'POST',
        headers: { 'inference-header-content-length': String(asJson.length) },
        body: Buffer.concat([asJson, Buffer.from(ids.buffer), Buffer.from(mask), Buffer.from(scale.buffer)]),
      })
    ).text();
    expect(text).to.equal(
      '{"model_name":"multi","model_version":"1.0","outputs":[{"name":"scaled","shape":[1,4],"datatype":"FP32","data":[2,4,-2,0]}]}',
    );
    const all = Buffer.from(
      header.toString().replace(',"outputs":[{"name":"kept","parameters":{"binary_data":true}},{"name":"scaled"}]', ''),
    );
    const whole = await (
      await fetch(`${base}/v2/models/multi/infer`, {
        method: 'POST',
        headers: { 'inference-header-content-length': String(all.length) },
        body: Buffer.concat([all, Buffer.from(ids.buffer), Buffer.from(mask), Buffer.from(scale.buffer)]),
      })
    ).text();
    expect(whole).to.equal(
      '{"model_name":"multi","model_version":"1.0","outputs":[{"name":"kept","shape":[1,2],"datatype":"INT64","data":[1152921504606846977,-4611686018427387907]},{"name":"scaled","shape":[1,4],"datatype":"FP32","data":[2,4,-2,0]}]}',
    );
  });

  it('should answer every bad input with its exact 400 and never run it (OnnxRequestCount moves only for the one good request after them)', async () => {
    const ok = { ids: [1, 2], mask: [true, false], scale: [1, 2, 3, 4] };
    const oipInputs = [
      { name: 'ids', shape: [1, 2], datatype: 'INT64', data: [1, 2] },
      { name: 'mask', shape: [1, 2], datatype: 'BOOL', data: [true, false] },
      { name: 'scale', shape: [1, 4], datatype: 'FP16', data: [1, 2, 3, 4] },
    ];
    const without = (name: string) => oipInputs.filter((i) => i.name !== name);
    const predict = (body: unknown, model = 'multi') => post(`${base}/predictions/${model}`, body);
    const infer = (inputs: unknown[]) => post(`${base}/v2/models/multi/infer`, { inputs });
    const before = await Scrape.of(server);
    const answers = [
      await infer([...without('ids'), { name: 'ids', shape: [1, 2], datatype: 'FP32', data: [1, 2] }]),
      await infer([...without('scale'), { name: 'scale', shape: [1, 2, 2], datatype: 'FP16', data: [1, 2, 3, 4] }]),
      await infer(without('mask')),
      await infer([...oipInputs, { name: 'extra', shape: [1], datatype: 'FP32', data: [0] }]),
      await infer([
        ...without('mask'),
        { name: 'mask', shape: [2, 2], datatype: 'BOOL', data: [true, true, true, true] },
      ]),
      await predict({ ...ok, mask: [1, 0] }),
      await predict({ ...ok, ids: [1.5, 2] }),
      await predict({ ...ok, scale: [1, 2, 3, 70000] }),
      await predict({ ids: ok.ids, mask: ok.mask }),
      await predict({ ...ok, pixels: [1] }),
      await predict([1, 2]),
      await predict({
        ...ok,
        scale: [
          [1, 2],
          [3, 4],
        ],
      }),
      await predict({ ...ok, ids: Array(300_000).fill(1), mask: [true] }),
      await predict({ ids: Array(9).fill(1), mask: Array(9).fill(true), scale: [1, 2, 3, 4] }, 'tight'),
    ];
    // One good request after them: the count is live, and moved by exactly that one.
    expect((await predict(ok)).status).to.equal(200);
    const after = await Scrape.of(server);
    expect(answers.map((a) => [a.status, errorOf(a)])).to.deep.equal([
      [400, "input 'ids': expected INT64 [N,*], got FP32 [1,2]"],
      [400, "input 'scale': expected FP16 [N,4], got FP16 [1,2,2]"],
      [
        400,
        "model 'multi' takes the inputs ids (INT64 [N,*]), mask (BOOL [N,*]), scale (FP16 [N,4]); input 'mask' is missing",
      ],
      [
        400,
        `unexpected input "extra" for model 'multi' (it takes ids (INT64 [N,*]), mask (BOOL [N,*]), scale (FP16 [N,4]))`,
      ],
      [400, "input 'mask' has 2 rows (its first axis), input 'ids' has 1: every input of model 'multi' needs the same"],
      [400, "input 'mask': element 0 is 1, not true or false (BOOL)"],
      [
        400,
        "input 'ids': element 0 (1.5) is not an INT64 a JSON number carries exactly (an integer from -9007199254740991 to 9007199254740991)",
      ],
      [400, "input 'scale': element 3 (70000) is not finite in FP16"],
      [
        400,
        "model 'multi' takes the inputs ids (INT64 [N,*]), mask (BOOL [N,*]), scale (FP16 [N,4]); input 'scale' is missing",
      ],
      [
        400,
        `unexpected input "pixels" for model 'multi' (it takes ids (INT64 [N,*]), mask (BOOL [N,*]), scale (FP16 [N,4]))`,
      ],
      [
        400,
        `model 'multi' takes 3 inputs: send a JSON object of them by name ("ids": [...], "mask": [...], "scale": [...])`,
      ],
      [400, "input 'scale': expected [4] (a row of the model's FP16 [N,4]), got [2,2]"],
      [400, 'JSON body has more than 262144 elements (--max-json-elements)'],
      [
        400,
        "the request's tensors hold 89 bytes, more than a batch of model 'tight' holds (64, tensors.maxBatchBytes in its model-config.yaml)",
      ],
    ]);
    expect(delta(before, after, 'OnnxRequestCount', { ModelName: 'multi' })).to.equal(1);
    expect(delta(before, after, 'OnnxRequestCount', { ModelName: 'tight' })).to.equal(0);
  });

  it('should run a model whose first axis is fixed on whole tensors: OIP [2,3] answered [2,3], /predictions nested [[…],[…]], a row refused', async () => {
    const a = await post(`${base}/v2/models/fixed/infer`, {
      inputs: [{ name: 'x', shape: [2, 3], datatype: 'FP32', data: [1, 2, 3, 4, 5, 6] }],
    });
    const b = await post(`${base}/predictions/fixed`, [
      [0.5, 1, 1.5],
      [-1, 0, 1],
    ]);
    const c = await post(`${base}/predictions/fixed`, [1, 2, 3]);
    expect([a.status, a.json]).to.deep.equal([
      200,
      {
        model_name: 'fixed',
        model_version: '1.0',
        outputs: [{ name: 'y', shape: [2, 3], datatype: 'FP32', data: [2, 4, 6, 8, 10, 12] }],
      },
    ]);
    expect([b.status, b.json]).to.deep.equal([
      200,
      [
        [1, 2, 3],
        [-2, 0, 2],
      ],
    ]);
    expect([c.status, errorOf(c)]).to.deep.equal([400, "input 'x': expected FP32 [2,3], got [3]"]);
  });
});
