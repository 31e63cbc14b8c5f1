/**
 * A worker's `tsserve.result` checked where it enters the frontend. The worker's own code builds
 * it well, but the channel is the handler's too (`process.send`), and what crossed was trusted:
 * a result without `responses` threw in the batcher outside any request and ended the server, a
 * status of 700 went out as the HTTP status. Whatever arrives, the batch's requests get answers:
 * a malformed entry becomes a 500 naming the worker and the problem, and a result whose
 * responses cannot be matched to the requests (no list, or not one response per request) a 500
 * for every request: responses are matched by position, so with one missing or one too many
 * every answer after it could be another request's.
 */
import type { BatchResponse, ResultMessage } from '../../schema/worker-protocol.js';

/** The result as the batcher may use it, and what was wrong with it. */
export interface CheckedResult {
  readonly result: ResultMessage;
  /** What was wrong, for the log; null when nothing. */
  readonly problem: string | null;
  /** Responses beyond the batch's requests (dropped); 0 when none. */
  readonly extra: number;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** True when `v` can be recorded as a duration in ms (a worker's `handlerMs`, `loadTimeMs`). */
export function isDuration(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/** One response entry of `worker`, or the 500 that replaces a malformed one and the reason. */
function checkResponse(r: unknown, i: number, worker: string): [BatchResponse, string | null] {
  if (!isRecord(r) || typeof r['ok'] !== 'boolean')
    return [
      { ok: false, status: 500, message: `worker ${worker} sent a malformed response for request ${i} of its batch` },
      `response ${i} is not {ok, ...}`,
    ];
  if (r['ok']) return [{ ok: true, body: r['body'] }, null];
  const status = r['status'];
  const message = typeof r['message'] === 'string' ? r['message'] : String(r['message']);
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) {
    return [
      {
        ok: false,
        status: 500,
        message: `worker ${worker} sent an error with status ${String(status)}, not 400-599: ${message}`,
      },
      `response ${i} has status ${String(status)}, not an error status 400-599`,
    ];
  }
  return [
    { ok: false, status, message },
    message === r['message'] ? null : `response ${i} has a message that is not a string`,
  ];
}

/** True when `r` is a response the batcher can answer as it is (the hot path: no allocation). */
function wellFormed(r: unknown): boolean {
  if (!isRecord(r)) return false;
  if (r['ok'] === true) return true;
  const status = r['status'];
  return (
    r['ok'] === false &&
    typeof r['message'] === 'string' &&
    typeof status === 'number' &&
    Number.isInteger(status) &&
    status >= 400 &&
    status <= 599
  );
}

/** `size` copies of one 500. */
function failAll(size: number, message: string): BatchResponse[] {
  return Array.from({ length: size }, () => ({ ok: false as const, status: 500, message }));
}

/** Checks `worker`'s `tsserve.result` for a batch of `size` requests (its `type` and `batchId` already matched). */
export function checkResult(m: ResultMessage, size: number, worker: string): CheckedResult {
  const raw = m as unknown as Record<string, unknown>;
  const h = raw['handlerMs'];
  const list = raw['responses'];
  if (Array.isArray(list) && list.length === size && list.every(wellFormed) && isDuration(h)) {
    return { result: m, problem: null, extra: 0 };
  }
  const problems: string[] = [];
  let responses: BatchResponse[];
  let extra = 0;
  if (!Array.isArray(list)) {
    problems.push('responses is not an array');
    responses = failAll(size, `worker ${worker} sent a malformed result: its responses are not a list`);
  } else if (list.length !== size) {
    problems.push(`${list.length} responses for a batch of ${size} requests`);
    extra = Math.max(0, list.length - size);
    responses = failAll(
      size,
      `worker ${worker} sent ${list.length} responses for a batch of ${size} requests; they cannot be matched to the requests`,
    );
  } else {
    responses = list.map((r: unknown, i) => {
      const [checked, problem] = checkResponse(r, i, worker);
      if (problem !== null) problems.push(problem);
      return checked;
    });
  }
  const handlerMs = isDuration(h) ? h : 0;
  if (handlerMs !== h) problems.push(`handlerMs ${String(h)} is not a duration`);
  if (problems.length === 0) return { result: m, problem: null, extra: 0 };
  return { result: { ...m, responses, handlerMs }, problem: problems.join('; '), extra };
}
