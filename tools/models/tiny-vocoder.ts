/**
 * `tiny-vocoder`: a generated ONNX "code2wav" stage. Each codec token (an id of the tiny LM's
 * vocabulary, 0..258) becomes FRAMES_PER_TOKEN frames of 24 kHz PCM16: a sine at the token's
 * pitch under the token's attack/decay envelope, so the audio is audibly the token sequence.
 * Input `codes` int64 [N]; output `pcm` int16 [N, FRAMES_PER_TOKEN]. No weights to download:
 * the pitch and envelope tables are computed here, deterministically.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { GraphBuilder } from './onnx-builder.js';
import { VOCAB_SIZE } from './tiny-lm-spec.js';

/** Output sample rate (Hz). */
export const VOCODER_SAMPLE_RATE = 24000;
/** Frames per codec token: 40 ms at 24 kHz. */
export const FRAMES_PER_TOKEN = 960;
/** Codec vocabulary: the thinker's token ids. */
export const VOCODER_VOCAB = VOCAB_SIZE;
/** Names of the graph's input and output. */
export const VOCODER_NAMES = { codes: 'codes', pcm: 'pcm' } as const;

/** Pitch of token t in Hz: a four-octave chromatic scale from 110 Hz; the special ids (≥ 256) are silent. */
export function tokenPitchHz(t: number): number {
  return t >= 256 ? 0 : 110 * 2 ** ((t % 48) / 12);
}

/** Peak amplitude of token t (0.25..0.85 of full scale, eight steps). */
export function tokenAmplitude(t: number): number {
  return t >= 256 ? 0 : 0.25 + (0.6 * ((t * 5) % 8)) / 7;
}

/** Decay rate of token t's envelope (1/s): short plucks to held notes. */
export function tokenDecayPerSec(t: number): number {
  return 4 + ((t * 3) % 7) * 6;
}

/** Attack rate of every envelope (1/s): ≈ 2 ms to full level, so token starts do not click. */
export const ATTACK_PER_SEC = 500;

/** Builds the vocoder graph. */
export function buildTinyVocoder(): GraphBuilder {
  const g = new GraphBuilder('tiny-vocoder');
  const codes = g.input(VOCODER_NAMES.codes, 'int64', ['tokens']);
  const pitch = Float32Array.from({ length: VOCODER_VOCAB }, (_, t) => 2 * Math.PI * tokenPitchHz(t));
  const amp = Float32Array.from({ length: VOCODER_VOCAB }, (_, t) => tokenAmplitude(t) * 32767);
  const decay = Float32Array.from({ length: VOCODER_VOCAB }, (_, t) => -tokenDecayPerSec(t));
  const time = Float32Array.from({ length: FRAMES_PER_TOKEN }, (_, i) => i / VOCODER_SAMPLE_RATE);
  const col = (name: string, data: Float32Array): string =>
    g.op('Unsqueeze', [
      g.op('Gather', [g.initF32(name, data, [VOCODER_VOCAB]), codes], { axis: { i: 0 } }),
      g.constI64([1]),
    ]); // [N,1]
  const t = g.initF32('time', time, [1, FRAMES_PER_TOKEN]);
  const sine = g.op('Sin', [g.op('Mul', [col('omega', pitch), t])]);
  const attack = g.op('Sub', [g.constF32(1), g.op('Exp', [g.op('Mul', [t, g.constF32(-ATTACK_PER_SEC)])])]);
  const release = g.op('Exp', [g.op('Mul', [col('decay', decay), t])]);
  const wave = g.op('Mul', [g.op('Mul', [sine, g.op('Mul', [attack, release])]), col('amplitude', amp)]);
  g.output(VOCODER_NAMES.pcm, 'int16', ['tokens', FRAMES_PER_TOKEN], g.op('Cast', [wave], { to: { i: 5 } }));
  return g;
}

/** Writes `dir/model.onnx`; returns the file path. */
export function writeTinyVocoder(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'model.onnx');
  buildTinyVocoder().write(
    file,
    `tsserve tiny vocoder: codec tokens -> ${VOCODER_SAMPLE_RATE} Hz PCM16, ${FRAMES_PER_TOKEN} frames per token`,
  );
  return file;
}
