/** SleepControl (vLLM's dev-mode sleep of one model) over a recording model: what it scales, when it refuses. */
import { expect } from 'chai';
import { SleepControl } from '../../../frontend/generation/sleep-control.js';
import type { Sleeper } from '../../../frontend/generation/sleep-control.js';
import type { GenerationEngine } from '../../../frontend/generation/generation-engine.js';

function model(inFlight: number): { sleeper: Sleeper; scaled: [number, number][]; marked: boolean[] } {
  const scaled: [number, number][] = [];
  const marked: boolean[] = [];
  const engine = { stats: { setSleeping: (a: boolean) => marked.push(a) } } as unknown as GenerationEngine;
  return {
    scaled,
    marked,
    sleeper: {
      name: () => 'tiny-lm',
      inFlight: () => inFlight,
      workers: () => ({ min: 2, max: 3 }),
      engines: () => [engine, engine],
      scale: (min, max) => {
        scaled.push([min, max]);
        return Promise.resolve();
      },
    },
  };
}

describe('SleepControl', () => {
  it('should mark every engine asleep, scale to 0, and restore the worker counts it had at wake-up', async () => {
    const m = model(0);
    const s = new SleepControl(m.sleeper);
    expect(await s.sleep()).to.equal(null);
    expect([s.sleeping, m.marked, m.scaled]).to.deep.equal([true, [true, true], [[0, 0]]]);
    expect(await s.sleep()).to.equal(null); // asleep already: nothing more
    await s.wakeUp();
    await s.wakeUp(); // awake already: nothing more
    expect([s.sleeping, m.scaled]).to.deep.equal([
      false,
      [
        [0, 0],
        [2, 3],
      ],
    ]);
  });

  it('should refuse with 409 while requests are in flight, changing nothing', async () => {
    const m = model(2);
    const s = new SleepControl(m.sleeper);
    expect(await s.sleep()).to.deep.equal({
      status: 409,
      message: 'model tiny-lm has 2 requests in flight; sleep once they finish',
    });
    expect([s.sleeping, m.marked, m.scaled]).to.deep.equal([false, [], []]);
  });
});
