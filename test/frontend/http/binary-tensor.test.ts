import { expect } from 'chai';
import { decodeBinaryTensor, isBinaryTensor, shapeSize } from '../../../frontend/http/binary-tensor.js';

describe('binary tensors', () => {
  it('should recognise application/octet-stream with or without parameters, in any case', () => {
    expect([
      isBinaryTensor('application/octet-stream'),
      isBinaryTensor('Application/Octet-Stream; x=1'),
      isBinaryTensor('application/json'),
      isBinaryTensor(undefined),
    ]).to.deep.equal([true, true, false, false]);
  });

  it('should read x-tensor-shape as its element count, or say what is wrong with it', () => {
    expect(shapeSize('1,784', 1000)).to.equal(784);
    expect(shapeSize(' 2 , 3 ', 1000)).to.equal(6);
    expect(shapeSize(undefined, 1000)).to.deep.equal({
      status: 400,
      message: 'x-tensor-shape is required with Content-Type application/octet-stream (e.g. x-tensor-shape: 1,784)',
    });
    expect(shapeSize('1,0', 1000)).to.deep.equal({
      status: 400,
      message: 'x-tensor-shape "1,0" is not a comma-separated list of positive integers',
    });
    expect(shapeSize('10,200', 1000)).to.deep.equal({
      status: 400,
      message: 'x-tensor-shape "10,200" has 2000 elements, more than 1000 (--max-json-elements)',
    });
  });

  it('should decode little-endian float32 bytes from any offset and refuse a wrong length or a non-finite value', () => {
    const values = Float32Array.from([1.5, -2, 3.25]);
    const padded = Buffer.concat([Buffer.from([9]), Buffer.from(values.buffer)]).subarray(1);
    expect(Array.from(decodeBinaryTensor(padded, '3', 3) as Float32Array)).to.deep.equal([1.5, -2, 3.25]);
    expect(decodeBinaryTensor(padded, '4', 4)).to.deep.equal({
      status: 400,
      message: 'body has 12 bytes; x-tensor-shape 4 needs 16 (float32, little-endian)',
    });
    const inf = Float32Array.from([1, Number.POSITIVE_INFINITY]);
    expect(decodeBinaryTensor(Buffer.from(inf.buffer), '2', 2)).to.deep.equal({
      status: 400,
      message: 'element 1 is Infinity, not a finite float32',
    });
  });
});
