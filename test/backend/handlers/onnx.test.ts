import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createOnnxHandler } from '../../../backend/handlers/onnx.js';
import type { OnnxBatch } from '../../../backend/handlers/onnx.js';
import { stackInput } from '../../../backend/handlers/tensor-stack.js';
import type { HandlerContext, HandlerRequest } from '../../../backend/handlers/types.js';
import { createSession } from '../../../backend/onnx/ort.js';
import { makeRequestError, messageOf, statusOf } from '../../../backend/handlers/request-error.js';
import type { RequestTensors, TensorAnswer } from '../../../schema/tensors.js';
import { valuesOf } from '../../../schema/tensors.js';
import { writeMultiInputModel } from '../../../tools/models/multi-input.js';

describe('request errors', () => {
  it('should carry a 4xx/5xx status and default to 400', () => {
    expect(makeRequestError('bad').status).to.equal(400);
    expect(makeRequestError('gone', 410).status).to.equal(410);
    expect(makeRequestError('odd', 200).status).to.equal(400);
  });

  it('should map an error without a valid status to 500', () => {
    expect(statusOf(new Error('x'))).to.equal(500);
    expect(statusOf(Object.assign(new Error('x'), { status: 404 }))).to.equal(404);
    expect(statusOf(Object.assign(new Error('x'), { status: 'teapot' }))).to.equal(500);
    expect(statusOf('a string')).to.equal(500);
    expect(messageOf(new Error('boom'))).to.equal('boom');
    expect(messageOf('plain')).to.equal('plain');
  });
});

/** Little-endian bytes of a typed array. */
function le(t: BigInt64Array | Uint8Array | Uint16Array | Float32Array): Uint8Array {
  return new Uint8Array(t.buffer, t.byteOffset, t.byteLength);
}

/** One request of the multi-input model: ids and mask of one length, scale as float16 bits. */
function request(id: string, ids: bigint[], mask: number[], scale: number[]): HandlerRequest {
  const tensors: RequestTensors = {
    heads: [
      { name: 'ids', dtype: 'int64', dims: [ids.length] },
      { name: 'mask', dtype: 'bool', dims: [mask.length] },
      { name: 'scale', dtype: 'float16', dims: [4] },
    ],
    data: [le(BigInt64Array.from(ids)), le(Uint8Array.from(mask)), le(Uint16Array.from(scale))],
  };
  return { requestId: id, body: null, tensors };
}

describe('onnx handler (a real session of the generated multi-input model)', () => {
  let dir = '';
  let ctx: HandlerContext;
  const recorded: [string, number][] = [];

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-onnx-nd-'));
    writeMultiInputModel(dir);
    const metric = (name: string) => ({
      addOrUpdate: (v: number) => void recorded.push([name, v]),
    });
    ctx = {
      modelName: 'multi',
      manifest: { modelFile: 'model.onnx' },
      handlerOptions: {},
      metrics: { records: () => true, getMetric: metric },
      createSession: (f: string) => createSession(path.join(dir, f)),
      requestError: makeRequestError,
    } as unknown as HandlerContext;
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should run requests of one shape as one group, requests of another as a second, and answer each its rows of both outputs', async () => {
    const h = createOnnxHandler();
    await h.initialize!(ctx);
    const one = 0x3c00; // 1 as float16
    const requests = [
      request('a', [5n, 6n], [1, 0], [one, one, one, one]),
      request('b', [7n, 8n, 9n], [1, 1, 0], [0, one, 0, one]),
      request('c', [2n ** 60n, 3n], [1, 1], [0x4000, 0, 0, 0]),
      { requestId: 'd', body: [1, 2, 3] },
    ];
    recorded.length = 0;
    const batch = (await h.preprocess!(requests, ctx)) as OnnxBatch;
    expect(batch.groups.map((g) => [g.rows, g.feeds['ids']!.dims])).to.deep.equal([
      [
        [0, 2],
        [2, 2],
      ],
      [[1], [1, 3]],
    ]);
    expect(recorded).to.deep.equal([
      ['RequestBatchSize', 4],
      ['OnnxRequestCount', 3],
    ]);
    const answers = (await h.postprocess!(await h.inference!(batch, ctx), ctx)) as (TensorAnswer | Error)[];
    const plain = answers.slice(0, 3).map((a) => {
      const t = a as TensorAnswer;
      return t.outputs.map((o, i) => [o.name, o.dtype, o.dims, valuesOf(o.dtype, t.data[i]!)]);
    });
    expect(plain).to.deep.equal([
      [
        ['kept', 'int64', [2], [5, 0]],
        ['scaled', 'float32', [4], [2, 2, 2, 2]],
      ],
      [
        ['kept', 'int64', [3], [7, 8, 0]],
        ['scaled', 'float32', [4], [0, 2, 0, 2]],
      ],
      [
        ['kept', 'int64', [2], [2n ** 60n, 3]],
        ['scaled', 'float32', [4], [4, 0, 0, 0]],
      ],
    ]);
    expect([statusOf(answers[3]), messageOf(answers[3])]).to.deep.equal([
      400,
      'the built-in onnx handler takes the inputs ids, mask, scale as tensors the frontend decodes; this request has a JSON body',
    ]);
  });

  it('should stack rows of different lengths along a padded axis, filling with the pad value', () => {
    const rows: RequestTensors[] = [
      { heads: [{ name: 'x', dtype: 'int32', dims: [2, 1] }], data: [le(new Uint8Array(Int32Array.of(1, 2).buffer))] },
      {
        heads: [{ name: 'x', dtype: 'int32', dims: [2, 3] }],
        data: [le(new Uint8Array(Int32Array.of(3, 4, 5, 6, 7, 8).buffer))],
      },
    ];
    const t = stackInput(rows, 0, { axis: 2, value: -1 });
    expect([t.type, t.dims, Array.from(t.data as Int32Array)]).to.deep.equal([
      'int32',
      [2, 2, 3],
      [1, -1, -1, 2, -1, -1, 3, 4, 5, 6, 7, 8],
    ]);
  });
});

describe('onnx handler initialize with tensors.pad', () => {
  it('should refuse at load a pad rule the graph cannot follow: no such input, or a fixed axis', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-onnx-pad-'));
    try {
      writeMultiInputModel(dir);
      const load = (pad: Record<string, { axis: number; value: number }>) =>
        Promise.resolve(
          createOnnxHandler().initialize!({
            manifest: { modelFile: 'model.onnx', tensors: { pad } },
            createSession: (f: string) => createSession(path.join(dir, f)),
          } as unknown as HandlerContext),
        ).then(
          () => null,
          (e: unknown) => (e as Error).message,
        );
      expect([
        await load({ ids: { axis: 1, value: 0 } }),
        await load({ pixels: { axis: 1, value: 0 } }),
        await load({ scale: { axis: 1, value: 0 } }),
        await load({ ids: { axis: 2, value: 0 } }),
      ]).to.deep.equal([
        null,
        "tensors.pad.pixels: the model has no input 'pixels' (it takes ids, mask, scale)",
        "tensors.pad.scale.axis: axis 1 of 'scale' [-1,4] is not a dynamic axis (-1)",
        "tensors.pad.ids.axis: axis 2 of 'ids' [-1,-1] is not a dynamic axis (-1)",
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
