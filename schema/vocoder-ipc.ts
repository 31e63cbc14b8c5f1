/**
 * Messages between the frontend and a vocoder worker (`handler: vocoder`, a pipeline's
 * code2wav stage). Chunks of one request are answered in order. Clocks: every `*EpochMs` field is
 * `performance.timeOrigin + performance.now()` of the process that stamped it — an epoch clock
 * both processes of one host read, so the frontend may subtract its own sender-done reading
 * from the receiver's (in flight); `*Ms` durations are taken on one process's monotonic clock.
 */

/** Frontend → worker: one chunk of codec tokens of a request. */
export interface VocoderChunkMessage {
  readonly type: 'tsserve.voc.chunk';
  readonly requestId: string;
  /** 0, 1, … per request. */
  readonly seq: number;
  readonly codes: Int32Array;
}

/** Frontend → worker: drop every queued chunk of a request (cancelled or failed elsewhere). */
export interface VocoderCancelMessage {
  readonly type: 'tsserve.voc.cancel';
  readonly requestId: string;
}

/** Worker → frontend: the PCM16 audio of one chunk. */
export interface VocoderAudioMessage {
  readonly type: 'tsserve.voc.audio';
  readonly requestId: string;
  readonly seq: number;
  /** Little-endian PCM16 mono frames. */
  readonly pcm: Uint8Array;
  readonly frames: number;
  /** Epoch ms when the worker received the chunk (receiver start). */
  readonly rxStartEpochMs: number;
  /** Receive + deserialise: message handler entry to the model's input tensor built (worker monotonic). */
  readonly rxMs: number;
  /** The model run and the PCM copy (worker monotonic): the stage's generation time. */
  readonly computeMs: number;
}

/** Why the vocoder rejected a chunk (the `reason` label of the skipped-requests counter). */
export type VocoderRejectReason = 'invalid_codec_token' | 'no_codec_tokens' | 'vocoder_failed';

/** Worker → frontend: a chunk was rejected; the request's later chunks are dropped. */
export interface VocoderErrorMessage {
  readonly type: 'tsserve.voc.error';
  readonly requestId: string;
  readonly seq: number;
  readonly reason: VocoderRejectReason;
  readonly message: string;
}

/** Every message a vocoder worker sends besides the common ready/load_failed/log. */
export type FromVocoderMessage = VocoderAudioMessage | VocoderErrorMessage;

/** Whether a worker message is one of the vocoder's (the frontend routes it by type). */
export function isFromVocoderMessage(msg: unknown): msg is FromVocoderMessage {
  if (typeof msg !== 'object' || msg === null) return false;
  const t = (msg as { type?: unknown }).type;
  return t === 'tsserve.voc.audio' || t === 'tsserve.voc.error';
}

/** Epoch milliseconds with sub-ms resolution: the clock every cross-process interval uses. */
export function epochNowMs(): number {
  return performance.timeOrigin + performance.now();
}
