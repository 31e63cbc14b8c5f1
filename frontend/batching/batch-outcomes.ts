/**
 * How the batcher answers a job: a worker's response to it, or why it got none (the worker died,
 * the request could not be sent, the response timeout passed, the client left). Each answer is a
 * status, TorchServe's exception type and a message naming the cause.
 */
import type { BatchResponse } from '../../schema/worker-protocol.js';
import { msAsUs } from '../../schema/elapsed.js';
import type { JobOutcome } from './job.js';
import { errorOutcome } from './job.js';

/** A job's answer from its entry of a batch result (undefined when the worker returned none for it). */
export function responseOutcome(
  workerId: string,
  r: BatchResponse | undefined,
  handlerMs: number,
  queueUs: number,
): JobOutcome {
  if (r === undefined)
    return errorOutcome(
      500,
      'InternalServerException',
      `worker ${workerId} returned no response for this request`,
      queueUs,
    );
  if (r.ok) return { status: 200, body: r.body, queueUs, handlerUs: msAsUs(handlerMs) };
  return errorOutcome(r.status, r.status < 500 ? 'BadRequestException' : 'InternalServerException', r.message, queueUs);
}

/** The answer of each job of a batch whose worker died (or failed) before it answered. */
export function workerDiedOutcome(err: Error, queueUs: number): JobOutcome {
  return errorOutcome(500, 'InternalServerException', `Worker died: ${err.message}`, queueUs);
}

/** The answer of a job whose own request cannot be serialised to a worker (`why`, unsendable.ts). */
export function requestUnsendableOutcome(why: string, queueUs: number): JobOutcome {
  return errorOutcome(500, 'InternalServerException', `the request cannot be sent to a worker: ${why}`, queueUs);
}

/** The answer of each job of a batch that cannot be serialised as a whole though none alone is at fault. */
export function batchUnsendableOutcome(err: Error, queueUs: number): JobOutcome {
  return errorOutcome(500, 'InternalServerException', `the batch cannot be sent to a worker: ${err.message}`, queueUs);
}

/** The answer of a job still unanswered when its response timeout passed. */
export function timeoutOutcome(responseTimeoutSec: number, queueUs: number): JobOutcome {
  return errorOutcome(
    504,
    'RequestTimeoutException',
    `no response within responseTimeout ${responseTimeoutSec} s`,
    queueUs,
  );
}

/** The answer of a queued job whose client went away before it was sent. */
export function clientGone(): JobOutcome {
  return errorOutcome(503, 'ServiceUnavailableException', 'client closed the connection before the request was served');
}
