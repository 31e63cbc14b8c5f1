/**
 * The per-chunk player simulation of vLLM-Omni's audio_continuity benchmark: a player starts
 * playing when the first chunk arrives and plays without pause while it has audio; a chunk that
 * arrives after the buffered audio ran out leaves a silent gap (an underrun), after which
 * playback resumes at its arrival. The worst gap of a request is its underrun.
 */

/** One chunk as the player sees it: arrival time (s, any origin) and playable length (s). */
export interface PlayerChunk {
  readonly arrivalSec: number;
  readonly durationSec: number;
}

/** The longest silent gap (s) a listener hears; 0 when every chunk came before the buffer ran dry. */
export function worstUnderrunSec(chunks: readonly PlayerChunk[]): number {
  let worst = 0;
  let bufferEnd = Number.NEGATIVE_INFINITY;
  for (const c of chunks) {
    if (bufferEnd !== Number.NEGATIVE_INFINITY && c.arrivalSec > bufferEnd)
      worst = Math.max(worst, c.arrivalSec - bufferEnd);
    bufferEnd = Math.max(bufferEnd, c.arrivalSec) + c.durationSec;
  }
  return worst;
}

/** Playable length of `bytes` of mono PCM16 at `sampleRate`. */
export function pcm16Seconds(bytes: number, sampleRate: number): number {
  return bytes / 2 / sampleRate;
}
