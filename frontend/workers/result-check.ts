/**
 * A worker's `tsserve.result` checked where it enters the frontend. The worker's own code builds
 * it well, but the channel is the handler's too (`process.send`), and what crossed was trusted:
 * a result without `responses` threw in the batcher outside any request and ended the server, a
 * status of 700 went out as the HTTP status. Whatever arrives, the batch's requests get answers:
 * a malformed entry becomes a 500 naming the problem, a missing list one 500 per request.
 */
import type { BatchResponse, ResultMessage } from '../../schema/worker-protocol.js';

/** The result as the batcher may use it, and what was wrong with it (null when nothing). */
export interface CheckedResult {
  readonly result: ResultMessage;
  readonly problem: string | null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** True when `v` can be recorded as a duration in ms (a worker's `handlerMs`, `loadTimeMs`). */
export function isDuration(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/** One response entry, or the 500 that replaces a malformed one and the reason. */
function checkResponse(r: unknown, i: number): [BatchResponse, string | null] {
  if (!isRecord(r) || typeof r['ok'] !== 'boolean') return [{ ok: false, status: 500, message: `the worker sent a malformed response for request ${i}` }, `response ${i} is not {ok, ...}`];
  if (r['ok']) return [{ ok: true, body: r['body'] }, null];
  const status = r['status'];
  const message = typeof r['message'] === 'string' ? r['message'] : String(r['message']);
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) {
    return [{ ok: false, status: 500, message }, `response ${i} has status ${String(status)}, not an error status 400-599`];
  }
  return [{ ok: false, status, message }, message === r['message'] ? null : `response ${i} has a message that is not a string`];
}

/** True when `r` is a response the batcher can answer as it is (the hot path: no allocation). */
function wellFormed(r: unknown): boolean {
  if (!isRecord(r)) return false;
  if (r['ok'] === true) return true;
  const status = r['status'];
  return r['ok'] === false && typeof r['message'] === 'string' && typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599;
}

/** Checks a worker's `tsserve.result` (its `type` and `batchId` already matched). */
export function checkResult(m: ResultMessage): CheckedResult {
  const raw = m as unknown as Record<string, unknown>;
  const h = raw['handlerMs'];
  if (Array.isArray(raw['responses']) && (raw['responses'] as unknown[]).every(wellFormed) && isDuration(h)) {
    return { result: m, problem: null };
  }
  const problems: string[] = [];
  let responses: BatchResponse[] = [];
  if (Array.isArray(raw['responses'])) {
    responses = (raw['responses'] as unknown[]).map((r, i) => {
      const [checked, problem] = checkResponse(r, i);
      if (problem !== null) problems.push(problem);
      return checked;
    });
  } else {
    problems.push('responses is not an array');
  }
  const handlerMs = isDuration(h) ? h : 0;
  if (handlerMs !== h) problems.push(`handlerMs ${String(h)} is not a duration`);
  if (problems.length === 0) return { result: m, problem: null };
  return { result: { ...m, responses, handlerMs }, problem: problems.join('; ') };
}
