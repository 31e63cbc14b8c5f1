/** The generated tiny vocoder: codec tokens → 960 PCM16 frames each, the token's pitch and envelope, byte-identical files. */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSession, tensorI64 } from '../../../backend/onnx/ort.js';
import {
  ATTACK_PER_SEC,
  FRAMES_PER_TOKEN,
  tokenAmplitude,
  tokenDecayPerSec,
  tokenPitchHz,
  VOCODER_SAMPLE_RATE,
  writeTinyVocoder,
} from '../../../tools/models/tiny-vocoder.js';

/** The frame the graph computes for token t at index i, in float64 (the graph runs in float32). */
function expected(t: number, i: number): number {
  const tau = i / VOCODER_SAMPLE_RATE;
  return (
    Math.sin(2 * Math.PI * tokenPitchHz(t) * tau) *
    (1 - Math.exp(-ATTACK_PER_SEC * tau)) *
    Math.exp(-tokenDecayPerSec(t) * tau) *
    tokenAmplitude(t) *
    32767
  );
}

describe('tools/models/tiny-vocoder', () => {
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsserve-vocoder-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("should turn N codec tokens into [N, 960] int16 frames following each token's pitch and envelope", async () => {
    const s = await createSession(writeTinyVocoder(join(dir, 'a')));
    try {
      expect([s.inputNames, s.outputNames]).to.deep.equal([['codes'], ['pcm']]);
      const out = (await s.run({ codes: tensorI64(BigInt64Array.from([65n, 97n, 257n]), [3]) }))['pcm']!;
      expect(out.type).to.equal('int16');
      expect(out.dims).to.deep.equal([3, FRAMES_PER_TOKEN]);
      const pcm = out.data as Int16Array;
      for (const [row, t] of [
        [0, 65],
        [1, 97],
      ] as const) {
        for (const i of [0, 1, 100, 479, 959])
          expect(Math.abs(pcm[row * FRAMES_PER_TOKEN + i]! - expected(t, i)), `token ${t} frame ${i}`).to.be.at.most(2);
      }
      expect(Array.from(pcm.subarray(2 * FRAMES_PER_TOKEN)).every((v) => v === 0)).to.equal(true); // EOS is silent
      expect([tokenPitchHz(65), tokenPitchHz(97)]).to.deep.equal([110 * 2 ** (17 / 12), 110 * 2 ** (1 / 12)]);
    } finally {
      await s.release();
    }
  });

  it('should write byte-identical files', () => {
    expect(readFileSync(writeTinyVocoder(join(dir, 'b')))).to.deep.equal(
      readFileSync(writeTinyVocoder(join(dir, 'c'))),
    );
  });
});
