/**
 * How a gauge written by several processes (the frontend and its workers) renders: the
 * vocabulary of prometheus_client's multi-process gauge modes. `live*` modes drop a process's
 * contribution when it exits; the others keep its last value.
 */
import type { GaugeMerge } from '../../../schema/types.js';

/** The mode of a gauge whose metrics.yaml entry says none. */
export const DEFAULT_GAUGE_MERGE: GaugeMerge = 'livelast';

/** Whether a process's contribution goes when the process exits. */
export function isLive(mode: GaugeMerge): boolean {
  return mode.startsWith('live');
}

/** What a mode computes over the live (or all) contributions. */
export type MergeKind = 'sum' | 'max' | 'min' | 'last';

/** `livesum` → `sum`, `last` → `last`, … */
export function mergeKind(mode: GaugeMerge): MergeKind {
  return (isLive(mode) ? mode.slice(4) : mode) as MergeKind;
}
