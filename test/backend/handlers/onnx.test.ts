import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createOnnxHandler, DEFAULT_INPUT_WIDTH, inputWidthOf, validateRow } from '../../../backend/handlers/onnx.js';
import type { HandlerContext } from '../../../backend/handlers/types.js';
import { createSession } from '../../../backend/onnx/ort.js';
import { GraphBuilder } from '../../../tools/models/onnx-builder.js';
import { makeRequestError, messageOf, statusOf } from '../../../backend/handlers/request-error.js';

describe('onnx handler validateRow', () => {
  it('should copy a valid row into the stacked tensor at its offset', () => {
    const dst = new Float32Array(6);
    expect(validateRow([1, 2, 3], 3, dst, 3)).to.equal(null);
    expect(Array.from(dst)).to.deep.equal([0, 0, 0, 1, 2, 3]);
  });

  it('should accept {"data": [...]} and {"input": [...]} bodies', () => {
    const dst = new Float32Array(2);
    expect(validateRow({ data: [5, 6] }, 2, dst, 0)).to.equal(null);
    expect(validateRow({ input: [7, 8] }, 2, dst, 0)).to.equal(null);
    expect(Array.from(dst)).to.deep.equal([7, 8]);
  });

  it('should name what is wrong with a bad body', () => {
    const dst = new Float32Array(3);
    expect(validateRow([1, 2], 3, dst, 0)).to.equal('expected a JSON array of 3 numbers, got 2 elements');
    expect(validateRow([1, null, 3], 3, dst, 0)).to.equal('element 1 is null, not a finite number');
    expect(validateRow([1, '2', 3], 3, dst, 0)).to.equal('element 1 is the string "2", not a finite number');
    expect(validateRow([1, [2], 3], 3, dst, 0)).to.equal('element 1 is an array, not a finite number');
    expect(validateRow({ pixels: [] }, 3, dst, 0)).to.equal('expected a JSON array of 3 numbers, got an object');
    expect(validateRow(42, 3, dst, 0)).to.equal('expected a JSON array of 3 numbers, got number 42');
    expect(validateRow(null, 3, dst, 0)).to.equal('expected a JSON array of 3 numbers, got null');
  });
});

describe('onnx handler inputWidthOf', () => {
  it('should read handlerOptions.inputWidth, else default to 784', () => {
    expect(inputWidthOf({ inputWidth: 16 })).to.equal(16);
    expect(inputWidthOf({})).to.equal(DEFAULT_INPUT_WIDTH);
    expect(DEFAULT_INPUT_WIDTH).to.equal(784);
    expect(inputWidthOf({ inputWidth: -1 })).to.equal(784);
    expect(inputWidthOf({ inputWidth: '16' })).to.equal(784);
  });
});

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

describe('onnx handler initialize', () => {
  /** Loads a one-Cast graph from `type` to `to` with the built-in handler; resolves to its load error, or null. */
  async function loadError(type: 'int64' | 'float32', to: 'int64' | 'float32'): Promise<string | null> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-onnx-types-'));
    try {
      const g = new GraphBuilder('cast');
      g.output(
        'y',
        to,
        ['batch', 4],
        g.op('Cast', [g.input('x', type, ['batch', 4])], { to: { i: to === 'float32' ? 1 : 7 } }),
      );
      g.write(path.join(dir, 'model.onnx'), 'cast');
      const ctx = {
        manifest: { modelFile: 'model.onnx' },
        handlerOptions: { inputWidth: 4 },
        createSession: (f: string) => createSession(path.join(dir, f)),
      } as unknown as HandlerContext;
      return await Promise.resolve(createOnnxHandler().initialize!(ctx)).then(
        () => null,
        (e: unknown) => (e as Error).message,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it('should refuse at load a model whose first input or output is not float32 (regression: every batch failed 500 with onnxruntime\'s "Unexpected input data type")', async () => {
    expect(await loadError('int64', 'float32')).to.equal(
      "model.onnx: its first input 'x' is int64; the built-in onnx handler feeds and reads float32 tensors only (serve this model with a handler of your own: docs/handlers.md)",
    );
    expect(await loadError('float32', 'int64')).to.equal(
      "model.onnx: its first output 'y' is int64; the built-in onnx handler feeds and reads float32 tensors only (serve this model with a handler of your own: docs/handlers.md)",
    );
    expect(await loadError('float32', 'float32')).to.equal(null);
  });
});
