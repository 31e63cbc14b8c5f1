/**
 * The suite's one polling wait: asynchronous parts (workers, sinks, daemons) are waited on
 * with a deadline, never with a bare sleep, and a wait that runs out fails with what it saw.
 */

/** How long and what for `until` waits. */
export interface UntilOptions {
  /** What is awaited, for the failure message. */
  readonly message: string;
  /** Deadline in ms (default 20000); the failure names it. */
  readonly timeoutMs?: number;
  /** Pause between probes in ms (default 50). */
  readonly intervalMs?: number;
  /** What to report as the last observed value when `probe` returns only true/false. */
  readonly observe?: () => unknown;
}

type Reached<T> = Exclude<T, null | undefined | false>;

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 2000 ? `${v.slice(0, 2000)}…` : v);
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 2000 ? `${s.slice(0, 2000)}…` : s;
  } catch {
    return String(v);
  }
}

/**
 * Polls `probe` until it returns something other than null, undefined or false, and resolves
 * with that; after `timeoutMs` it rejects with `message` and the last observed value.
 */
export async function until<T>(probe: () => T | Promise<T>, opts: UntilOptions): Promise<Reached<T>> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== null && v !== undefined && v !== false) return v as Reached<T>;
    if (Date.now() >= deadline) {
      const last = opts.observe !== undefined ? opts.observe() : v;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.message}; last observed: ${describe(last)}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}
