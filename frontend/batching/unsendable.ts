/**
 * A batch that cannot be serialised to its worker (a value structured clone refuses: a
 * function, a symbol…) is not the worker's fault: the worker stays up, the requests that
 * cannot cross fail alone with 500, and the others are sent again.
 */
import { serialize } from 'v8';

/** Raised by a worker's `runBatch` when the batch message could not be serialised (nothing was sent). */
export class UnsendableBatchError extends Error {}

/** Why `value` cannot cross to a worker, or null when it can. */
export function whyUnsendable(value: unknown): string | null {
  try {
    serialize(value);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}
