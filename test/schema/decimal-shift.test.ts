/**
 * The one decimal shift (schema/decimal-shift.ts) the frontend's text sinks (plainNumber) and
 * the workers' unit conversion (shiftDecimal) both use.
 */
import { expect } from 'chai';
import { plainNumber, shiftDecimal } from '../../schema/decimal-shift.js';

describe('plainNumber', () => {
  it('should print large and small magnitudes without an exponent', () => {
    expect(plainNumber(1e21)).to.equal('1000000000000000000000');
    expect(plainNumber(1.5e22)).to.equal('15000000000000000000000');
    expect(plainNumber(1e-7)).to.equal('0.0000001');
    expect(plainNumber(-2.5e-8)).to.equal('-0.000000025');
    expect(plainNumber(1.583358301e7)).to.equal('15833583.01');
    expect(plainNumber(123.456)).to.equal('123.456');
    expect(plainNumber(Number.MAX_VALUE).length).to.equal(309);
  });

  it('should move the decimal point of the shortest decimal, trimming the zeros it leaves', () => {
    const cases: Array<[number, number]> = [
      [0.0041, 3],
      [1.005, 3],
      [1234, -3],
      [1000, -3],
      [7, -3],
      [0.7, -3],
      [120, 3],
      [-0.043, 3],
      [1e-7, 3],
      [1e21, -3],
      [1.5e-9, 9],
      [0, 3],
      [-0, -3],
      [5, 0],
    ];
    expect(cases.map(([v, k]) => plainNumber(v, k))).to.deep.equal([
      '4.1',
      '1005',
      '1.234',
      '1',
      '0.007',
      '0.0007',
      '120000',
      '-43',
      '0.0001',
      '1000000000000000000',
      '1.5',
      '0',
      '0',
      '5',
    ]);
  });

  it('should print NaN and the infinities as String does, shifted or not (nothing to move)', () => {
    expect([NaN, Infinity, -Infinity].flatMap((v) => [plainNumber(v), plainNumber(v, 3)])).to.deep.equal([
      'NaN',
      'NaN',
      'Infinity',
      'Infinity',
      '-Infinity',
      '-Infinity',
    ]);
  });
});

describe('shiftDecimal', () => {
  it('should give the number of the shifted decimal, not the binary product (0.0041 s is 4.1 ms, not 4.1000000000000005)', () => {
    const cases: Array<[number, number]> = [
      [0.0041, 3],
      [0.043, 3],
      [1234, -3],
      [1.005, 3],
      [1e-7, 3],
      [1e-7, 9],
      [1e21, -3],
      [1e21, 3],
      [-0.043, 3],
      [-2.5e-8, 6],
      [0.000009, 0],
      [5, -9],
      [1.5e-9, 9],
    ];
    expect(cases.map(([v, k]) => shiftDecimal(v, k))).to.deep.equal([
      4.1, 43, 1.234, 1005, 0.0001, 100, 1e18, 1e24, -43, -0.025, 0.000009, 5e-9, 1.5,
    ]);
    expect([0.0041 * 1000, 1.005 * 1000, 1e-7 * 1000]).to.deep.equal([
      4.1000000000000005, 1004.9999999999999, 0.00009999999999999999,
    ]);
  });

  it('should return 0 and -0 (its sign kept, as multiplying keeps it), NaN and the infinities unchanged', () => {
    const out = [0, -0, NaN, Infinity, -Infinity].map((v) => shiftDecimal(v, 3));
    expect(out.map((v) => (Object.is(v, -0) ? '-0' : String(v)))).to.deep.equal([
      '0',
      '-0',
      'NaN',
      'Infinity',
      '-Infinity',
    ]);
  });

  it("should equal the number of the value's decimal written with the exponent moved, for every millesimal up to 100 and shifts -9..9", () => {
    const off: string[] = [];
    for (let i = -100_000; i <= 100_000; i += 7) {
      const v = i / 1000;
      for (let k = -9; k <= 9; k++) {
        const want = v === 0 ? v : Number(`${String(v)}e${k}`);
        if (!Object.is(shiftDecimal(v, k), want)) off.push(`${v}, ${k}: ${shiftDecimal(v, k)} (want ${want})`);
      }
    }
    expect(off).to.deep.equal([]);
  });
});
