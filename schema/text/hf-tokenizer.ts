/**
 * The adapter for `@huggingface/tokenizers` (the one file that imports it): a Hugging Face
 * `tokenizer.json` (+ `tokenizer_config.json`) as encode / decode over token ids. In schema/ because
 * both sides tokenize: the frontend for requests (as vLLM's API server does), a worker offline.
 */
import * as tokenizers from '@huggingface/tokenizers';

/**
 * The part of the library's Tokenizer this adapter calls. Its published .d.ts files import each
 * other without extensions, which NodeNext resolution (the lint's type checker) cannot follow, so
 * the shape is written here once.
 */
interface LibTokenizer {
  encode(
    text: string,
    options: { add_special_tokens: boolean; return_token_type_ids?: boolean },
  ): { ids: number[]; attention_mask: number[]; token_type_ids?: number[] };
  decode(ids: number[], options: { skip_special_tokens: boolean }): string;
  token_to_id(token: string): number | undefined;
  id_to_token(id: number): string | undefined;
}

const Tokenizer = (tokenizers as unknown as { Tokenizer: new (json: object, config: object) => LibTokenizer })
  .Tokenizer;

/** Options of one encode call. */
export interface HfEncodeOptions {
  /** Apply the tokenizer's post-processor (BOS/CLS/SEP as the tokenizer.json says); default true. */
  readonly addSpecialTokens?: boolean;
}

/** Options of one decode call. */
export interface HfDecodeOptions {
  /** Leave special tokens out of the text; default true (vLLM's skip_special_tokens). */
  readonly skipSpecialTokens?: boolean;
}

/** One encoding: ids with the attention mask and, for pair-aware tokenizers, token type ids. */
export interface HfEncoding {
  readonly ids: number[];
  readonly attentionMask: number[];
  readonly tokenTypeIds?: number[];
}

/** A tokenizer.json loaded through @huggingface/tokenizers. */
export class HfTokenizer {
  private readonly tk: LibTokenizer;

  /** `tokenizerJson` and `tokenizerConfig` are the parsed files (the config may be `{}`). */
  constructor(tokenizerJson: object, tokenizerConfig: object = {}) {
    this.tk = new Tokenizer(tokenizerJson, tokenizerConfig);
  }

  /** Token ids of `text`. */
  encode(text: string, opts: HfEncodeOptions = {}): number[] {
    return this.tk.encode(text, { add_special_tokens: opts.addSpecialTokens ?? true }).ids;
  }

  /** Ids, attention mask and token type ids of `text` (for encoder models). */
  encodeFull(text: string, opts: HfEncodeOptions = {}): HfEncoding {
    const e = this.tk.encode(text, { add_special_tokens: opts.addSpecialTokens ?? true, return_token_type_ids: true });
    return { ids: e.ids, attentionMask: e.attention_mask, tokenTypeIds: e.token_type_ids };
  }

  /** Text of `ids`. */
  decode(ids: readonly number[], opts: HfDecodeOptions = {}): string {
    return this.tk.decode([...ids], { skip_special_tokens: opts.skipSpecialTokens ?? true });
  }

  /** The id of a token string (a special token such as `<|endoftext|>` included), if any. */
  tokenToId(token: string): number | undefined {
    return this.tk.token_to_id(token);
  }

  /** The token string of an id, if any. */
  idToToken(id: number): string | undefined {
    return this.tk.id_to_token(id);
  }
}
