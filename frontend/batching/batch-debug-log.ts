/**
 * `--log-level debug`: one line per batch a worker answered, saying what happened to the
 * requests in it: `model mlp: batch of 3 (ids a, b, c) on worker mlp-1: statuses 200 ×3; waited
 * 4.1 ms in the queue (the oldest), worker 6.2 ms, handler 5.0 ms`. Bounded: at most 16 ids are
 * named, and at most `linesPerSecond` lines a second per model are written (a busy model would
 * otherwise write a line per batch); the next line written says how many were left out.
 */
import { echoList } from '../../schema/echo.js';
import type { ResultMessage } from '../../schema/worker-protocol.js';
import type { Clock } from './clock.js';

/** What the batcher knows of one answered batch. */
export interface BatchDone {
  readonly workerId: string;
  readonly requestIds: readonly string[];
  /** The worker's answer: a response per request (in batch order) and the handler's time. */
  readonly result: Pick<ResultMessage, 'responses' | 'handlerMs'>;
  /** The oldest request's wait in the queue (ms). */
  readonly queueMs: number;
  /** Sent to answered (ms). */
  readonly wallMs: number;
}

/** Default bound on debug batch lines per model and second. */
export const DEBUG_BATCH_LINES_PER_SECOND = 10;

/** `200 ×3, 400`: each request's status in batch order (500 for a missing response), runs counted. */
function statusRuns(b: BatchDone): string {
  const statuses = b.requestIds.map((_id, i) => {
    const r = b.result.responses[i];
    return r === undefined ? 500 : r.ok ? 200 : r.status;
  });
  const out: string[] = [];
  for (let i = 0; i < statuses.length;) {
    let j = i;
    while (j < statuses.length && statuses[j] === statuses[i]) j++;
    out.push(j - i > 1 ? `${statuses[i]} ×${j - i}` : String(statuses[i]));
    i = j;
  }
  return out.join(', ');
}

const ms = (x: number): string => `${Math.round(x * 10) / 10} ms`;

/** The debug line of one batch. */
export function batchDebugLine(model: string, b: BatchDone): string {
  const n = b.requestIds.length;
  return `model ${model}: batch of ${n} (id${n === 1 ? '' : 's'} ${echoList(b.requestIds)}) on worker ${b.workerId}: status${n === 1 ? '' : 'es'} ${statusRuns(b)}; waited ${ms(b.queueMs)} in the queue (the oldest), worker ${ms(b.wallMs)}, handler ${ms(b.result.handlerMs)}`;
}

/** A per-model writer of batch debug lines, at most `linesPerSecond` a second. */
export class BatchDebugLog {
  private windowStartMs = Number.NEGATIVE_INFINITY;
  private written = 0;
  private skipped = 0;

  constructor(
    private readonly model: string,
    private readonly write: (line: string) => void,
    private readonly clock: Pick<Clock, 'now'>,
    private readonly linesPerSecond = DEBUG_BATCH_LINES_PER_SECOND,
  ) {}

  /** Logs the batch, or counts it as left out when this second's lines are spent. */
  batch(b: BatchDone): void {
    const now = this.clock.now();
    if (now - this.windowStartMs >= 1000) {
      this.windowStartMs = now;
      this.written = 0;
    }
    if (this.written >= this.linesPerSecond) {
      this.skipped++;
      return;
    }
    this.written++;
    const note =
      this.skipped > 0
        ? ` (${this.skipped} batch lines left out before this one: at most ${this.linesPerSecond} a second)`
        : '';
    this.skipped = 0;
    this.write(batchDebugLine(this.model, b) + note);
  }
}
