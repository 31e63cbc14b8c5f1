/**
 * A spoken request as its callers see it (the OpenAI audio routes of openai/audio.ts, a front
 * relaying one, `tsserve speak`): what they send, where its text and audio go, how they abort it,
 * and how it ended. The orchestrator (orchestrator.ts) drives it through the stages.
 */
import type { FinishReason, GenSamplingParams } from '../../schema/engine-ipc.js';

/** One spoken request. */
export interface SpeakRequest {
  readonly prompt: string | readonly number[];
  readonly params: GenSamplingParams & { readonly max_tokens: number };
  /** Frontend `performance.now()` when the request arrived. */
  readonly arrivalMs: number;
  /** Streamed to a player: the underrun simulation runs on its chunks. */
  readonly streamed: boolean;
  /**
   * Speak these codec tokens as they are (`/v1/audio/speech`: the input's bytes): the thinker is
   * skipped and the frontend feeds code2wav itself, so no thinker→code2wav transfer is recorded.
   */
  readonly codes?: readonly number[];
  /** The request's id, when its reader chose it (a front process answers with it before the primary starts the run). */
  readonly requestId?: string;
}

/** How a spoken request ended well. */
export interface SpeakResult {
  readonly finishReason: FinishReason;
  readonly transcript: string;
  readonly frames: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Prompt tokens the thinker's prefix cache held (usage.prompt_tokens_details.cached_tokens). */
  readonly cachedTokens: number;
  /** The thinker's stop string or stop token id that ended it; null for EOS or a length finish (vLLM's stop_reason). */
  readonly stopReason: string | number | null;
}

/** Where a spoken request's outputs go. `onDone` and `onError` are terminal, exactly one is called. */
export interface SpeakSink {
  onText(text: string): void;
  /** One chunk of mono PCM16 at the stage's sample rate, in order. */
  onAudio(pcm: Uint8Array): void;
  onDone(result: SpeakResult): void;
  onError(status: number, message: string): void;
  /** Admission confirmed, for a request whose handle was `pending` (relayed by a front process). */
  onAccepted?(): void;
}

/** A started spoken request. */
export interface SpeakHandle {
  readonly requestId: string;
  /** The client went away: cancels every stage; the request counts as `abort`. */
  abort(): void;
  /** Admission is not known yet (relayed by a front): `onAccepted` or `onError` follows, before any output. */
  readonly pending?: boolean;
}
