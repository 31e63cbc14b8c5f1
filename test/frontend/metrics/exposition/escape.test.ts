import { expect } from 'chai';
import { canonicalFloat } from '../../../../frontend/metrics/exposition/escape.js';

describe('canonicalFloat', () => {
  it('should write numbers as Go %g does with .0 on integers (OpenMetrics canonical le values)', () => {
    const cases: [number, string][] = [
      [1, '1.0'],
      [10, '10.0'],
      [0, '0.0'],
      [-1, '-1.0'],
      [0.005, '0.005'],
      [0.0001, '0.0001'],
      [2.5, '2.5'],
      [2000, '2000.0'],
      [2560, '2560.0'],
      [100000, '100000.0'],
      [1e6, '1e+06'],
      [123456789, '1.23456789e+08'],
      [1e-5, '1e-05'],
      [1.5e-7, '1.5e-07'],
      [1e21, '1e+21'],
      [1e308, '1e+308'],
      [5e-324, '5e-324'],
      [Infinity, '+Inf'],
      [-Infinity, '-Inf'],
      [NaN, 'NaN'],
    ];
    expect(cases.map(([v]) => canonicalFloat(v))).to.deep.equal(cases.map(([, s]) => s));
  });
});
