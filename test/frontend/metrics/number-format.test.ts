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
