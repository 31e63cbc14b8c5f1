/**
 * Unit helpers. Units in metrics.yaml are free strings printed verbatim (TorchServe logs
 * `HandlerTime.ms:`), so we only classify them, to pick sensible default histogram buckets.
 */

/** What a unit measures, as far as bucket choice is concerned. */
export type UnitKind =
  'milliseconds' | 'microseconds' | 'seconds' | 'percent' | 'ratio' | 'bytes' | 'scaled_bytes' | 'count' | 'other';

const KINDS: ReadonlyArray<readonly [UnitKind, RegExp]> = [
  ['milliseconds', /^(ms|msec|msecs|millis|millisecond|milliseconds)$/],
  ['microseconds', /^(us|µs|μs|usec|usecs|micros|microsecond|microseconds)$/],
  ['seconds', /^(s|sec|secs|second|seconds)$/],
  ['percent', /^(%|pct|percent|percentage)$/],
  ['ratio', /^(ratio|fraction)$/],
  ['bytes', /^(b|byte|bytes)$/],
  ['scaled_bytes', /^(kb|kib|kilobytes?|mb|mib|megabytes?|gb|gib|gigabytes?|tb|terabytes?)$/],
  // TorchServe's own examples use `count`, `Count` and `CallCount`; LLM metrics count tokens.
  ['count', /^(count|calls?|callcount|requests?|tokens?|items?|blocks?|sequences?|steps?|events?)$|count$/],
];

/** Classifies a unit string, case-insensitively. */
export function unitKind(unit: string): UnitKind {
  const u = unit.trim().toLowerCase();
  for (const [kind, re] of KINDS) if (re.test(u)) return kind;
  return 'other';
}
