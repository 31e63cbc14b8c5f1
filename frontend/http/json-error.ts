/**
 * The reason of a `JSON.parse` failure as we answer it: V8's own message without the
 * ` (line N column M)` suffix newer Node lines add, so a client sees the same text whichever
 * Node line serves it (the position is already in the message).
 */
export function jsonErrorReason(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/ \(line \d+ column \d+\)$/, '');
}
