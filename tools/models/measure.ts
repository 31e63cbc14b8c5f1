/**
 * `node dist/tools/models/measure.js`: medians of one run() for the generated models on this
 * machine (1 thread), to check the cost targets (mlp: a few ms at batch 32; mlp-heavy: ≥ 20 ms)
 * and the decode-step cost of both tiny-lm layouts. Prints one JSON line per figure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSession, tensorF32, tensorI64 } from '../../backend/onnx/ort.js';
import type { OrtSession, OrtTensorInput } from '../../backend/onnx/ort.js';
import { writeMlpHeavy, MLP_MODEL } from './demo-models.js';
import { writeTinyLm } from './tiny-lm.js';
import { MLP_INPUT as MLP_INPUT_WIDTH } from './mlp.js';
import { FAST_NAMES, HEAD_DIM, HF_NAMES, NUM_HEADS, NUM_LAYERS } from './tiny-lm-spec.js';

async function median(s: OrtSession, feeds: Readonly<Record<string, OrtTensorInput>>, n: number): Promise<number> {
  for (let i = 0; i < 3; i++) await s.run(feeds);
  const ts: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await s.run(feeds);
    ts.push(performance.now() - t0);
  }
  ts.sort((a, b) => a - b);
  return ts[ts.length >> 1]!;
}

function print(name: string, ms: number, extra: Record<string, number> = {}): void {
  process.stdout.write(JSON.stringify({ measure: name, ms: Number(ms.toFixed(3)), ...extra }) + '\n');
}

function decodeFeeds(layout: 'fast' | 'hf', B: number, P: number): Record<string, OrtTensorInput> {
  const ids = tensorI64(new BigInt64Array(B).fill(97n), [B, 1]);
  const pos = tensorI64(new BigInt64Array(B).fill(BigInt(P)), [B, 1]);
  const past = new Float32Array(B * NUM_HEADS * P * HEAD_DIM).fill(0.01);
  const f: Record<string, OrtTensorInput> = {};
  if (layout === 'fast') {
    f[FAST_NAMES.inputIds] = ids;
    f[FAST_NAMES.positionIds] = pos;
    f[FAST_NAMES.attnBias] = tensorF32(new Float32Array(B * (P + 1)), [B, 1, 1, P + 1]);
    f[FAST_NAMES.numLogits] = tensorI64(BigInt64Array.of(1n), [1]);
    for (let l = 0; l < NUM_LAYERS; l++) {
      f[FAST_NAMES.pastKey(l)] = tensorF32(past, [B, NUM_HEADS, P, HEAD_DIM]);
      f[FAST_NAMES.pastValue(l)] = tensorF32(past, [B, NUM_HEADS, P, HEAD_DIM]);
    }
  } else {
    f[HF_NAMES.inputIds] = ids;
    f[HF_NAMES.positionIds] = pos;
    f[HF_NAMES.attentionMask] = tensorI64(new BigInt64Array(B * (P + 1)).fill(1n), [B, P + 1]);
    for (let l = 0; l < NUM_LAYERS; l++) {
      f[HF_NAMES.pastKey(l)] = tensorF32(past, [B, NUM_HEADS, P, HEAD_DIM]);
      f[HF_NAMES.pastValue(l)] = tensorF32(past, [B, NUM_HEADS, P, HEAD_DIM]);
    }
  }
  return f;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tsserve-measure-'));
  try {
    const x = tensorF32(
      new Float32Array(32 * MLP_INPUT_WIDTH).map((_, i) => (i % 13) / 13),
      [32, MLP_INPUT_WIDTH],
    );
    await MLP_MODEL.write(join(dir, 'mlp'));
    writeMlpHeavy(join(dir, 'mlp-heavy'));
    for (const name of ['mlp', 'mlp-heavy']) {
      const s = await createSession(join(dir, name, 'model.onnx'));
      print(`${name}_batch32`, await median(s, { input: x }, name === 'mlp' ? 50 : 20));
      await s.release();
    }
    for (const layout of ['fast', 'hf'] as const) {
      const s = await createSession(writeTinyLm(join(dir, layout), { layout }));
      for (const B of [1, 32])
        print(`tiny-lm-${layout}_decode_step`, await median(s, decodeFeeds(layout, B, 256), 20), {
          batch: B,
          context: 256,
        });
      await s.release();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
