import { expect } from 'chai';
import { Heartbeat } from '../../../frontend/cluster/heartbeat.js';

describe('Heartbeat', () => {
  it('should ping every tick while the front answers, and never judge it hung', () => {
    const hb = new Heartbeat(3, 1_000);
    const ticks = [];
    for (let i = 1; i <= 5; i++) {
      const t = hb.tick(1_000 + i * 5_000);
      ticks.push(t);
      if (t.kind === 'ping') hb.answer(t.seq, 1_000 + i * 5_000 + 2);
    }
    expect(ticks).to.deep.equal([1, 2, 3, 4, 5].map((seq) => ({ kind: 'ping', seq })));
  });

  it('should judge a front hung at the tick after its third unanswered ping, with its silence since its last answer', () => {
    const hb = new Heartbeat(3, 0);
    hb.answer((hb.tick(5_000) as { seq: number }).seq, 5_010);
    const ticks = [10_000, 15_000, 20_000, 25_000].map((t) => hb.tick(t));
    expect(ticks).to.deep.equal([
      { kind: 'ping', seq: 2 },
      { kind: 'ping', seq: 3 },
      { kind: 'ping', seq: 4 },
      { kind: 'hung', missed: 3, silentMs: 19_990 },
    ]);
  });

  it('should keep a busy front that answers two missed pings late (14 s of synchronous work under a 15 s deadline)', () => {
    const hb = new Heartbeat(3, 0);
    expect(hb.tick(5_000)).to.deep.equal({ kind: 'ping', seq: 1 });
    expect(hb.tick(10_000)).to.deep.equal({ kind: 'ping', seq: 2 });
    // Blocked from 4 s to 18 s: two pings wait at the 15 s tick, one short of hung.
    expect(hb.tick(15_000)).to.deep.equal({ kind: 'ping', seq: 3 });
    // Its loop runs again: the three pings are answered at once.
    for (const seq of [1, 2, 3]) hb.answer(seq, 18_000);
    expect([hb.tick(20_000), hb.tick(25_000)]).to.deep.equal([
      { kind: 'ping', seq: 4 },
      { kind: 'ping', seq: 5 },
    ]);
  });

  it('should not count against a front the time the primary itself was blocked (no pings were sent then)', () => {
    const hb = new Heartbeat(3, 0);
    hb.answer((hb.tick(5_000) as { seq: number }).seq, 5_001);
    // The primary's loop is blocked from 6 s to 60 s: the next tick comes late, one ping later.
    expect(hb.tick(60_000)).to.deep.equal({ kind: 'ping', seq: 2 });
  });

  it('should ignore an answer to a ping it never sent or one older than an answered ping', () => {
    const hb = new Heartbeat(1, 0);
    hb.tick(5_000);
    hb.answer(9, 5_001);
    hb.answer(0, 5_001);
    expect(hb.tick(10_000)).to.deep.equal({ kind: 'hung', missed: 1, silentMs: 10_000 });
  });
});
