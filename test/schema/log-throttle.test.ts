import { expect } from 'chai';
import { LogThrottle } from '../../schema/log-throttle.js';

describe('LogThrottle', () => {
  it('should write the first of a kind at once, then one per interval with how many were only counted, each kind apart', () => {
    let now = 0;
    const t = new LogThrottle(60_000, () => now);
    const seen: unknown[] = [];
    for (const [ms, kind] of [
      [0, 'a'],
      [1000, 'a'],
      [2000, 'b'],
      [59_999, 'a'],
      [60_000, 'a'],
      [61_000, 'a'],
      [200_000, 'a'],
      [200_000, 'b'],
    ] as const) {
      now = ms;
      seen.push(t.take(kind));
    }
    expect(seen).to.deep.equal([
      { first: true, suppressed: 0, sinceSec: 0 },
      null,
      { first: true, suppressed: 0, sinceSec: 0 },
      null,
      { first: false, suppressed: 2, sinceSec: 60 },
      null,
      { first: false, suppressed: 1, sinceSec: 140 },
      { first: false, suppressed: 0, sinceSec: 198 },
    ]);
  });

  it('should track at most maxKinds kinds, the later ones sharing one budget', () => {
    const t = new LogThrottle(60_000, () => 0, 2);
    expect(['a', 'b', 'c', 'd', 'a'].map((k) => t.take(k) === null)).to.deep.equal([false, false, false, true, true]);
  });
});
