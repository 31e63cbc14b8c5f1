import { expect } from 'chai';
import { halfToNumber, numberToHalf, stackKey, valuesOf } from '../../schema/tensors.js';

describe('schema tensors', () => {
  it('should round numbers to float16 to nearest, ties to even, with overflow to infinity and subnormals kept', () => {
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.1, 0x2e66],
      [65504, 0x7bff],
      [65519, 0x7bff],
      [65520, 0x7c00],
      [2 ** -24, 0x0001],
      [2 ** -25, 0x0000],
      [3 * 2 ** -25, 0x0002],
      [2 ** -14, 0x0400],
      [1 + 2 ** -11, 0x3c00],
      [1 + 3 * 2 ** -11, 0x3c02],
      [Infinity, 0x7c00],
    ];
    expect(cases.map(([v]) => numberToHalf(v))).to.deep.equal(cases.map(([, h]) => h));
    expect(Number.isNaN(halfToNumber(numberToHalf(NaN)))).to.equal(true);
  });

  it('should read float16 bits back as the numbers they hold', () => {
    expect([0x3c00, 0xc000, 0x2e66, 0x7bff, 0x0001, 0x7c00, 0xfc00].map(halfToNumber)).to.deep.equal([
      1,
      -2,
      0.0999755859375,
      65504,
      2 ** -24,
      Infinity,
      -Infinity,
    ]);
  });

  it('should read every element type from little-endian bytes, 64-bit integers beyond 2^53 as bigint', () => {
    const i64 = new BigInt64Array([1n, -(2n ** 60n)]);
    expect(valuesOf('int64', new Uint8Array(i64.buffer))).to.deep.equal([1, -(2n ** 60n)]);
    expect(valuesOf('bool', Uint8Array.of(0, 1))).to.deep.equal([false, true]);
    expect(valuesOf('int8', Uint8Array.of(0xff))).to.deep.equal([-1]);
    expect(valuesOf('float16', new Uint8Array(Uint16Array.of(0x3c00).buffer))).to.deep.equal([1]);
  });

  it('should key requests by names, types and row shapes, leaving a padded axis out', () => {
    const heads = [
      { name: 'x', dtype: 'float32' as const, dims: [3, 48, 80] },
      { name: 'm', dtype: 'bool' as const, dims: [5] },
    ];
    expect(stackKey(heads, {})).to.equal('x:float32:3x48x80|m:bool:5');
    expect(stackKey(heads, { x: { axis: 3, value: 0 } })).to.equal('x:float32:3x48x*|m:bool:5');
  });
});
