/**
 * What the OpenAI layer knows of a generation model's vocabulary and context: `max_model_len`,
 * the vocabulary size and EOS ids from its `engine:` block (either spelling of each key,
 * schema/engine-args.ts), its tokenizer and its chat template. A model directory with a
 * `tokenizer.json` gets the real tokenizer (schema/text/model-tokenizer.ts, loaded once at model
 * start, off the event loop); one without keeps the byte-level contract (ids 0..255 are UTF-8
 * bytes, BOS first when `addBos`; the same as backend/engine/tokenizer.ts, docs/engine.md). The
 * frontend tokenizes as vLLM's does, so it can default and check `max_tokens` and serve `/tokenize`.
 */
import { TextDecoder } from 'node:util';
import { validateEngineArgs } from '../../schema/engine-args.js';
import type { ModelTokenizer } from '../../schema/text/model-tokenizer.js';
import type { ChatTemplate } from './chat-template.js';
import { NO_CHAT_TEMPLATE } from './chat-template.js';

/** A model's tokenizer view. */
export interface ModelVocab {
  /** Longest prompt + output (the engine's maxModelLen, which its KV budget holds: the model-config check refuses it otherwise). */
  readonly maxModelLen: number;
  readonly vocabSize: number;
  /** Every EOS id of the model (`eosTokenId` may be a list), as the engine reads it. */
  readonly eosTokenIds: readonly number[];
  /** Ids the model never samples (`suppressTokens`). */
  readonly suppressTokenIds: readonly number[];
  /** Token ids of `text` (BOS first when the model adds it). */
  encode(text: string, addSpecialTokens?: boolean): number[];
  /** How many ids `encode(text)` gives; past max_model_len it may stop counting (a real tokenizer's huge prompt, see COUNT_CHARS_PER_TOKEN). */
  count(text: string, addSpecialTokens?: boolean): number;
  /** Text of `ids`; special ids decode to nothing, invalid UTF-8 to U+FFFD. */
  decode(ids: readonly number[]): string;
  /** One token as logprobs show it: its text, `bytes:\xNN…` when it is not whole UTF-8, `token_id:N` for an id the tokenizer does not know. */
  tokenText(id: number): string;
  /** The bytes of one token (chat logprobs' `bytes`). */
  tokenBytes(id: number): number[];
  /** The model's chat template (or vLLM's 400 when it has none). */
  readonly chatTemplate: Pick<ChatTemplate, 'render'>;
  /**
   * Whether a rendered chat prompt is encoded with special tokens: false with a real tokenizer
   * (vLLM's chat default: the template writes `bos_token` itself), true for the byte-level
   * demo models, whose template has no BOS and whose engine expects one.
   */
  readonly chatAddsSpecialTokens: boolean;
}

/** The default context when the block gives neither maxModelLen nor maxContext (the engine's). */
const DEFAULT_MAX_MODEL_LEN = 1024;

/**
 * A prompt longer than this many characters per max_model_len token is counted in pieces of
 * `COUNT_CHARS_PER_TOKEN × max_model_len` characters, stopping once max_model_len is reached,
 * so a huge prompt (1 MiB bodies; tsserve generate reads lines of any length) is never tokenized
 * whole to be refused: the library encodes a few hundred KB a second (bench:tokenize). Real text
 * averages 3 to 5 characters a token; the pieces' count may differ from the whole's by a token
 * per piece, and a prompt counted under max_model_len is counted again on its ids
 * (request-prompts.ts) before it goes anywhere.
 */
const COUNT_CHARS_PER_TOKEN = 16;

const utf8 = new TextEncoder();

/** The settings the vocabulary reads from an `engine:` block. */
function blockOf(engine: Readonly<Record<string, unknown>> | undefined): {
  maxModelLen: number;
  vocabSize: number | undefined;
  bos: number | undefined;
  addBos: boolean;
  eosTokenIds: readonly number[];
  suppressTokenIds: readonly number[];
} {
  const a = validateEngineArgs(engine ?? {}).args;
  const intOf = (k: string): number | undefined => (typeof a[k] === 'number' ? a[k] : undefined);
  const idsOf = (k: string): readonly number[] => {
    const v = a[k];
    return Object.freeze(
      Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : typeof v === 'number' ? [v] : [],
    );
  };
  const bos = intOf('bosTokenId');
  return {
    maxModelLen: intOf('maxModelLen') ?? intOf('maxContext') ?? DEFAULT_MAX_MODEL_LEN,
    vocabSize: intOf('vocabSize'),
    bos,
    addBos: a.addBos !== false && bos !== undefined,
    eosTokenIds: idsOf('eosTokenId'),
    suppressTokenIds: idsOf('suppressTokens'),
  };
}

/** The byte-level vocabulary view of a model whose `engine:` block is `engine`. */
export function modelVocab(
  engine: Readonly<Record<string, unknown>> | undefined,
  chatTemplate: Pick<ChatTemplate, 'render'> = NO_CHAT_TEMPLATE,
): ModelVocab {
  const b = blockOf(engine);
  const { bos, addBos } = b;
  const tokenText = (id: number): string => {
    if (id < 0x80) return String.fromCharCode(id);
    if (id < 0x100) return `bytes:\\x${id.toString(16)}`;
    return `token_id:${id}`;
  };
  return Object.freeze({
    maxModelLen: b.maxModelLen,
    vocabSize: b.vocabSize ?? 256,
    eosTokenIds: b.eosTokenIds,
    suppressTokenIds: b.suppressTokenIds,
    encode: (text: string, addSpecialTokens = true): number[] => {
      const ids = addBos && addSpecialTokens ? [bos!] : [];
      for (const x of utf8.encode(text)) ids.push(x);
      return ids;
    },
    count: (text: string, addSpecialTokens = true): number =>
      (addBos && addSpecialTokens ? 1 : 0) + Buffer.byteLength(text, 'utf8'),
    decode: (ids: readonly number[]): string =>
      new TextDecoder('utf-8').decode(Uint8Array.from(ids.filter((id) => id >= 0 && id < 256))),
    tokenText,
    tokenBytes: (id: number): number[] => (id < 0x100 ? [id] : [...utf8.encode(tokenText(id))]),
    chatTemplate,
    chatAddsSpecialTokens: true,
  });
}

/** The vocabulary view of a model with a real tokenizer (`engine` gives max_model_len, the EOS ids and the vocabulary size when larger). */
export function tokenizerVocab(
  engine: Readonly<Record<string, unknown>> | undefined,
  tk: ModelTokenizer,
  chatTemplate: Pick<ChatTemplate, 'render'>,
): ModelVocab {
  const b = blockOf(engine);
  const known = (id: number): boolean => Number.isInteger(id) && id >= 0 && id < tk.size;
  const countChars = COUNT_CHARS_PER_TOKEN * b.maxModelLen;
  return Object.freeze({
    maxModelLen: b.maxModelLen,
    vocabSize: Math.max(b.vocabSize ?? 0, tk.size),
    eosTokenIds: b.eosTokenIds.length > 0 ? b.eosTokenIds : tk.eosId === undefined ? [] : [tk.eosId],
    suppressTokenIds: b.suppressTokenIds,
    encode: (text: string, addSpecialTokens = true): number[] => tk.encode(text, addSpecialTokens),
    count: (text: string, addSpecialTokens = true): number => {
      if (text.length <= countChars) return tk.encode(text, addSpecialTokens).length;
      let n = 0;
      for (let at = 0; at < text.length && n < b.maxModelLen; at += countChars)
        n += tk.encode(text.slice(at, at + countChars), addSpecialTokens && at === 0).length;
      return n;
    },
    decode: (ids: readonly number[]): string => tk.decode(ids.filter(known)),
    tokenText: (id: number): string => (known(id) ? tk.tokenText(id) : `token_id:${id}`),
    tokenBytes: (id: number): number[] => (known(id) ? [...tk.tokenBytes(id)] : [...utf8.encode(`token_id:${id}`)]),
    chatTemplate,
    chatAddsSpecialTokens: false,
  });
}

const byEngineBlock = new WeakMap<object, ModelVocab>();
const NO_ENGINE = {};

/** The vocabulary view of a served model: the one it loaded at start, else its engine block's byte-level view (built once per configuration). */
export function vocabOf(model: {
  readonly config: { readonly engine?: Readonly<Record<string, unknown>> };
  readonly vocab?: ModelVocab | undefined;
}): ModelVocab {
  if (model.vocab !== undefined) return model.vocab;
  const key = model.config.engine ?? NO_ENGINE;
  let v = byEngineBlock.get(key);
  if (v === undefined) byEngineBlock.set(key, (v = modelVocab(model.config.engine)));
  return v;
}
