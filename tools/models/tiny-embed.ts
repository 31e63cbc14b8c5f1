/**
 * The `tiny-embed` demo encoder: a one-layer BERT-style graph (word + position + token type
 * embeddings, LayerNorm, masked self-attention, a ReLU feed-forward, LayerNorms) with seeded
 * random weights, and a small lowercase WordPiece `tokenizer.json` written beside it, so
 * `/v1/embeddings` runs a real tokenizer and a real graph with nothing downloaded. Inputs int64
 * `input_ids`, `attention_mask`, `token_type_ids` [batch, tokens]; output `last_hidden_state`
 * float32 [batch, tokens, 64].
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GraphBuilder } from './onnx-builder.js';
import { Prng } from './prng.js';

/** Hidden size of tiny-embed. */
export const TINY_EMBED_HIDDEN = 64;
/** Its position table's length: the longest input in tokens. */
export const TINY_EMBED_MAX_LEN = 128;
/** Its weights' seed. */
export const TINY_EMBED_SEED = 7;

/** Special tokens first, as BERT's vocab.txt has them. */
const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const WORDS = (
  'the a an and or of to in is it for on with as at by this that be are was from hello world model ' +
  'server serve embed embedding vector text token search query document image cat dog house tree ' +
  'red blue green fast slow good new old one two three'
).split(' ');
const SUFFIXES = ['##s', '##ed', '##ing', '##er', '##ly', '##es'];
const PUNCT = [...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'];
const LETTERS = [...'abcdefghijklmnopqrstuvwxyz0123456789'];

/** The vocabulary in id order. */
export function tinyEmbedVocab(): string[] {
  return [...SPECIALS, ...PUNCT, ...LETTERS, ...LETTERS.map((c) => `##${c}`), ...WORDS, ...SUFFIXES];
}

/** A Hugging Face tokenizer.json: BERT normalizer and pre-tokenizer, WordPiece, [CLS] … [SEP]. */
export function tinyEmbedTokenizerJson(): object {
  const vocab = tinyEmbedVocab();
  const id = (t: string): number => vocab.indexOf(t);
  const special = (t: string): object => ({ SpecialToken: { id: t, type_id: 0 } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((content, i) => ({
      id: i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]')],
      pair: [
        special('[CLS]'),
        { Sequence: { id: 'A', type_id: 0 } },
        special('[SEP]'),
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((t) => [t, { id: t, ids: [id(t)], tokens: [t] }])),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
    },
  };
}

/** Builds the encoder graph. */
export function buildTinyEmbed(seed = TINY_EMBED_SEED): GraphBuilder {
  const H = TINY_EMBED_HIDDEN;
  const V = tinyEmbedVocab().length;
  const rng = new Prng(seed);
  const g = new GraphBuilder('tiny-embed');
  const ids = g.input('input_ids', 'int64', ['batch', 'tokens']);
  const mask = g.input('attention_mask', 'int64', ['batch', 'tokens']);
  const types = g.input('token_type_ids', 'int64', ['batch', 'tokens']);
  const w = (name: string, dims: number[], std: number): string =>
    g.initF32(
      name,
      rng.normals(
        dims.reduce((a, b) => a * b, 1),
        std,
      ),
      dims,
    );
  const ones = (name: string): string => g.initF32(name, new Float32Array(H).fill(1), [H]);
  const zeros = (name: string): string => g.initF32(name, new Float32Array(H), [H]);
  const norm = (x: string, n: string): string =>
    g.op('LayerNormalization', [x, ones(`${n}.weight`), zeros(`${n}.bias`)], {
      axis: { i: -1 },
      epsilon: { f: 1e-12 },
    });
  const linear = (x: string, n: string, inW: number, outW: number): string =>
    g.op('Add', [g.op('MatMul', [x, w(`${n}.weight`, [inW, outW], 1 / Math.sqrt(inW))]), w(`${n}.bias`, [outW], 0.02)]);

  // Embeddings: word + position (0..T-1) + token type, then LayerNorm.
  const word = g.op('Gather', [w('embeddings.word', [V, H], 0.5), ids], { axis: { i: 0 } });
  const t = g.op('Gather', [g.op('Shape', [ids]), g.constI64([1])], { axis: { i: 0 } });
  const positions = g.op('Range', [
    g.initI64('pos.start', [0], []),
    g.op('Squeeze', [t, g.constI64([0])]),
    g.initI64('pos.step', [1], []),
  ]);
  const pos = g.op('Gather', [w('embeddings.position', [TINY_EMBED_MAX_LEN, H], 0.5), positions], { axis: { i: 0 } });
  const typ = g.op('Gather', [w('embeddings.token_type', [2, H], 0.5), types], { axis: { i: 0 } });
  let x = norm(g.op('Add', [g.op('Add', [word, pos]), typ]), 'embeddings.norm');

  // Self-attention, one head; padding (mask 0) gets -10000 before the softmax, as BERT does.
  const q = linear(x, 'attn.q', H, H);
  const k = linear(x, 'attn.k', H, H);
  const v = linear(x, 'attn.v', H, H);
  const scores = g.op('Mul', [
    g.op('MatMul', [q, g.op('Transpose', [k], { perm: { ints: [0, 2, 1] } })]),
    g.constF32(1 / Math.sqrt(H)),
  ]);
  const keep = g.op('Cast', [mask], { to: { i: 1 } });
  const bias = g.op('Unsqueeze', [
    g.op('Mul', [g.op('Sub', [g.constF32(1), keep]), g.constF32(-10000)]),
    g.constI64([1]),
  ]);
  const probs = g.op('Softmax', [g.op('Add', [scores, bias])], { axis: { i: -1 } });
  x = norm(g.op('Add', [x, linear(g.op('MatMul', [probs, v]), 'attn.out', H, H)]), 'attn.norm');

  // Feed-forward.
  const ff = linear(g.op('Relu', [linear(x, 'ffn.in', H, 4 * H)]), 'ffn.out', 4 * H, H);
  x = norm(g.op('Add', [x, ff]), 'ffn.norm');
  g.output('last_hidden_state', 'float32', ['batch', 'tokens', H], x);
  return g;
}

/** Writes `dir/model.onnx`, `dir/tokenizer.json` and `dir/tokenizer_config.json`. */
export function writeTinyEmbed(dir: string): void {
  mkdirSync(dir, { recursive: true });
  buildTinyEmbed().write(
    join(dir, 'model.onnx'),
    `tsserve demo encoder, hidden ${TINY_EMBED_HIDDEN}, seed ${TINY_EMBED_SEED}`,
  );
  writeFileSync(join(dir, 'tokenizer.json'), `${JSON.stringify(tinyEmbedTokenizerJson(), null, 1)}\n`);
  const config = {
    do_lower_case: true,
    model_max_length: TINY_EMBED_MAX_LEN,
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    mask_token: '[MASK]',
    tokenizer_class: 'BertTokenizer',
  };
  writeFileSync(join(dir, 'tokenizer_config.json'), `${JSON.stringify(config, null, 1)}\n`);
}
