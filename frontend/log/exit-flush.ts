/**
 * Queued log files not yet closed, written out synchronously when the process exits (no
 * callback runs after 'exit', so what is still queued would be lost otherwise).
 */

/** A file that can write its queue at once. */
export interface SyncFlushable {
  flushSync(): void;
}

const unclosed = new Set<SyncFlushable>();
let exitHooked = false;

function flushAllAtExit(): void {
  for (const f of unclosed) f.flushSync();
}

/** Writes `file`'s queue out at exit, until `closedAtExit(file)`. */
export function flushAtExit(file: SyncFlushable): void {
  unclosed.add(file);
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', flushAllAtExit);
  }
}

/** `file` is closed: nothing of it is left to write at exit. */
export function closedAtExit(file: SyncFlushable): void {
  unclosed.delete(file);
}
