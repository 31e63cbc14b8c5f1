/**
 * Incremental detokenization as vLLM does it (`detokenize_incrementally`): the ids since the
 * last emitted text are decoded as a window from `prefixOffset`; the text past the window's
 * already-read part (`readOffset`) is emitted only when the decoded tail does not end in U+FFFD,
 * so a character whose UTF-8 bytes span several tokens is emitted once, whole. The window is the
 * only per-request state, and it is bounded: after MAX_PENDING_TOKENS ids without a complete
 * character the pending text is emitted as it decodes (U+FFFD included) and the window restarts.
 */

/** Decodes a short run of ids to text (special ids already left out); invalid UTF-8 as U+FFFD. */
export type WindowDecode = (ids: readonly number[]) => string;

/** A per-sequence decoder of streamed token ids. */
export interface TokenStreamDecoder {
  /** Text completed by this token ('' while a character is incomplete, and for skipped ids). */
  push(id: number): string;
  /** The text still pending at the end (an incomplete character shows as U+FFFD). */
  end(): string;
  /** Times the decoder hit its bound (MAX_PENDING_TOKENS), when it has one. */
  readonly forcedFlushes?: number;
}

/** Ids without a complete character after which the pending text is emitted anyway (one UTF-8 character is at most 4 bytes). */
export const MAX_PENDING_TOKENS = 16;

/** Context ids vLLM decodes before the first output (`INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET`). */
export const CONTEXT_TOKENS = 5;

const REPLACEMENT = 0xfffd;

/** vLLM's prefix-offset / read-offset detokenizer over `decode`. */
export class IncrementalDetokenizer implements TokenStreamDecoder {
  /** The window (ids from vLLM's prefix_offset on): the emitted prefix, then unread ids from `readOffset`. */
  private ids: number[];
  private readOffset: number;
  /** decode(ids[0:readOffset]), computed once per emission. */
  private prefixText: string;
  /** Times the window hit MAX_PENDING_TOKENS (the caller may count them). */
  forcedFlushes = 0;

  /**
   * @param decode the window decoder
   * @param skip ids left out of the text (special ids with skip_special_tokens)
   * @param context the prompt's last ids: a decoder that strips a leading space (SentencePiece)
   *   sees the first output token in context, as vLLM's does
   * @param prefixStable decode(a ++ b) = decode(a) + decode(b) whenever decode(a) is complete (a
   *   byte-level decoder): the next prefix's text is the emitted delta, not decoded again
   */
  constructor(
    private readonly decode: WindowDecode,
    private readonly skip: (id: number) => boolean,
    context: readonly number[] = [],
    private readonly prefixStable = false,
  ) {
    this.ids = context.slice(-CONTEXT_TOKENS).filter((id) => !skip(id));
    this.readOffset = this.ids.length;
    this.prefixText = this.ids.length === 0 ? '' : decode(this.ids);
  }

  push(id: number): string {
    if (this.skip(id)) return '';
    this.ids.push(id);
    const text = this.decode(this.ids);
    if (text.length > this.prefixText.length && text.charCodeAt(text.length - 1) !== REPLACEMENT) {
      const delta = text.slice(this.prefixText.length);
      // vLLM's prefix_offset = read_offset, read_offset = len(ids); older ids are dropped (the bound).
      this.ids = this.ids.slice(this.readOffset);
      this.readOffset = this.ids.length;
      this.prefixText = this.prefixStable ? delta : this.decode(this.ids);
      return delta;
    }
    if (this.ids.length - this.readOffset < MAX_PENDING_TOKENS) return '';
    // No complete character in MAX_PENDING_TOKENS ids: emit what they decode to and start afresh.
    this.forcedFlushes++;
    return this.end();
  }

  end(): string {
    if (this.readOffset === this.ids.length) return '';
    const text = this.decode(this.ids);
    this.ids = [];
    this.readOffset = 0;
    const delta = text.slice(this.prefixText.length);
    this.prefixText = '';
    return delta;
  }
}
