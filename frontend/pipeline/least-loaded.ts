/**
 * Which replica of a stage a pipeline request is bound to when it starts (it then sticks to it):
 * the least loaded, ties spread round-robin.
 */

/**
 * The replica with the least load; ties go round-robin from `turn` (a counter the caller
 * advances), so requests that arrive one after another on an idle pool still spread over it.
 */
export function leastLoaded(candidates: readonly (readonly [number, number])[], turn: number): number | null {
  const n = candidates.length;
  let best: readonly [number, number] | null = null;
  for (let k = 0; k < n; k++) {
    const c = candidates[(turn + k) % n]!;
    if (best === null || c[1] < best[1]) best = c;
  }
  return best === null ? null : best[0];
}
