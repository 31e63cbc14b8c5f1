/** Helpers for engine tests on the real tiny LM: temp model dirs and a no-cache greedy reference. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { OrtSession } from '../../../backend/onnx/ort.js';
import { tensorF32, tensorI64 } from '../../../backend/onnx/ort.js';
import { TINY_LM_BYTE_HF_MODEL, TINY_LM_MODEL } from '../../../tools/models/demo-models.js';
import {
  HEAD_DIM,
  MASK_VALUE,
  NUM_HEADS,
  NUM_LAYERS,
  VOCAB_SIZE,
  EOS_ID,
  BOS_ID,
  PAD_ID,
} from '../../../tools/models/tiny-lm-spec.js';

/** Writes the byte-level tiny LM in both layouts (model-config.yaml included) under `root`; returns the dirs. */
export async function writeModels(root: string): Promise<{ fast: string; hf: string }> {
  const fast = join(root, 'tiny-lm');
  const hf = join(root, 'tiny-lm-hf');
  mkdirSync(fast);
  mkdirSync(hf);
  await TINY_LM_MODEL.write(fast);
  await TINY_LM_BYTE_HF_MODEL.write(hf);
  return { fast, hf };
}

/**
 * Logits of the last `numLogits` positions of `tokens` (`[numLogits × vocab]`, the last position
 * last), computed by a fast-layout run with an empty past (no cache).
 */
export async function fullRunLogits(s: OrtSession, tokens: readonly number[], numLogits = 1): Promise<Float32Array> {
  const T = tokens.length;
  const bias = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) bias[i * T + j] = j <= i ? 0 : MASK_VALUE;
  const feeds: Record<string, ReturnType<typeof tensorF32>> = {
    input_ids: tensorI64(
      BigInt64Array.from(tokens, (t) => BigInt(t)),
      [1, T],
    ),
    position_ids: tensorI64(
      BigInt64Array.from(tokens, (_, i) => BigInt(i)),
      [1, T],
    ),
    attn_bias: tensorF32(bias, [1, 1, T, T]),
    num_logits: tensorI64(BigInt64Array.of(BigInt(numLogits)), [1]),
  };
  for (let l = 0; l < NUM_LAYERS; l++) {
    feeds[`past_key.${l}`] = tensorF32(new Float32Array(0), [1, NUM_HEADS, 0, HEAD_DIM]);
    feeds[`past_value.${l}`] = tensorF32(new Float32Array(0), [1, NUM_HEADS, 0, HEAD_DIM]);
  }
  const out = await s.run(feeds);
  if (out.logits!.dims.join(',') !== `1,${numLogits},${VOCAB_SIZE}`)
    throw new Error(`logits dims ${out.logits!.dims.join(',')}, expected 1,${numLogits},${VOCAB_SIZE}`);
  return (out.logits!.data as Float32Array).slice(0, numLogits * VOCAB_SIZE);
}

/** Greedy continuation by the reference loop: the whole sequence through the model every step. */
export async function referenceGreedy(
  s: OrtSession,
  prompt: readonly number[],
  maxTokens: number,
  ignoreEos = false,
): Promise<number[]> {
  const seq = [...prompt];
  const out: number[] = [];
  for (let i = 0; i < maxTokens; i++) {
    const l = await fullRunLogits(s, seq);
    l[BOS_ID] = -Infinity;
    l[PAD_ID] = -Infinity;
    if (ignoreEos) l[EOS_ID] = -Infinity;
    let best = 0;
    for (let v = 1; v < l.length; v++) if (l[v]! > l[best]!) best = v;
    out.push(best);
    seq.push(best);
    if (best === EOS_ID) break;
  }
  return out;
}

/** Prompt token ids as the engine's tokenizer makes them (BOS + UTF-8 bytes). */
export function promptIds(text: string): number[] {
  return [BOS_ID, ...Buffer.from(text, 'utf8')];
}
