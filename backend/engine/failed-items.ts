/**
 * Which items of an engine step failed: an item whose own run failed, and an item that adopted
 * (as a prefix-cache hit) a block that a failed item of the same step was to fill, since its row
 * was built from K/V that were never computed.
 */
import type { RunResult } from './runner.js';
import type { ScheduledItem } from './scheduler.js';
import type { Sequence } from './sequence.js';

/**
 * Per plan item, the message of the failure that finishes it, if any: its own run failed, or it
 * adopted a block that a failed item of this step was to fill (its row was built from garbage).
 */
export function failedItems(
  plan: readonly ScheduledItem[],
  results: readonly RunResult[],
  registered: readonly { readonly block: number; readonly seq: Sequence }[],
  blockSize: number,
): (string | undefined)[] {
  const out: (string | undefined)[] = plan.map((_, i) => {
    const r = results[i];
    return r instanceof Error ? r.message : undefined;
  });
  if (registered.length === 0 || !out.some((m) => m !== undefined)) return out;
  const bad = new Map<number, string>();
  for (let i = 0; i < plan.length; i++) {
    const m = out[i];
    if (m === undefined) continue;
    for (const r of registered) if (r.seq === plan[i]!.seq) bad.set(r.block, m);
  }
  for (let i = 0; i < plan.length; i++) {
    if (out[i] !== undefined) continue;
    const it = plan[i]!;
    const adopted = Math.floor(it.start / blockSize);
    for (let b = 0; b < adopted; b++) {
      const m = bad.get(it.seq.blockTable[b]!);
      if (m !== undefined) {
        out[i] = `its prefix blocks came from a failed run (${m})`;
        break;
      }
    }
  }
  return out;
}
