import { expect } from 'chai';
import { isSizeUnit, isTimeUnit, mapUnit } from '../../../backend/metrics/units.js';

describe('mapUnit', () => {
  it("should map TorchServe's shorthands and pass anything else through unchanged", () => {
    const given = ['ms', 's', 'percent', 'count', 'MB', 'GB', 'kB', 'B', '', 'custom_unit', 'Milliseconds', 'toString'];
    expect(given.map(mapUnit)).to.deep.equal(['Milliseconds', 'Seconds', 'Percent', 'Count', 'Megabytes', 'Gigabytes',
      'Kilobytes', 'Bytes', 'unit', 'custom_unit', 'Milliseconds', 'toString']);
  });
});

describe('isTimeUnit / isSizeUnit', () => {
  it('should accept exactly ms, s and B, kB, MB, GB', () => {
    expect(['ms', 's', 'ns', 'MS', '', 'min'].map(isTimeUnit)).to.deep.equal([true, true, false, false, false, false]);
    expect(['B', 'kB', 'MB', 'GB', 'TB', 'kb', 'mb'].map(isSizeUnit)).to.deep.equal([true, true, true, true, false, false, false]);
  });
});
