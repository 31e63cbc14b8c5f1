import { expect } from 'chai';
import { msAsSeconds, msAsUs, roundToNs } from '../../schema/elapsed.js';

describe('elapsed times rounded to whole nanoseconds', () => {
  it('should drop the binary noise of a performance.now() difference and keep every nanosecond', () => {
    const ms = 9.453808000000208; // a performance.now() difference as seen in a log line, noise and all
    expect(String(ms * 1000)).to.not.equal('9453.808');
    expect(msAsUs(ms)).to.equal(9453.808);
    expect(roundToNs(ms)).to.equal(9.453808);
    expect(msAsSeconds(ms)).to.equal(0.009453808);
    expect([msAsUs(0), msAsUs(5), roundToNs(0.5247830000007525), msAsSeconds(1234.5678901)]).to.deep.equal([
      0, 5000, 0.524783, 1.23456789,
    ]);
  });
});
