/**
 * Dynamic batching (TorchServe): per model, requests wait in a bounded FIFO; a batch goes to a
 * free worker when `batchSize` requests are waiting or the oldest has waited `maxBatchDelay`
 * ms. Each request has its own response timeout (504); a full queue answers 503.
 */
import type { BatchRequest, BatchTensors, ResultMessage } from '../../schema/worker-protocol.js';
import type { Job, JobOutcome } from './job.js';
import { errorOutcome } from './job.js';
import type { Clock, ClockTimer } from './clock.js';
import { REAL_CLOCK } from './clock.js';
import { UnsendableBatchError, whyUnsendable } from './unsendable.js';
import { msAsUs, roundToNs } from '../../schema/elapsed.js';
import { batchTensors } from './batch-tensors.js';
import {
  batchUnsendableOutcome,
  clientGone,
  requestUnsendableOutcome,
  responseOutcome,
  timeoutOutcome,
  workerDiedOutcome,
} from './batch-outcomes.js';
import { keyedBatchReady, selectKeyedBatch } from './batch-select.js';
import type { BatchDone } from './batch-debug-log.js';

/** A batch's result and the frontend's wall time for it. */
export interface BatchRunResult {
  readonly result: ResultMessage;
  /** Frontend wall time from when the worker could start the batch to its result. */
  readonly wallMs: number;
}

/** A worker that can take one batch. */
export interface BatchWorker {
  readonly id: string;
  runBatch(requests: readonly BatchRequest[], tensors?: BatchTensors): Promise<BatchRunResult>;
}

/** The pool seen from the batcher (the real `WorkerPool`, or a fake in unit tests). */
export interface BatchTarget {
  /**
   * A worker that can take a batch now. `requireEmpty`: only one with nothing in flight (a
   * partial batch is not sent ahead: it keeps filling while the workers are busy).
   */
  idleWorker(requireEmpty?: boolean): BatchWorker | null;
  readonly unavailable: boolean;
  on(event: 'idle', listener: () => void): unknown;
  off(event: 'idle', listener: () => void): unknown;
}

/** Batch settings of one model. */
export interface BatcherSettings {
  readonly batchSize: number;
  readonly maxBatchDelayMs: number;
  readonly responseTimeoutSec: number;
  /** Jobs the queue holds at most before answering 503. */
  readonly queueCapacity: number;
  /** Bytes of decoded input one batch holds at most (jobs with a batch key); default unbounded. */
  readonly maxBatchBytes?: number;
}

/** Per-batch timings for `QueueTime` and `WorkerThreadTime` (ms). */
export type BatchTimingListener = (queueMs: number, workerThreadMs: number) => void;

/** Responses written per event-loop turn when a batch comes back. */
const ANSWER_CHUNK = 4;

/** Why `submit` did not queue a job. */
export type SubmitResult = 'queued' | 'queue_full' | 'unavailable' | 'closed';

interface Slot {
  readonly job: Job;
  settled: boolean;
  timer: ClockTimer | null;
  sentMs: number;
}

/** The queue and dispatcher of one model. */
export class Batcher {
  private queue: Slot[] = [];
  /** Queued jobs with a batch key or a byte count: while there are none, batches are plain FIFO slices. */
  private keyed = 0;
  private inFlight = 0;
  private delayTimer: ClockTimer | null = null;
  /** The queue head `delayTimer` was armed for: its deadline depends on that head alone. */
  private delayHead: Slot | null = null;
  private closed = false;
  private draining = false;
  private drainWaiters: Array<() => void> = [];
  private readonly onIdle = (): void => this.pump();

  constructor(
    private readonly target: BatchTarget,
    private settings: BatcherSettings,
    private readonly onTiming: BatchTimingListener = () => undefined,
    /** Time and timers (a fake in unit tests); jobs' `arrivalMs` must be on this clock. */
    private readonly clock: Clock = REAL_CLOCK,
    /** A job's `done` threw (a bug in a route); the batch's other jobs are still answered. */
    private readonly onDoneError: (err: unknown) => void = () => undefined,
    /** Each batch a worker answered (`--log-level debug`, batch-debug-log.ts); none when absent. */
    private readonly onBatch: ((b: BatchDone) => void) | null = null,
  ) {
    target.on('idle', this.onIdle);
  }

  /** Requests waiting for a worker. */
  get queueLength(): number {
    return this.queue.length;
  }
  get capacity(): number {
    return this.settings.queueCapacity;
  }
  get batchSize(): number {
    return this.settings.batchSize;
  }
  get maxBatchDelayMs(): number {
    return this.settings.maxBatchDelayMs;
  }
  /** Batches currently at a worker. */
  get batchesInFlight(): number {
    return this.inFlight;
  }

  /** Changes batch settings for the batches formed from now on. */
  update(settings: Partial<BatcherSettings>): void {
    this.settings = { ...this.settings, ...settings };
    this.clearDelay(); // armed for the old maxBatchDelay
    this.pump();
  }

  /** Admits a job (its `done` will be called exactly once) or says why not (and never calls it). */
  submit(job: Job): SubmitResult {
    if (this.closed) return 'closed';
    if (this.target.unavailable) return 'unavailable';
    if (this.queue.length >= this.settings.queueCapacity) return 'queue_full';
    const slot: Slot = { job, settled: false, timer: null, sentMs: 0 };
    slot.timer = this.clock.setTimeout(() => this.timeout(slot), this.settings.responseTimeoutSec * 1000, true);
    this.queue.push(slot);
    if (isKeyed(slot)) this.keyed++;
    this.pump();
    return 'queued';
  }

  /**
   * Resolves once the queue is empty and no batch is at a worker (graceful shutdown). Queued
   * requests go out right away, without waiting for maxBatchDelay.
   */
  drain(): Promise<void> {
    this.draining = true;
    this.pump();
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Stops admitting; answers every queued job with 503 (model unregistered). */
  close(message: string): void {
    this.closed = true;
    this.target.off('idle', this.onIdle);
    this.refuseQueued(message);
  }

  /** Answers every queued job with 503 and `message` (the model was scaled to 0 workers). */
  refuseQueued(message: string): void {
    this.clearDelay();
    this.keyed = 0;
    for (const slot of this.queue.splice(0))
      this.settle(slot, errorOutcome(503, 'ServiceUnavailableException', message));
    this.checkDrained();
  }

  /** Forms and sends as many batches as there are idle workers and ready batches. */
  pump(): void {
    if (this.closed) return this.clearDelay();
    while (this.queue.length > 0) {
      const now = this.clock.now();
      const head = this.queue[0];
      const waited = now - head.job.arrivalMs;
      const full =
        this.keyed === 0 ? this.queue.length >= this.settings.batchSize : keyedBatchReady(this.queue, this.limits());
      if (!this.draining && !full && waited < this.settings.maxBatchDelayMs) {
        // Same head, same deadline: keep the armed timer rather than re-arm on every submit.
        if (this.delayTimer !== null && this.delayHead === head) return;
        this.clearDelay();
        this.delayHead = head;
        this.delayTimer = this.clock.setTimeout(
          () => {
            this.delayTimer = null;
            this.delayHead = null;
            this.pump();
          },
          Math.max(0, this.settings.maxBatchDelayMs - waited),
        );
        return;
      }
      this.clearDelay();
      // A full batch may be sent ahead to a busy worker; a partial one only to a free worker,
      // so it keeps filling meanwhile (TorchServe's worker pulls its batch when it is free).
      const worker = this.target.idleWorker(!full && !this.draining);
      if (worker === null) return; // the pool's 'idle' event calls pump again
      const slots = this.takeBatch();
      if (slots.length > 0) this.dispatch(worker, slots, now, waited);
    }
    this.clearDelay();
  }

  private clearDelay(): void {
    if (this.delayTimer !== null) this.clock.clearTimeout(this.delayTimer);
    this.delayTimer = null;
    this.delayHead = null;
  }

  private limits(): { batchSize: number; maxBatchBytes: number } {
    return { batchSize: this.settings.batchSize, maxBatchBytes: this.settings.maxBatchBytes ?? Infinity };
  }

  /** Up to batchSize queued jobs, skipping (and settling) those whose client has gone. */
  private takeBatch(): Slot[] {
    if (this.keyed > 0) return this.takeKeyedBatch();
    const out: Slot[] = [];
    while (out.length < this.settings.batchSize && this.queue.length > 0) {
      const s = this.queue.shift() as Slot;
      if (s.job.cancelled?.() === true) this.settle(s, clientGone());
      else out.push(s);
    }
    if (out.length === 0) this.checkDrained(); // only dropped jobs: nothing goes in flight
    return out;
  }

  /** The next batch of the head's key (batch-select.ts); the other keys' jobs keep their places. */
  private takeKeyedBatch(): Slot[] {
    const { batch, rest, dropped } = selectKeyedBatch(this.queue, this.limits(), (s) => s.job.cancelled?.() === true);
    this.queue = rest;
    for (const s of [...batch, ...dropped]) if (isKeyed(s)) this.keyed--;
    for (const s of dropped) this.settle(s, clientGone());
    if (batch.length === 0) this.checkDrained();
    return batch;
  }

  private dispatch(worker: BatchWorker, slots: Slot[], now: number, oldestWaitMs: number): void {
    for (const s of slots) s.sentMs = now;
    this.inFlight++;
    const requests = slots.map((s) => ({
      requestId: s.job.requestId,
      body: s.job.input === undefined ? s.job.body : null,
    }));
    const tensors = batchTensors(slots.map((s) => s.job));
    const finished = (): void => {
      this.inFlight--;
      this.pump();
      this.checkDrained();
    };
    worker.runBatch(requests, tensors).then(
      ({ result, wallMs }) => {
        this.onTiming(roundToNs(oldestWaitMs), roundToNs(Math.max(0, wallMs - result.handlerMs)));
        this.onBatch?.({
          workerId: worker.id,
          requestIds: slots.map((s) => s.job.requestId),
          result,
          queueMs: oldestWaitMs,
          wallMs,
        });
        this.answerInChunks(worker, slots, result, 0, finished);
      },
      (err: Error) => {
        if (err instanceof UnsendableBatchError) {
          this.unsendable(slots, err);
          finished();
          return;
        }
        for (const s of slots) this.settle(s, workerDiedOutcome(err, msAsUs(s.sentMs - s.job.arrivalMs)));
        finished();
      },
    );
  }

  /**
   * Answers a batch's requests a few at a time, yielding to I/O in between: the worker is
   * meanwhile reading the batch sent ahead, whose tail waits in this process's IPC write
   * queue, and a burst of 32 HTTP writes would hold that tail back.
   */
  private answerInChunks(
    worker: BatchWorker,
    slots: readonly Slot[],
    result: ResultMessage,
    from: number,
    finished: () => void,
  ): void {
    const to = Math.min(slots.length, from + ANSWER_CHUNK);
    for (let i = from; i < to; i++) {
      const s = slots[i];
      const r = result.responses[i];
      this.settle(s, responseOutcome(worker.id, r, result.handlerMs, msAsUs(s.sentMs - s.job.arrivalMs)));
    }
    if (to < slots.length) setImmediate(() => this.answerInChunks(worker, slots, result, to, finished));
    else finished();
  }

  /**
   * A batch could not be serialised to its worker: each request that cannot cross fails alone
   * with 500; the others go back to the head of the queue, in order, and are sent again.
   */
  private unsendable(slots: readonly Slot[], err: UnsendableBatchError): void {
    const keep: Slot[] = [];
    for (const s of slots) {
      const why = whyUnsendable({ requestId: s.job.requestId, body: s.job.input === undefined ? s.job.body : null });
      if (why !== null) this.settle(s, requestUnsendableOutcome(why, msAsUs(s.sentMs - s.job.arrivalMs)));
      else keep.push(s);
    }
    // None alone is at fault (only the batch as a whole): fail them all rather than loop.
    if (keep.length === slots.length) {
      for (const s of keep) this.settle(s, batchUnsendableOutcome(err, msAsUs(s.sentMs - s.job.arrivalMs)));
      return;
    }
    const back = keep.filter((s) => !s.settled);
    for (const s of back) if (isKeyed(s)) this.keyed++;
    this.queue.unshift(...back);
  }

  private timeout(slot: Slot): void {
    slot.timer = null;
    if (slot.settled) return;
    const i = this.queue.indexOf(slot);
    if (i >= 0) {
      this.queue.splice(i, 1);
      if (isKeyed(slot)) this.keyed--;
    }
    const queueUs = slot.sentMs > 0 ? msAsUs(slot.sentMs - slot.job.arrivalMs) : 0;
    this.settle(slot, timeoutOutcome(this.settings.responseTimeoutSec, queueUs));
    this.checkDrained();
  }

  private settle(slot: Slot, outcome: JobOutcome): void {
    if (slot.settled) return;
    slot.settled = true;
    if (slot.timer !== null) this.clock.clearTimeout(slot.timer);
    slot.timer = null;
    try {
      slot.job.done(outcome);
    } catch (err) {
      // A route's answer that throws must not cost the batch's other requests their answers
      // (the loop settling them would stop here) nor the process (this runs in a promise).
      this.onDoneError(err);
    }
  }

  private checkDrained(): void {
    if (this.queue.length === 0 && this.inFlight === 0) for (const w of this.drainWaiters.splice(0)) w();
  }
}

/** A job that batches by key or counts bytes (a built-in onnx model's). */
function isKeyed(s: Slot): boolean {
  return s.job.batchKey !== undefined || s.job.inputBytes !== undefined;
}
