/**
 * One forked worker process and the control protocol spoken with it
 * (`schema/worker-protocol.ts`): init → ready | load_failed, batch → result, shutdown.
 * Metrics messages (alone or carried in a result) go straight to the ingest, undecoded (it
 * decodes them); any other message to `onOtherMessage`.
 */
import { fork } from 'child_process';
import { performance } from 'perf_hooks';
import type { ChildProcess } from 'child_process';
import { EventEmitter } from 'events';
import type {
  BatchRequest,
  BatchTensors,
  FromWorkerMessage,
  InitMessage,
  ReadyMessage,
} from '../../schema/worker-protocol.js';
import { WORKER_LOG_LEVELS, isFromWorkerMessage } from '../../schema/worker-protocol.js';
import type { Log } from '../log/log.js';
import type { WorkerMetricsIngest } from '../metrics/ingest.js';
import { UnsendableBatchError } from '../batching/unsendable.js';
import type { BatchRunResult } from '../batching/batcher.js';
import { exitText, STDIO_GRACE_MS, whenChildGone } from './child-gone.js';
import { BatchWatchdog } from './batch-watchdog.js';
import { checkResult, isDuration } from './result-check.js';
import { OutputFaults } from './output-faults.js';
import { workerEnv } from './worker-env.js';
import { pipeWorkerStdio } from './worker-stdio.js';
import type { WorkerOutputFault } from './output-faults.js';

/** Lifecycle states, as shown by the management API. */
export type WorkerStatus = 'STARTING' | 'READY' | 'BUSY' | 'STOPPING' | 'DEAD';

/** How to start one worker. */
export interface WorkerProcessOptions {
  /** Compiled worker entry script. */
  readonly entry: string;
  readonly init: InitMessage;
  /** Takes the worker's metrics messages, alone or carried in a result (`MetricsIngest`). */
  readonly ingest: Pick<WorkerMetricsIngest, 'handle'>;
  /** Every message that is neither a control message nor metrics (engine outputs). */
  readonly onOtherMessage: (workerId: string, msg: unknown) => void;
  /**
   * Where the worker's log lines go: its `tsserve.log` messages at their level, its stdout
   * lines at info and its stderr lines (a crash's stack, node's own warnings) at warn, each
   * with a `stream` field. Pass a child logger carrying the worker's bindings.
   */
  readonly log: Log;
  /**
   * Batches sent ahead (default 2): the next batch travels over IPC while the current one
   * computes, and the worker runs them one after the other.
   */
  readonly depth?: number;
  /** Bound on the load (init → ready), ms: past it the worker is killed and `load()` rejects. None when absent. */
  readonly loadTimeoutMs?: number;
  /**
   * Bound on one batch (TorchServe's responseTimeout), ms, counted from when the worker could
   * start it: past it the worker is killed (its batches fail) so the pool replaces it.
   */
  readonly batchTimeoutMs?: number;
  /** Adds `n` to the model's `tsserve_worker_output_faults_total{reason}` (none counted when absent). */
  readonly countFault?: (reason: WorkerOutputFault, n: number) => void;
  /** Monotonic ms for spacing the fault log lines (default `performance.now`; a fake clock's in tests). */
  readonly nowMs?: () => number;
}

interface Pending {
  readonly sentMs: number;
  /** Requests in the batch: the result must have one response for each. */
  readonly size: number;
  resolve(r: BatchRunResult): void;
  reject(e: Error): void;
}

/** Raised when the worker exits or is lost while a batch or the load is pending. */
export class WorkerLostError extends Error {}

/** A forked worker: start it, send it batches one at a time, shut it down. Emits `exit`. */
export class WorkerProcess extends EventEmitter {
  readonly id: string;
  readonly startTime = new Date();
  private readonly child: ChildProcess;
  private statusValue: WorkerStatus = 'STARTING';
  private readonly pending = new Map<number, Pending>();
  private lastResultMs = 0;
  private readonly depth: number;
  private loadWait: { resolve(r: ReadyMessage): void; reject(e: Error): void } | null = null;
  private nextBatchId = 1;
  private exited = false;
  private readonly exitPromise: Promise<void>;
  /** Armed while a batch is at the worker: fires when the one it can be running outlives batchTimeoutMs (emits 'overdue', then kills). */
  private readonly watchdog: BatchWatchdog;
  /** Why the frontend killed this worker (load or batch timeout), for the errors it answers. */
  private killedFor: string | null = null;
  private readonly faults: OutputFaults;

  constructor(private readonly opts: WorkerProcessOptions) {
    super();
    this.id = opts.init.workerId;
    this.depth = Math.max(1, opts.depth ?? 2);
    this.watchdog = new BatchWatchdog(
      opts.batchTimeoutMs,
      () => this.emit('overdue'),
      (why) => this.killFor(`worker ${this.id}: ${why}`),
    );
    this.faults = new OutputFaults(
      opts.countFault ?? (() => undefined),
      (msg) => opts.log.error(msg),
      opts.nowMs ?? (() => performance.now()),
    );
    this.child = fork(opts.entry, [], {
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: workerEnv(process.env, this.id),
    });
    pipeWorkerStdio(this.child, opts.log, () => this.faults.countOnly('log_line_truncated'));
    this.child.on('message', (msg: unknown) => this.onMessage(msg));
    this.exitPromise = new Promise((resolve) => {
      whenChildGone(
        this.child,
        (code, signal) => {
          this.exited = true;
          this.statusValue = 'DEAD';
          this.watchdog.disarm();
          const why = this.killedFor ?? `worker ${this.id} exited (${exitText(code, signal)})`;
          this.loadWait?.reject(new WorkerLostError(why));
          this.loadWait = null;
          for (const p of this.pending.values()) p.reject(new WorkerLostError(why));
          this.pending.clear();
          this.emit('exit', code, signal);
          resolve();
        },
        (code, signal) => {
          opts.log.warn(
            `worker ${this.id} exited (${exitText(code, signal)}) and its IPC channel closed, but its stdout and stderr are still open ${STDIO_GRACE_MS} ms later (a process it started holds them): handled as gone`,
          );
          this.faults.countOnly('stdio_held');
        },
      );
    });
    this.child.on('error', () => {
      /* surfaced through 'close' */
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
  get status(): WorkerStatus {
    return this.statusValue;
  }
  get busy(): boolean {
    return this.pending.size > 0;
  }
  /** Batches sent and not answered yet. */
  get inFlight(): number {
    return this.pending.size;
  }
  /** True when a batch may be sent now (ready, and fewer than `depth` in flight). */
  get canTake(): boolean {
    return (
      (this.statusValue === 'READY' || this.statusValue === 'BUSY') &&
      this.pending.size < this.depth &&
      !this.watchdog.overdue
    );
  }

  /** No new batches from now on (scale-down): the worker finishes what it holds. */
  retire(): void {
    if (this.statusValue !== 'DEAD') this.statusValue = 'STOPPING';
  }
  get alive(): boolean {
    return !this.exited;
  }

  /** Why the frontend killed this worker (a load or batch timeout), or null. */
  get killReason(): string | null {
    return this.killedFor;
  }

  /** Sends init; resolves on `ready`, rejects on `load_failed`, exit or the load timeout. */
  load(): Promise<ReadyMessage> {
    return new Promise<ReadyMessage>((resolve, reject) => {
      const limit = this.opts.loadTimeoutMs;
      const timer =
        limit === undefined
          ? null
          : setTimeout(() => {
              // The rejection names the timeout; the kill that follows finds loadWait already gone.
              this.loadWait = null;
              this.killFor(
                `worker ${this.id} did not load within the model load timeout of ${limit / 1000} s; killed`,
                false,
              );
              reject(new Error(this.killedFor ?? ''));
            }, limit);
      timer?.unref();
      const done = (): void => {
        if (timer !== null) clearTimeout(timer);
      };
      this.loadWait = {
        resolve: (r) => {
          done();
          resolve(r);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      this.send(this.opts.init);
    });
  }

  /** Sends one batch; resolves with the worker's result, rejects if the worker is lost. */
  runBatch(requests: readonly BatchRequest[], tensors?: BatchTensors): Promise<BatchRunResult> {
    if (!this.canTake) {
      return Promise.reject(
        new Error(`worker ${this.id} is ${this.statusValue} with ${this.pending.size} batch(es) in flight`),
      );
    }
    const batchId = this.nextBatchId++;
    this.statusValue = 'BUSY';
    return new Promise<BatchRunResult>((resolve, reject) => {
      this.pending.set(batchId, { sentMs: performance.now(), size: requests.length, resolve, reject });
      if (this.pending.size === 1) this.arm();
      const msg =
        tensors === undefined
          ? { type: 'tsserve.batch', batchId, requests }
          : { type: 'tsserve.batch', batchId, requests, tensors };
      if (this.exited || !this.child.connected) return;
      try {
        this.child.send(msg, (err) => {
          if (err) this.child.kill('SIGKILL');
        });
      } catch (e) {
        // Serialisation throws before anything is written: the channel is intact, the worker
        // keeps serving, and the batcher fails the requests that cannot cross, alone.
        this.pending.delete(batchId);
        if (this.pending.size === 0) {
          this.watchdog.disarm();
          if (this.statusValue === 'BUSY') this.statusValue = 'READY';
        } else this.arm();
        reject(new UnsendableBatchError(e instanceof Error ? e.message : String(e)));
      }
    });
  }

  /** Sends a message outside the batch protocol (generation add/abort); false when the worker is gone. */
  post(msg: object): boolean {
    if (this.exited || !this.child.connected) return false;
    this.send(msg);
    return true;
  }

  /** Asks the worker to flush and exit; kills it if it has not exited within `timeoutMs`. */
  async shutdown(timeoutMs: number): Promise<void> {
    if (this.exited) return;
    if (this.statusValue !== 'DEAD') this.statusValue = 'STOPPING';
    this.send({ type: 'tsserve.shutdown' });
    const timer = setTimeout(() => {
      if (!this.exited) this.child.kill('SIGKILL');
    }, timeoutMs);
    timer.unref();
    await this.exitPromise;
    clearTimeout(timer);
  }

  /** Kills the process right away (used when a load failed, and at the shutdown deadline). */
  kill(): Promise<void> {
    if (!this.exited) this.child.kill('SIGKILL');
    return this.exitPromise;
  }

  /** Kills the worker, answering what it held with `why` (a timeout the frontend enforces). */
  private killFor(why: string, log = true): void {
    if (this.exited) return;
    this.killedFor ??= why;
    if (log) this.opts.log.error(why);
    this.child.kill('SIGKILL');
  }

  /**
   * Arms the watchdog for the oldest batch in flight, from when the worker could start it (its
   * send, or the previous result for a batch sent ahead): TorchServe kills a worker whose batch
   * outlives responseTimeout and starts a new one, so one stuck handler cannot hold the model.
   */
  private arm(): void {
    const oldest = this.pending.values().next();
    if (oldest.done === true) this.watchdog.disarm();
    else this.watchdog.arm(Math.max(oldest.value.sentMs, this.lastResultMs));
  }

  private send(msg: object): void {
    if (this.exited || !this.child.connected) return;
    try {
      this.child.send(msg, (err) => {
        if (err) this.child.kill('SIGKILL');
      });
    } catch {
      this.child.kill('SIGKILL'); // channel broken: the exit handler answers what was pending
    }
  }

  private onMessage(msg: unknown): void {
    if (!isFromWorkerMessage(msg)) {
      if (!this.opts.ingest.handle(this.id, msg)) this.opts.onOtherMessage(this.id, msg);
      return;
    }
    const m: FromWorkerMessage = msg;
    switch (m.type) {
      case 'tsserve.ready': {
        this.statusValue = 'READY';
        // A load time that is not a duration (the channel is the handler's too) is recorded as 0.
        this.loadWait?.resolve(isDuration((m as { loadTimeMs?: unknown }).loadTimeMs) ? m : { ...m, loadTimeMs: 0 });
        this.loadWait = null;
        break;
      }
      case 'tsserve.load_failed':
        this.loadWait?.reject(new Error(`worker ${this.id} failed to load: ${m.error}`));
        this.loadWait = null;
        break;
      case 'tsserve.log': {
        // Checked here, at the edge: a bad level is logged at warn, never used as a method name.
        const at = (WORKER_LOG_LEVELS as readonly unknown[]).includes(m.level)
          ? this.opts.log[m.level]
          : this.opts.log.warn;
        at(typeof m.msg === 'string' ? m.msg : String(m.msg));
        break;
      }
      case 'tsserve.result': {
        // The batch's metrics first (the ingest validates them), so they are counted by the
        // time its requests are answered.
        if (m.metrics !== undefined) this.opts.ingest.handle(this.id, m.metrics);
        const p = this.pending.get(m.batchId);
        if (p === undefined) {
          // Never sent, or answered already (a forged or repeated result): nothing is left for it to answer.
          this.faults.report(
            'unknown_batch',
            1,
            `worker ${this.id} sent a result for batch ${String(m.batchId)}, which is not in flight at it; dropped`,
          );
          return;
        }
        this.pending.delete(m.batchId);
        const checked = checkResult(m, p.size, this.id);
        if (checked.problem !== null) {
          const what = `worker ${this.id} sent a malformed result for batch ${String(m.batchId)}: ${checked.problem}`;
          if (checked.extra > 0) this.faults.report('extra_response', checked.extra, what);
          else this.faults.report('malformed_result', 1, what);
        }
        const now = performance.now();
        // A batch sent ahead could only start when the previous result came back.
        const wallMs = now - Math.max(p.sentMs, this.lastResultMs);
        this.lastResultMs = now;
        if (this.statusValue === 'BUSY' && this.pending.size === 0) this.statusValue = 'READY';
        this.arm(); // the next batch in flight starts now
        p.resolve({ result: checked.result, wallMs });
        this.emit('idle');
        break;
      }
    }
  }
}
