/**
 * What the OpenAI layer knows of a generation model's vocabulary and context, read from its
 * `engine:` block (either spelling of each key, schema/engine-args.ts): `max_model_len`, the
 * vocabulary size and the byte-level tokenizer's contract (ids 0..255 are UTF-8 bytes, BOS first
 * when `addBos`; the same as backend/engine/tokenizer.ts, docs/engine.md). The frontend tokenizes
 * as vLLM's does, so it can default and check `max_tokens` and serve `/tokenize`.
 */
import { TextDecoder } from 'node:util';
import { validateEngineArgs } from '../../schema/engine-args.js';

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
  /** How many ids `encode(text)` gives, without building them: a prompt far past max_model_len is refused at its count. */
  count(text: string): number;
  /** Text of `ids`; special ids decode to nothing, invalid UTF-8 to U+FFFD. */
  decode(ids: readonly number[]): string;
  /** One token as logprobs show it: its character, `bytes:\xNN` for a lone non-ASCII byte, `token_id:N` for a special id. */
  tokenText(id: number): string;
  /** The bytes of one token (chat logprobs' `bytes`). */
  tokenBytes(id: number): number[];
}

/** The default context when the block gives neither maxModelLen nor maxContext (the engine's). */
const DEFAULT_MAX_MODEL_LEN = 1024;

const utf8 = new TextEncoder();

/** The vocabulary view of a model whose `engine:` block is `engine`. */
export function modelVocab(engine: Readonly<Record<string, unknown>> | undefined): ModelVocab {
  const a = validateEngineArgs(engine ?? {}).args;
  const intOf = (k: string): number | undefined => (typeof a[k] === 'number' ? a[k] : undefined);
  const maxModelLen = intOf('maxModelLen') ?? intOf('maxContext') ?? DEFAULT_MAX_MODEL_LEN;
  const vocabSize = intOf('vocabSize') ?? 256;
  const bos = intOf('bosTokenId');
  const addBos = a.addBos !== false && bos !== undefined;
  const idsOf = (k: string): readonly number[] => {
    const v = a[k];
    return Object.freeze(
      Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : typeof v === 'number' ? [v] : [],
    );
  };
  const tokenText = (id: number): string => {
    if (id < 0x80) return String.fromCharCode(id);
    if (id < 0x100) return `bytes:\\x${id.toString(16)}`;
    return `token_id:${id}`;
  };
  return Object.freeze({
    maxModelLen,
    vocabSize,
    eosTokenIds: idsOf('eosTokenId'),
    suppressTokenIds: idsOf('suppressTokens'),
    encode: (text: string, addSpecialTokens = true): number[] => {
      const ids = addBos && addSpecialTokens ? [bos!] : [];
      for (const b of utf8.encode(text)) ids.push(b);
      return ids;
    },
    count: (text: string): number => (addBos ? 1 : 0) + Buffer.byteLength(text, 'utf8'),
    decode: (ids: readonly number[]): string =>
      new TextDecoder('utf-8').decode(Uint8Array.from(ids.filter((id) => id >= 0 && id < 256))),
    tokenText,
    tokenBytes: (id: number): number[] => (id < 0x100 ? [id] : [...utf8.encode(tokenText(id))]),
  });
}

const byEngineBlock = new WeakMap<object, ModelVocab>();
const NO_ENGINE = {};

/** The vocabulary view of a served model, built once per configuration. */
export function vocabOf(model: {
  readonly config: { readonly engine?: Readonly<Record<string, unknown>> };
}): ModelVocab {
  const key = model.config.engine ?? NO_ENGINE;
  let v = byEngineBlock.get(key);
  if (v === undefined) byEngineBlock.set(key, (v = modelVocab(model.config.engine)));
  return v;
}
