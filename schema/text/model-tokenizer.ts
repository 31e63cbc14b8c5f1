/**
 * A model's real tokenizer (its `tokenizer.json`, through the adapter hf-tokenizer.ts) as both
 * sides use it: encode and count a prompt, decode ids, name a token for logprobs, and a stream
 * decoder per sequence (incremental-detokenizer.ts). For a byte-level BPE (GPT-2, Llama 3, Qwen:
 * a `ByteLevel` decoder) each token's bytes are known, so a streamed window is decoded as bytes
 * without calling the library (bench:tokenize measures both).
 */
import { TextDecoder } from 'node:util';
import { byteLevelBytes } from './byte-level.js';
import { HfTokenizer } from './hf-tokenizer.js';
import { IncrementalDetokenizer } from './incremental-detokenizer.js';
import type { TokenStreamDecoder } from './incremental-detokenizer.js';
import type { TokenizerFiles } from './tokenizer-files.js';

type Obj = Readonly<Record<string, unknown>>;

/** One entry of tokenizer.json's `added_tokens`. */
interface AddedToken {
  readonly id: number;
  readonly content: string;
  readonly special: boolean;
}

const utf8 = new TextEncoder();
const fatal = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8');

/** A special token's text from tokenizer_config / special_tokens_map (a string or `{content}`). */
function tokenString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  const c = (v as { content?: unknown } | null | undefined)?.content;
  return typeof c === 'string' ? c : undefined;
}

function addedTokensOf(json: Obj): AddedToken[] {
  const list = Array.isArray(json.added_tokens) ? (json.added_tokens as unknown[]) : [];
  return list.flatMap((t) => {
    const o = t as { id?: unknown; content?: unknown; special?: unknown } | null;
    return typeof o?.id === 'number' && typeof o.content === 'string'
      ? [{ id: o.id, content: o.content, special: o.special === true }]
      : [];
  });
}

/** One past the largest id of the model's vocabulary (`model.vocab`, an object or Unigram's list) and added tokens. */
function idSpan(json: Obj, added: readonly AddedToken[]): number {
  const vocab = (json.model as { vocab?: unknown } | undefined)?.vocab;
  let n = Array.isArray(vocab) ? vocab.length : 0;
  if (vocab !== null && typeof vocab === 'object' && !Array.isArray(vocab)) {
    for (const id of Object.values(vocab as Record<string, unknown>)) if (typeof id === 'number' && id >= n) n = id + 1;
  }
  for (const t of added) if (t.id >= n) n = t.id + 1;
  return n;
}

/** `\xNN` escapes of bytes (logprobs' name of a token that is not whole UTF-8). */
function hexBytes(b: Uint8Array): string {
  let s = 'bytes:';
  for (const x of b) s += `\\x${x.toString(16).padStart(2, '0')}`;
  return s;
}

/** A tokenizer.json with its config files. */
export class ModelTokenizer {
  private readonly tk: HfTokenizer;
  private readonly specialIds: ReadonlySet<number>;
  private readonly added: ReadonlyMap<number, AddedToken>;
  /** Per id, its bytes (byte-level only; filled on first use). */
  private readonly bytesOf: (Uint8Array | undefined)[] = [];
  /** True for a byte-level BPE: a token's bytes come from its string. */
  readonly byteLevel: boolean;
  /** One past the largest id the tokenizer knows. */
  readonly size: number;
  readonly bosToken: string | undefined;
  readonly eosToken: string | undefined;
  readonly bosId: number | undefined;
  readonly eosId: number | undefined;
  /** The chat template of the directory, if any. */
  readonly chatTemplate: string | undefined;

  constructor(files: TokenizerFiles & { readonly tokenizerJson: Obj }) {
    const json = files.tokenizerJson;
    const config = files.tokenizerConfig;
    this.tk = new HfTokenizer(json, config);
    const added = addedTokensOf(json);
    this.added = new Map(added.map((t) => [t.id, t]));
    this.specialIds = new Set(added.filter((t) => t.special).map((t) => t.id));
    this.size = idSpan(json, added);
    this.byteLevel = (json.decoder as { type?: unknown } | null | undefined)?.type === 'ByteLevel';
    this.bosToken = tokenString(config.bos_token) ?? tokenString(files.specialTokensMap.bos_token);
    this.eosToken = tokenString(config.eos_token) ?? tokenString(files.specialTokensMap.eos_token);
    this.bosId = this.bosToken === undefined ? undefined : this.tk.tokenToId(this.bosToken);
    this.eosId = this.eosToken === undefined ? undefined : this.tk.tokenToId(this.eosToken);
    this.chatTemplate = files.chatTemplate;
  }

  /** Token ids of `text`; special tokens written in the text are parsed as such (as transformers does). */
  encode(text: string, addSpecialTokens = true): number[] {
    return this.tk.encode(text, { addSpecialTokens });
  }

  /** Text of `ids` (the library's decode); special ids left out unless `skipSpecialTokens` is false. */
  decode(ids: readonly number[], skipSpecialTokens = true): string {
    return this.tk.decode(ids, { skipSpecialTokens });
  }

  /** True for an added token marked special (left out of decoded text). */
  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  /** The bytes of one token: its UTF-8 for an added token, its byte-level spelling, else its decoded text's UTF-8. */
  tokenBytes(id: number): Uint8Array {
    const cached = this.bytesOf[id];
    if (cached !== undefined) return cached;
    const added = this.added.get(id);
    let b: Uint8Array | undefined;
    if (added !== undefined) b = utf8.encode(added.content);
    else if (this.byteLevel) b = byteLevelBytes(this.tk.idToToken(id) ?? '');
    b ??= utf8.encode(this.tk.decode([id], { skipSpecialTokens: false }));
    if (id >= 0 && id < this.size) this.bytesOf[id] = b;
    return b;
  }

  /** One token as logprobs show it: its text, or `bytes:\xNN…` when its bytes are not whole UTF-8. */
  tokenText(id: number): string {
    const added = this.added.get(id);
    if (added !== undefined) return added.content;
    if (!this.byteLevel) return this.tk.decode([id], { skipSpecialTokens: false });
    const b = this.tokenBytes(id);
    try {
      return fatal.decode(b);
    } catch {
      return hexBytes(b);
    }
  }

  /** Text of a short window of non-special ids: bytes joined and decoded for a byte-level BPE, else the library's decode. */
  readonly decodeWindow = (ids: readonly number[]): string => {
    if (!this.byteLevel) return this.tk.decode(ids, { skipSpecialTokens: true });
    if (ids.length === 1) return lenient.decode(this.tokenBytes(ids[0]!));
    let n = 0;
    for (const id of ids) n += this.tokenBytes(id).length;
    const buf = new Uint8Array(n);
    let at = 0;
    for (const id of ids) {
      const b = this.tokenBytes(id);
      buf.set(b, at);
      at += b.length;
    }
    return lenient.decode(buf);
  };

  /** A stream decoder for one sequence whose prompt ended with `context` (special ids skipped). */
  streamDecoder(context: readonly number[] = []): TokenStreamDecoder & { readonly forcedFlushes: number } {
    return new IncrementalDetokenizer(this.decodeWindow, (id) => this.specialIds.has(id), context, this.byteLevel);
  }
}
