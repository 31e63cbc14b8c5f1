/**
 * Byte-level tokenizer: token ids 0..255 are the UTF-8 bytes of the text; BOS, EOS and PAD are
 * the model's special ids above them. Lossless for any string, no vocabulary file.
 */
import { TextDecoder } from 'node:util';
import type { TokenStreamDecoder } from '../../schema/text/incremental-detokenizer.js';

/**
 * What the engine needs of a tokenizer: the byte tokenizer here, or a model's real one
 * (schema/text/model-tokenizer.ts) when its directory holds tokenizer.json.
 */
export interface EngineTokenizer {
  /** Token ids of a text prompt (the model's special tokens added). */
  encode(text: string): number[];
  /** A per-sequence stream decoder; `promptIds` give it context (a real tokenizer's first output token). */
  streamDecoder(promptIds: readonly number[]): TokenStreamDecoder;
}

/** Options of the byte tokenizer. */
export interface ByteTokenizerOptions {
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  /** Prepend BOS in `encode` (default true: the model was built to see it first). */
  readonly addBos?: boolean;
}

/** Encodes text to UTF-8 byte ids and back; special ids decode to nothing. */
export class ByteTokenizer implements EngineTokenizer {
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  readonly addBos: boolean;
  private readonly encoder = new TextEncoder();

  constructor(opts: ByteTokenizerOptions) {
    this.bosId = opts.bosId;
    this.eosId = opts.eosId;
    this.padId = opts.padId;
    this.addBos = opts.addBos ?? true;
  }

  /** Token ids of `text` (BOS first when addBos). */
  encode(text: string): number[] {
    const bytes = this.encoder.encode(text);
    const ids: number[] = this.addBos ? [this.bosId] : [];
    for (const b of bytes) ids.push(b);
    return ids;
  }

  /** Text of `ids`; special ids are skipped, invalid UTF-8 becomes U+FFFD. */
  decode(ids: readonly number[]): string {
    const bytes: number[] = [];
    for (const id of ids) if (id >= 0 && id < 256) bytes.push(id);
    return new TextDecoder('utf-8').decode(Uint8Array.from(bytes));
  }

  /** A streaming decoder that never splits a multi-byte character across outputs. */
  streamDecoder(): StreamDecoder {
    return new StreamDecoder();
  }
}

/** Incremental UTF-8 decoding of byte ids; incomplete characters wait for their next bytes. */
export class StreamDecoder implements TokenStreamDecoder {
  private readonly inner = new TextDecoder('utf-8');
  private readonly one = new Uint8Array(1);
  /** True while the TextDecoder may hold bytes of an unfinished character. */
  private partial = false;

  /** Text completed by this token (empty for specials and for a partial character). */
  push(id: number): string {
    if (id < 0 || id > 255) return '';
    // ASCII outside a multi-byte character needs no decoder (the common case, and per token).
    if (id < 0x80 && !this.partial) return String.fromCharCode(id);
    this.one[0] = id;
    const s = this.inner.decode(this.one, { stream: true });
    this.partial = id >= 0xc0 || (id >= 0x80 && s === '');
    return s;
  }

  /** Flushes a dangling partial character (as U+FFFD). */
  end(): string {
    this.partial = false;
    return this.inner.decode();
  }
}
