/** The per-chunk player simulation on fixed chunk timings: the exact worst deficit. */
import { expect } from 'chai';
import { pcm16Seconds, worstUnderrunSec } from '../../../frontend/pipeline/underrun.js';

describe('worstUnderrunSec', () => {
  it('should give the exact deficit of the worst gap on fixed chunk timings', () => {
    // 0.25 s chunks arriving at 0, 0.2, 0.75, 1.0, 1.5: the buffer runs dry at 0.5 (gap 0.25),
    // then at 1.0 (next arrives at 1.0: no gap), then at 1.25 (gap 0.25 again).
    const q = 0.25;
    expect(worstUnderrunSec([0, 0.2, 0.75, 1.0, 1.5].map((a) => ({ arrivalSec: a, durationSec: q })))).to.equal(0.25);
    // A late third chunk: dry at 0.5, arrives at 1.125 → 0.625.
    expect(
      worstUnderrunSec([
        { arrivalSec: 0, durationSec: 0.25 },
        { arrivalSec: 0.125, durationSec: 0.25 },
        { arrivalSec: 1.125, durationSec: 0.5 },
      ]),
    ).to.equal(0.625);
  });

  it('should give 0 when every chunk arrives before the buffer runs dry, and for no chunks', () => {
    expect(
      worstUnderrunSec([
        { arrivalSec: 10, durationSec: 0.5 },
        { arrivalSec: 10.5, durationSec: 0.5 },
        { arrivalSec: 10.75, durationSec: 1 },
      ]),
    ).to.equal(0);
    expect(worstUnderrunSec([])).to.equal(0);
  });

  it('should turn PCM16 bytes into seconds at the sample rate', () => {
    expect(pcm16Seconds(3840 * 2, 24000)).to.equal(0.16);
  });
});
