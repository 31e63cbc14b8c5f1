import { expect } from 'chai';
import { BlockPool } from '../../../backend/engine/block-pool.js';
import { KvResidency, MAX_PENDING_EVICTIONS } from '../../../backend/engine/kv-residency.js';

describe('KvResidency', () => {
  it('should emit one event per evicted sampled block, with exact lifetime, idle time and reuse gaps (sample 1.0)', () => {
    let t = 0;
    const r = new KvResidency(1, () => t);
    const pool = new BlockPool(2, r);
    t = 10;
    const [a, b] = pool.allocate(2)!;
    pool.free([a!, b!]);
    for (const at of [20, 30, 50, 80, 120]) {
      t = at;
      pool.touch(a!);
      pool.free([a!]);
    }
    expect(r.drain()).to.deep.equal([]);
    t = 200;
    pool.allocate(2);
    // Block b was freed first (the tail of a's table), so it is evicted first; a kept its last 4 hits.
    expect(r.drain()).to.deep.equal([
      { lifetimeMs: 190, idleMs: 190, reuseGapsMs: [] },
      { lifetimeMs: 190, idleMs: 80, reuseGapsMs: [20, 30, 40] },
    ]);
    expect(r.drain()).to.deep.equal([]);
  });

  it('should track only sampled blocks (none at a sample the random source never passes)', () => {
    const draws = [0.3, 0.9];
    const r = new KvResidency(
      0.5,
      () => 0,
      () => draws.shift() ?? 1,
    );
    const pool = new BlockPool(2, r);
    const got = pool.allocate(2)!;
    pool.free(got);
    pool.allocate(2);
    expect(r.drain()).to.deep.equal([{ lifetimeMs: 0, idleMs: 0, reuseGapsMs: [] }]);
  });

  it('should keep at most MAX_PENDING_EVICTIONS events between two drains and report each dropped one once', () => {
    const r = new KvResidency(1, () => 0);
    const pool = new BlockPool(1, r);
    const cycle = (): void => {
      pool.free(pool.allocate(1)!);
    };
    cycle(); // the first allocation is tracked; each later one evicts the previous tracking
    for (let i = 0; i < MAX_PENDING_EVICTIONS + 3; i++) cycle();
    expect([r.drain().length, r.takeDropped(), r.takeDropped(), r.dropped]).to.deep.equal([
      MAX_PENDING_EVICTIONS,
      3,
      0,
      3,
    ]);
  });
});
