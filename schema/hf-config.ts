/**
 * A Hugging Face model directory's settings as vLLM takes them, from its parsed files and its
 * graph's inputs and outputs: the engine block (dims, special ids, max_model_len from
 * `max_position_embeddings`, the EOS list from generation_config.json else config.json, BOS
 * handling from tokenizer_config.json) and the default sampling params of generation_config.json
 * (vLLM's `--generation-config auto`: they apply under the request's own). Pure: the frontend
 * reads the files (frontend/store/hf-model-dir.ts); every problem names its file and key.
 */
import type { GenSamplingParams } from './engine-ipc.js';

/** The parsed files of the directory (`{}` for an absent optional one). */
export interface HfFiles {
  readonly config: Readonly<Record<string, unknown>>;
  readonly generationConfig: Readonly<Record<string, unknown>>;
  readonly tokenizerConfig: Readonly<Record<string, unknown>>;
}

/** One graph tensor: name, datatype (OIP: FP32, FP16, INT64, BOOL…) and shape (-1 = symbolic). */
export interface HfGraphTensor {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
}

/** What the directory serves as, or its problems. */
export interface HfSettings {
  /** The `engine:` block (our names), as a model-config.yaml would hold it. */
  readonly engine: Readonly<Record<string, unknown>>;
  /** Default sampling params (generation_config.json), under the request's own. */
  readonly samplingDefaults: GenSamplingParams;
  readonly problems: readonly string[];
}

/** What a Hugging Face directory gives a model config (frontend/store/hf-model-dir.ts reads it). */
export interface HfBase {
  /** The engine block its files make (our names). */
  readonly engine: Readonly<Record<string, unknown>>;
  /** The ONNX file found, relative to the directory. */
  readonly modelFile: string;
  readonly samplingDefaults: GenSamplingParams;
}

/** The sampling fields vLLM's `--generation-config auto` reads, with their request names and ranges. */
const SAMPLING: readonly { hf: string; ours: keyof GenSamplingParams; ok: (x: number) => boolean; what: string }[] = [
  { hf: 'temperature', ours: 'temperature', ok: (x) => x >= 0 && x <= 2, what: 'a number between 0 and 2' },
  { hf: 'top_p', ours: 'top_p', ok: (x) => x > 0 && x <= 1, what: 'a number in (0, 1]' },
  { hf: 'top_k', ours: 'top_k', ok: (x) => Number.isInteger(x) && x >= -1, what: 'an integer >= -1' },
  { hf: 'min_p', ours: 'min_p', ok: (x) => x >= 0 && x <= 1, what: 'a number between 0 and 1' },
  { hf: 'repetition_penalty', ours: 'repetition_penalty', ok: (x) => x > 0, what: 'a number > 0' },
  { hf: 'max_new_tokens', ours: 'max_tokens', ok: (x) => Number.isInteger(x) && x >= 1, what: 'an integer >= 1' },
];

/** The engine settings and sampling defaults of a directory whose ONNX file has `inputs`/`outputs`. */
export function hfSettings(
  files: HfFiles,
  inputs: readonly HfGraphTensor[],
  outputs: readonly HfGraphTensor[],
  onnxFile: string,
): HfSettings {
  const problems: string[] = [];
  const { config: c, generationConfig: gc, tokenizerConfig: tc } = files;
  /** The first of `keys` config.json has (the names differ by architecture: GPT-2's n_layer…). */
  const int = (keys: readonly string[], required: boolean): number | undefined => {
    for (const k of keys) {
      const v = c[k];
      if (v === undefined || v === null) continue;
      if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
      problems.push(`config.json: ${k}: must be a positive integer (got ${JSON.stringify(v)?.slice(0, 40)})`);
      return undefined;
    }
    if (required) problems.push(`config.json: ${keys[0]}: required (a positive integer)`);
    return undefined;
  };
  const vocabSize = int(['vocab_size'], true);
  const numLayers = int(['num_hidden_layers', 'n_layer', 'num_layers'], true);
  const heads = int(['num_attention_heads', 'n_head'], true);
  const kvHeads = int(['num_key_value_heads'], false) ?? heads;
  const hidden = int(['hidden_size', 'n_embd'], false);
  const headDim =
    int(['head_dim'], false) ?? (hidden !== undefined && heads !== undefined ? hidden / heads : undefined);
  if (headDim === undefined && !problems.some((p) => p.includes('head')))
    problems.push('config.json: head_dim: required when hidden_size is absent (a positive integer)');
  else if (headDim !== undefined && !Number.isInteger(headDim))
    problems.push(`config.json: hidden_size: ${hidden} is not a multiple of num_attention_heads ${heads}`);
  const maxPos = int(['max_position_embeddings', 'n_positions'], true);
  if (heads !== undefined && kvHeads !== undefined && heads % kvHeads !== 0)
    problems.push(`config.json: num_key_value_heads: ${kvHeads} does not divide num_attention_heads ${heads}`);

  // Special ids: generation_config.json first (vLLM reads the EOS list there), then config.json.
  const ids = (file: string, o: Readonly<Record<string, unknown>>, key: string): number[] | undefined => {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    const list = Array.isArray(v) ? v : [v];
    if (list.length > 0 && list.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= 0))
      return list as number[];
    problems.push(`${file}: ${key}: must be a token id or a list of token ids (got ${JSON.stringify(v).slice(0, 40)})`);
    return undefined;
  };
  const eos = ids('generation_config.json', gc, 'eos_token_id') ?? ids('config.json', c, 'eos_token_id');
  const bos = ids('generation_config.json', gc, 'bos_token_id') ?? ids('config.json', c, 'bos_token_id');
  const pad = ids('generation_config.json', gc, 'pad_token_id') ?? ids('config.json', c, 'pad_token_id');
  if (eos === undefined && !problems.some((p) => p.includes('eos_token_id')))
    problems.push('config.json: eos_token_id: required (in generation_config.json or config.json)');
  if (vocabSize !== undefined) {
    for (const [key, list] of [
      ['eos_token_id', eos],
      ['bos_token_id', bos],
      ['pad_token_id', pad],
    ] as const) {
      const bad = (list ?? []).filter((id) => id >= vocabSize);
      if (bad.length > 0) problems.push(`config.json: ${key}: ${bad.join(', ')} not below vocab_size ${vocabSize}`);
    }
  }

  // The graph: the names the runner feeds, and dims that must agree with config.json.
  const byName = new Map(inputs.map((t) => [t.name, t]));
  const need = ['input_ids', 'attention_mask'];
  for (let l = 0; l < (numLayers ?? 0); l++) need.push(`past_key_values.${l}.key`, `past_key_values.${l}.value`);
  const missing = need.filter((n) => !byName.has(n));
  if (missing.length > 0)
    problems.push(
      `${onnxFile}: lacks inputs of a decoder export with past (${numLayers ?? '?'} layers): ${missing.slice(0, 8).join(', ')}${missing.length > 8 ? `, …(${missing.length - 8} more)` : ''}`,
    );
  const outNames = new Set(outputs.map((t) => t.name));
  const outNeed = ['logits'];
  for (let l = 0; l < (numLayers ?? 0); l++) outNeed.push(`present.${l}.key`, `present.${l}.value`);
  const outMissing = outNeed.filter((n) => !outNames.has(n));
  if (outMissing.length > 0)
    problems.push(
      `${onnxFile}: lacks outputs: ${outMissing.slice(0, 8).join(', ')}${outMissing.length > 8 ? `, …(${outMissing.length - 8} more)` : ''}`,
    );
  const past = byName.get('past_key_values.0.key');
  if (past !== undefined) {
    if (past.datatype !== 'FP32' && past.datatype !== 'FP16')
      problems.push(`${onnxFile}: past_key_values.0.key is ${past.datatype}, expected FP32 or FP16`);
    const [, h, , d] = past.shape;
    const kvKey = c.num_key_value_heads !== undefined ? 'num_key_value_heads' : 'num_attention_heads';
    if (h !== undefined && h > 0 && kvHeads !== undefined && h !== kvHeads)
      problems.push(`config.json: ${kvKey}: ${kvHeads} K/V heads, but ${onnxFile}'s past has ${h}`);
    if (d !== undefined && d > 0 && headDim !== undefined && d !== headDim)
      problems.push(`config.json: head_dim: ${headDim}, but ${onnxFile}'s past has head size ${d}`);
  }
  const logitsV = outputs.find((t) => t.name === 'logits')?.shape[2];
  if (logitsV !== undefined && logitsV > 0 && vocabSize !== undefined && logitsV !== vocabSize)
    problems.push(`config.json: vocab_size: ${vocabSize}, but ${onnxFile}'s logits have ${logitsV}`);

  const samplingDefaults: Record<string, number> = {};
  for (const s of SAMPLING) {
    const v = gc[s.hf];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !s.ok(v))
      problems.push(`generation_config.json: ${s.hf}: must be ${s.what} (got ${JSON.stringify(v).slice(0, 40)})`);
    else samplingDefaults[s.ours] = v;
  }
  const addBos = tc.add_bos_token;
  if (addBos !== undefined && addBos !== null && typeof addBos !== 'boolean')
    problems.push(
      `tokenizer_config.json: add_bos_token: must be true or false (got ${JSON.stringify(addBos).slice(0, 40)})`,
    );

  const engine: Record<string, unknown> = {
    layout: 'hf',
    ...(vocabSize !== undefined ? { vocabSize } : {}),
    ...(numLayers !== undefined ? { numLayers } : {}),
    // The engine's numHeads is the K/V heads: what its cache and blocks hold.
    ...(kvHeads !== undefined ? { numHeads: kvHeads } : {}),
    ...(headDim !== undefined && Number.isInteger(headDim) ? { headDim } : {}),
    ...(maxPos !== undefined ? { maxModelLen: maxPos, maxContext: maxPos } : {}),
    ...(bos !== undefined ? { bosTokenId: bos[0] } : {}),
    ...(eos !== undefined ? { eosTokenId: eos.length === 1 ? eos[0] : eos } : {}),
    ...(pad !== undefined ? { padTokenId: pad[0] } : eos !== undefined ? { padTokenId: eos[0] } : {}),
    // Hugging Face adds BOS only when the tokenizer says so (Llama yes, GPT-2 no).
    addBos: addBos === true,
  };
  return { engine, samplingDefaults: samplingDefaults as GenSamplingParams, problems };
}
