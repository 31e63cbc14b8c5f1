/**
 * The bounds every request body is read under, on every listener: its size (before and after
 * gzip), how deep and how many JSON values it may hold, and how long it may take to arrive.
 * They are checked in the frontend, before anything reaches a worker.
 */

/** Bounds on one request body. */
export interface BodyLimits {
  /** Largest body in bytes, as sent and once inflated (`--max-request-size`). */
  readonly maxBytes: number;
  /** Deepest nesting of JSON arrays and objects (`--max-json-depth`). */
  readonly maxDepth: number;
  /** Most JSON values inside arrays and objects, over the whole body (`--max-json-elements`). */
  readonly maxElements: number;
  /** The whole body must arrive within this many ms of the headers (`--request-timeout`). */
  readonly timeoutMs: number;
  /** Longest gap between two pieces of the body, ms (`--request-idle-timeout`). */
  readonly idleTimeoutMs: number;
}

/** The defaults of `tsserve start`. */
export const DEFAULT_BODY_LIMITS: BodyLimits = {
  maxBytes: 1024 * 1024,
  maxDepth: 32,
  maxElements: 262_144,
  timeoutMs: 30_000,
  idleTimeoutMs: 10_000,
};

/** Limits from a byte limit alone (the older signature) or a partial set, over the defaults. */
export function bodyLimits(given?: number | Partial<BodyLimits>): BodyLimits {
  if (given === undefined) return DEFAULT_BODY_LIMITS;
  if (typeof given === 'number') return { ...DEFAULT_BODY_LIMITS, maxBytes: given };
  return { ...DEFAULT_BODY_LIMITS, ...given };
}
