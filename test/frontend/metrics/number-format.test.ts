import { expect } from 'chai';
import { decimalWithPoint } from '../../../frontend/metrics/number-format.js';

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
