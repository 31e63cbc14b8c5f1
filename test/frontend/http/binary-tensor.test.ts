import { expect } from 'chai';
import { binaryTensorBytes, isBinaryTensor, shapeDims } from '../../../frontend/http/binary-tensor.js';

describe('binary tensors', () => {
  it('should recognise application/octet-stream with or without parameters, in any case', () => {
    expect([
      isBinaryTensor('application/octet-stream'),
      isBinaryTensor('Application/Octet-Stream; x=1'),
      isBinaryTensor('application/json'),
      isBinaryTensor(undefined),
    ]).to.deep.equal([true, true, false, false]);
  });

  it('should read x-tensor-shape as its dims, or say what is wrong with it', () => {
    expect(shapeDims('1,784', 1000)).to.deep.equal([1, 784]);
    expect(shapeDims(' 2 , 3 ', 1000)).to.deep.equal([2, 3]);
    expect(shapeDims(undefined, 1000)).to.deep.equal({
      status: 400,
      message: 'x-tensor-shape is required with Content-Type application/octet-stream (e.g. x-tensor-shape: 1,784)',
    });
    expect(shapeDims('1,0', 1000)).to.deep.equal({
      status: 400,
      message: 'x-tensor-shape "1,0" is not a comma-separated list of positive integers',
    });
    expect(shapeDims('10,200', 1000)).to.deep.equal({
      status: 400,
      message: 'x-tensor-shape "10,200" has 2000 elements, more than 1000 (--max-json-elements)',
    });
  });

  it("should copy the body's bytes from any offset as the input's type and refuse a length the shape and type do not make", () => {
    const values = Float32Array.from([1.5, -2, 3.25]);
    const padded = Buffer.concat([Buffer.from([9]), Buffer.from(values.buffer)]).subarray(1);
    const bytes = binaryTensorBytes(padded, '3', [3], 'float32') as Uint8Array;
    expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, 3))).to.deep.equal([1.5, -2, 3.25]);
    expect(binaryTensorBytes(padded, '4', [4], 'float32')).to.deep.equal({
      status: 400,
      message: 'body has 12 bytes; x-tensor-shape 4 needs 16 (FP32, little-endian)',
    });
    expect(binaryTensorBytes(padded, '2', [2], 'int64')).to.deep.equal({
      status: 400,
      message: 'body has 12 bytes; x-tensor-shape 2 needs 16 (INT64, little-endian)',
    });
    expect(Array.from(binaryTensorBytes(Buffer.from([1, 0, 1]), '3', [3], 'bool') as Uint8Array)).to.deep.equal([
      1, 0, 1,
    ]);
  });
});
