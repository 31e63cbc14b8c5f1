/**
 * One engine sequence (a child of a request when n > 1): its tokens, KV bookkeeping, engine
 * events and clocks, and its incremental text with stop-string detection.
 */
import type { EngineEvent, FinishReason, GenTokenLogprobs, PrefillStats } from '../../schema/engine-ipc.js';
import type { SamplingParams, Prng } from './sampling.js';
import type { StopRule } from './stopping.js';
import type { TokenStreamDecoder } from '../../schema/text/incremental-detokenizer.js';

const NO_EVENTS: readonly EngineEvent[] = Object.freeze([]);

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/** Where a sequence is in the scheduler. */
export type SeqStatus = 'waiting' | 'running' | 'finished';

/** A sequence's state; fields are mutated only by the engine core and its scheduler. */
export class Sequence {
  status: SeqStatus = 'waiting';
  /** Prompt then generated tokens. */
  readonly tokens: number[];
  /** Tokens whose K/V are computed (in the runner's row and the blocks). */
  numComputed = 0;
  blockTable: number[] = [];
  /** Hash keys of the full blocks of `tokens`, computed as blocks fill. */
  readonly blockHashes: string[] = [];
  /** Events not yet sent. */
  events: EngineEvent[] = [];
  numPreemptions = 0;
  /** True from (re)admission until its next sampled token: its computed tokens count as prompt tokens. */
  inPrefill = false;
  /** Leading blocks of the table already registered in the prefix cache. */
  blocksCached = 0;
  /** Set on the first schedule; sent once with the first output. */
  prefill: PrefillStats | undefined;
  prefillSent = false;
  queuedTs = 0;
  firstScheduledTs = -1;
  firstTokenTs = -1;
  lastTokenTs = -1;
  finishReason: FinishReason | undefined;
  /** The stop string or stop token id that finished the sequence. */
  stopReason: string | number | undefined;
  /** Text generated so far (after a stop string matched: cut before it). */
  text = '';
  /** A logits row of this sequence held a NaN (set only by an engine with computeNansInLogits). */
  corrupted = false;
  /** Logprobs of the tokens not yet sent (only when the request asked for them). */
  logprobs: GenTokenLogprobs[] = [];
  private emitted = 0;
  private readonly holdBack: number;

  constructor(
    readonly requestId: string,
    readonly index: number,
    /** Numeric id, unique per engine, that keys the runner's row. */
    readonly seqId: number,
    promptTokenIds: readonly number[],
    readonly params: SamplingParams,
    readonly rng: Prng,
    private readonly decoder: TokenStreamDecoder,
    readonly stopRule: StopRule,
  ) {
    this.tokens = [...promptTokenIds];
    this.promptLen = promptTokenIds.length;
    // A stop string kept in the output needs no held-back tail (vLLM's stop_buffer_length).
    this.holdBack = params.includeStopStrInOutput ? 0 : params.stop.reduce((m, s) => Math.max(m, s.length - 1), 0);
    this.reserve = promptTokenIds.length + params.maxTokens;
  }

  /** The most positions this sequence can reach (before the engine's maxModelLen cap). */
  readonly reserve: number;

  readonly promptLen: number;

  /** Generated tokens so far. */
  get numOutput(): number {
    return this.tokens.length - this.promptLen;
  }

  /** Ids the next sample may not take (EOS and stop ids too while under min_tokens). */
  banned(): readonly number[] {
    return this.numOutput < this.stopRule.minTokens ? this.stopRule.bannedEarly : this.stopRule.bannedLate;
  }

  /**
   * Appends a sampled token and finishes the sequence as vLLM's check_stop does: `length` at
   * max_tokens or maxModelLen first; then, once min_tokens outputs exist, `stop` on an EOS id
   * (unless ignore_eos) or a stop token id (its id is the stop reason). A stopping token is not
   * rendered as text. Stop strings are looked for in the new text after min_tokens (vLLM's
   * detokenizer) and win over `length`.
   */
  append(token: number, maxModelLen: number): void {
    this.tokens.push(token);
    const n = this.numOutput;
    const rule = this.stopRule;
    let reason: FinishReason | undefined;
    if (n >= this.params.maxTokens || this.tokens.length >= maxModelLen) reason = 'length';
    else if (n >= rule.minTokens) {
      if (rule.eosIds.has(token)) reason = 'stop';
      else if (rule.stopTokenIds.has(token)) {
        reason = 'stop';
        this.stopReason = token;
      }
    }
    if (reason === 'stop') {
      // include_stop_str_in_output renders the stopping token (EOS decodes to nothing anyway).
      if (this.params.includeStopStrInOutput) this.text += this.decoder.push(token);
      this.finish('stop');
      return;
    }
    const before = this.text.length;
    this.text += this.decoder.push(token);
    if (this.params.stop.length > 0 && this.text.length > before && n > rule.minTokens) {
      for (const s of this.params.stop) {
        const at = this.text.indexOf(s, Math.max(0, before - s.length + 1));
        if (at >= 0) {
          this.text = this.text.slice(0, this.params.includeStopStrInOutput ? at + s.length : at);
          this.stopReason = s;
          this.finish('stop');
          return;
        }
      }
    }
    if (reason !== undefined) this.finish(reason);
  }

  /** Marks the sequence finished (idempotent: the first reason wins). */
  finish(reason: FinishReason): void {
    if (this.finishReason !== undefined) return;
    this.finishReason = reason;
    this.status = 'finished';
    // A dangling partial character is shown as U+FFFD, except after a stop string cut the text.
    if (typeof this.stopReason !== 'string') this.text += this.decoder.end();
  }

  /**
   * Text not yet sent; while running, the tail that could begin a stop string is held back. The
   * cut never falls between the two UTF-16 halves of a character above U+FFFF: a chunk ending in
   * a lone high surrogate is invalid Unicode to every client that does not join chunks as JS strings.
   */
  takeText(): string {
    let end =
      this.finishReason !== undefined ? this.text.length : Math.max(this.emitted, this.text.length - this.holdBack);
    if (end > this.emitted && end < this.text.length && isHighSurrogate(this.text.charCodeAt(end - 1))) end--;
    const out = this.text.slice(this.emitted, end);
    this.emitted = end;
    return out;
  }

  /** Times this sequence's detokenizer hit its bound (the engine counts them in its stats). */
  get detokenizerFlushes(): number {
    return this.decoder.forcedFlushes ?? 0;
  }

  /** Drains the pending logprobs. */
  takeLogprobs(): GenTokenLogprobs[] {
    const l = this.logprobs;
    this.logprobs = [];
    return l;
  }

  /** Drains the pending events. */
  takeEvents(): readonly EngineEvent[] {
    if (this.events.length === 0) return NO_EVENTS;
    const e = this.events;
    this.events = [];
    return e;
  }
}
