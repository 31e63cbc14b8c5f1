/**
 * The inputs and outputs of a user's decoder export (Hugging Face / Optimum names), found by
 * name on the session: `input_ids`, `attention_mask`, `position_ids` when the graph takes it,
 * `past_key_values.N.key/value` → `present.N.key/value`, `use_cache_branch` of a merged decoder,
 * and the element type of the K/V and of the logits (float32 or float16). One place, so the
 * runner never guesses a name and a graph that lacks one is refused at load with every gap listed.
 */
import type { OrtSession, OrtTensorInput } from '../onnx/ort.js';
import { tensorF16, tensorF32 } from '../onnx/ort.js';
import { missingInputs, missingOutputs } from '../../schema/kv-layout.js';
import type { KvArray } from './kv-store.js';

/** K/V and logits element types a user's export may use. */
export type HfFloat = 'float32' | 'float16';

/** What the runner feeds and fetches. */
export interface HfGraphIo {
  readonly pastKey: readonly string[];
  readonly pastValue: readonly string[];
  readonly presentKey: readonly string[];
  readonly presentValue: readonly string[];
  /** The graph takes `position_ids` (else it derives positions from `attention_mask`). */
  readonly positionIds: boolean;
  /** The graph is Optimum's merged decoder: `use_cache_branch` is false on a run without past. */
  readonly useCacheBranch: boolean;
  readonly kvType: HfFloat;
  readonly logitsType: HfFloat;
}

function floatType(t: string | undefined, name: string, problems: string[]): HfFloat {
  if (t === 'float32' || t === 'float16') return t;
  problems.push(`${name} is ${t ?? 'not a tensor'}, expected float32 or float16`);
  return 'float32';
}

/** The IO of `session` for `numLayers` layers; throws one Error listing every missing or mistyped name. */
export function hfGraphIo(session: OrtSession, numLayers: number): HfGraphIo {
  const r = (f: (l: number) => string): string[] => Array.from({ length: numLayers }, (_, l) => f(l));
  const problems: string[] = [];
  const inMissing = missingInputs('hf', numLayers, session.inputNames);
  if (inMissing.length > 0) problems.push(`missing inputs ${inMissing.join(', ')}`);
  const outMissing = missingOutputs('hf', numLayers, session.outputNames);
  if (outMissing.length > 0) problems.push(`missing outputs ${outMissing.join(', ')}`);
  const types = session.valueTypes;
  const kvType = floatType(types['past_key_values.0.key'], 'past_key_values.0.key', problems);
  const logitsType = floatType(types.logits, 'logits', problems);
  if (problems.length > 0)
    throw new Error(
      `model is not in the usual exported layout: ${problems.join('; ')} (inputs are ${session.inputNames.join(', ')})`,
    );
  return {
    pastKey: r((l) => `past_key_values.${l}.key`),
    pastValue: r((l) => `past_key_values.${l}.value`),
    presentKey: r((l) => `present.${l}.key`),
    presentValue: r((l) => `present.${l}.value`),
    positionIds: session.inputNames.includes('position_ids'),
    useCacheBranch: session.inputNames.includes('use_cache_branch'),
    kvType,
    logitsType,
  };
}

/** A K/V array of `n` elements of the graph's type. */
export function kvAlloc(type: HfFloat, n: number): KvArray {
  return type === 'float16' ? new Uint16Array(n) : new Float32Array(n);
}

/** Wraps a K/V array (or a view) as a tensor of its element type, without copying. */
export function kvTensor(data: KvArray, dims: readonly number[]): OrtTensorInput {
  return data instanceof Uint16Array ? tensorF16(data, dims) : tensorF32(data, dims);
}

/** Every half float's value, by bit pattern: 256 KiB, built on first use. */
let HALF: Float32Array | null = null;

function halfTable(): Float32Array {
  if (HALF !== null) return HALF;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) t[h] = sign * frac * 2 ** -24;
    else if (exp === 31) t[h] = frac === 0 ? sign * Infinity : NaN;
    else t[h] = sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return (HALF = t);
}

/** `src` (half floats) as float32 into `dst` (which it fills from 0). */
export function halfToFloat(src: Uint16Array, dst: Float32Array): Float32Array {
  const t = halfTable();
  for (let i = 0; i < src.length; i++) dst[i] = t[src[i]!]!;
  return dst;
}

/** int64 inputs are written as two int32 words, low word first on little-endian hosts. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Writes a small non-negative int64: two int32 words on little-endian hosts, else a BigInt. */
export function setI64(a: BigInt64Array, w: Int32Array, i: number, v: number): void {
  if (LITTLE_ENDIAN) {
    w[2 * i] = v;
    w[2 * i + 1] = 0;
  } else a[i] = BigInt(v);
}
