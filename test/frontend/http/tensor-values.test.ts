import { expect } from 'chai';
import { valuesOf } from '../../../schema/tensors.js';
import { checkBytes, encodeValues } from '../../../frontend/http/tensor-values.js';

describe('tensor values', () => {
  it('should write JSON values as each type holds them, little-endian', () => {
    const back = (dtype: Parameters<typeof encodeValues>[1], v: unknown[]) =>
      valuesOf(dtype, encodeValues('x', dtype, v) as Uint8Array);
    expect(back('int64', [9007199254740991, -3])).to.deep.equal([9007199254740991, -3]);
    expect(back('uint8', [0, 255])).to.deep.equal([0, 255]);
    expect(back('int8', [-128, 127])).to.deep.equal([-128, 127]);
    expect(back('bool', [true, false])).to.deep.equal([true, false]);
    expect(back('float16', [0.1, -2])).to.deep.equal([0.0999755859375, -2]);
    expect(back('float32', [0.1])).to.deep.equal([Math.fround(0.1)]);
    expect(back('float64', [0.1])).to.deep.equal([0.1]);
  });

  it('should name the first value its type does not hold', () => {
    expect([
      encodeValues('m', 'bool', [true, 1]),
      encodeValues('i', 'int32', [1, 2.5]),
      encodeValues('i', 'int8', [300]),
      encodeValues('i', 'int64', [2 ** 60]),
      encodeValues('u', 'uint16', [-1]),
      encodeValues('h', 'float16', [1, 65520]),
      encodeValues('f', 'float32', [1e39]),
      encodeValues('f', 'float32', ['1']),
    ]).to.deep.equal([
      "input 'm': element 1 is 1, not true or false (BOOL)",
      "input 'i': element 1 (2.5) is not an INT32 (an integer from -2147483648 to 2147483647)",
      "input 'i': element 0 (300) is not an INT8 (an integer from -128 to 127)",
      "input 'i': element 0 (1152921504606847000) is not an INT64 a JSON number carries exactly (an integer from -9007199254740991 to 9007199254740991)",
      "input 'u': element 0 (-1) is not a UINT16 (an integer from 0 to 65535)",
      "input 'h': element 1 (65520) is not finite in FP16",
      "input 'f': element 0 (1e+39) is not finite in float32 (largest magnitude 3.4028234663852886e38)",
      `input 'f': element 0 is "1", not a number (FP32)`,
    ]);
  });

  it('should refuse sent bytes of a non-finite float or a BOOL byte other than 0 and 1, and take any integer bytes', () => {
    expect([
      checkBytes('f', 'float32', new Uint8Array(Float32Array.of(1, NaN).buffer)),
      checkBytes('h', 'float16', new Uint8Array(Uint16Array.of(0x7c00).buffer)),
      checkBytes('b', 'bool', Uint8Array.of(0, 1, 2)),
      checkBytes('i', 'int64', Uint8Array.of(255, 255, 255, 255, 255, 255, 255, 255)),
    ]).to.deep.equal([
      "input 'f': element 1 (NaN) is not finite in float32 (largest magnitude 3.4028234663852886e38)",
      "input 'h': element 0 (Infinity) is not finite in FP16",
      "input 'b': element 2 is the byte 2, not 0 or 1 (BOOL)",
      null,
    ]);
  });
});
