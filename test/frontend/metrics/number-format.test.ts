import { expect } from 'chai';
import { decimalWithPoint, plainNumber } from '../../../frontend/metrics/number-format.js';

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
});

describe('plainNumber with a shift', () => {
  it('should move the decimal point of the shortest decimal, trimming the zeros it leaves', () => {
    const cases: Array<[number, number]> = [[0.0041, 3], [1.005, 3], [1234, -3], [1000, -3], [7, -3], [0.7, -3], [120, 3], [-0.043, 3],
      [1e-7, 3], [1e21, -3], [1.5e-9, 9], [0, 3], [-0, -3], [5, 0]];
    expect(cases.map(([v, k]) => plainNumber(v, k))).to.deep.equal(['4.1', '1005', '1.234', '1', '0.007', '0.0007', '120000', '-43',
      '0.0001', '1000000000000000000', '1.5', '0', '0', '5']);
  });
});

describe('decimalWithPoint', () => {
  it('should print integers with .0 like Java doubles and keep fractions as they are', () => {
    expect(decimalWithPoint(1)).to.equal('1.0');
    expect(decimalWithPoint(0)).to.equal('0.0');
    expect(decimalWithPoint(-0)).to.equal('0.0');
    expect(decimalWithPoint(-7)).to.equal('-7.0');
    expect(decimalWithPoint(84548.829)).to.equal('84548.829');
    expect(decimalWithPoint(1e21)).to.equal('1000000000000000000000.0');
    expect(decimalWithPoint(1e-7)).to.equal('0.0000001');
  });
});
