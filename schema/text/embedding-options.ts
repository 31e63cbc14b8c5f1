/**
 * The `handlerOptions:` of a `handler: embedding` model (an encoder served on OpenAI's
 * `/v1/embeddings`, as vLLM serves pooling models). The frontend tokenizes with them, the worker
 * pools and normalizes with them.
 */

/** How a [T, H] hidden state becomes one vector: vLLM's MEAN, CLS and LAST poolers. */
export type Pooling = 'mean' | 'cls' | 'last';

/** The parsed options, every default filled in. */
export interface EmbeddingOptions {
  readonly pooling: Pooling;
  /** L2-normalize the pooled vector (vLLM's default for embedding models). */
  readonly normalize: boolean;
  /** tokenizer.json inside the model directory. */
  readonly tokenizer: string;
  /** Largest input in tokens, special tokens included (the model's position table). */
  readonly maxModelLen: number;
  /** Output sizes `dimensions` may ask for (Matryoshka); empty: `dimensions` is refused. */
  readonly dimensions: readonly number[];
  /** Largest number of inputs in one request (OpenAI's bound is 2048). */
  readonly maxInputs: number;
}

/** One input as the frontend hands it to the worker (the job's body). */
export interface EmbeddingJobBody {
  readonly ids: readonly number[];
  readonly typeIds: readonly number[];
  /** Output size asked for; absent: the model's. */
  readonly dimensions?: number;
}

const KNOWN = new Set(['pooling', 'normalize', 'tokenizer', 'maxModelLen', 'dimensions', 'maxInputs']);

/** Parses `handlerOptions`; `problems` gets one line per bad key (unknown keys included). */
export function parseEmbeddingOptions(
  raw: Readonly<Record<string, unknown>> | undefined,
  problems: string[] = [],
): EmbeddingOptions {
  const o = raw ?? {};
  for (const k of Object.keys(o))
    if (!KNOWN.has(k)) problems.push(`handlerOptions.${k}: unknown option of handler embedding`);
  const pooling = o['pooling'] ?? 'cls';
  if (pooling !== 'mean' && pooling !== 'cls' && pooling !== 'last')
    problems.push(`handlerOptions.pooling: must be mean, cls or last (got ${JSON.stringify(pooling)})`);
  const normalize = o['normalize'] ?? true;
  if (typeof normalize !== 'boolean')
    problems.push(`handlerOptions.normalize: must be true or false (got ${JSON.stringify(normalize)})`);
  const tokenizer = o['tokenizer'] ?? 'tokenizer.json';
  if (typeof tokenizer !== 'string' || tokenizer === '')
    problems.push(`handlerOptions.tokenizer: must be a file name in the model directory`);
  const int = (key: string, def: number, max: number): number => {
    const v = o[key] ?? def;
    if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max) return v;
    problems.push(`handlerOptions.${key}: must be an integer in 1..${max} (got ${JSON.stringify(v)})`);
    return def;
  };
  const dims = o['dimensions'] ?? [];
  const dimsOk = Array.isArray(dims) && dims.every((d) => typeof d === 'number' && Number.isInteger(d) && d >= 1);
  if (!dimsOk) problems.push(`handlerOptions.dimensions: must be a list of output sizes (got ${JSON.stringify(dims)})`);
  return {
    pooling: pooling === 'mean' || pooling === 'last' ? pooling : 'cls',
    normalize: normalize !== false,
    tokenizer: typeof tokenizer === 'string' && tokenizer !== '' ? tokenizer : 'tokenizer.json',
    maxModelLen: int('maxModelLen', 512, 1 << 20),
    dimensions: dimsOk ? (dims as number[]) : [],
    maxInputs: int('maxInputs', 2048, 1 << 16),
  };
}

/**
 * Pools one sequence's hidden states `h` (row-major [T, H], the first `len` rows real) and
 * normalizes when asked; `dims` keeps the first `dims` values before normalizing (Matryoshka).
 */
export function poolHidden(
  h: Float32Array,
  len: number,
  hidden: number,
  pooling: Pooling,
  normalize: boolean,
  dims = hidden,
): Float32Array {
  const out = new Float32Array(dims);
  if (pooling === 'mean') {
    for (let t = 0; t < len; t++) for (let j = 0; j < dims; j++) out[j] = out[j]! + h[t * hidden + j]!;
    for (let j = 0; j < dims; j++) out[j] = out[j]! / len;
  } else {
    const row = pooling === 'cls' ? 0 : len - 1;
    out.set(h.subarray(row * hidden, row * hidden + dims));
  }
  if (normalize) {
    let sq = 0;
    for (const v of out) sq += v * v;
    // torch.nn.functional.normalize's eps: a zero vector stays zero.
    const n = Math.max(Math.sqrt(sq), 1e-12);
    for (let j = 0; j < dims; j++) out[j] = out[j]! / n;
  }
  return out;
}
