/**
 * The workers of one model: starts `minWorkers`, replaces a worker that dies (backoff 1 s, 2 s,
 * 4 s … capped), scales on request, and hands idle workers to the batcher.
 */
import { EventEmitter } from 'events';
import type { MetricsConfig } from '../../schema/types.js';
import type { AutoLabels } from '../../schema/metrics-api.js';
import { NOOP_SERIES } from '../../schema/metrics-api.js';
import type { InitMessage, ModelConfig } from '../../schema/worker-protocol.js';
import { WORKER_PROTOCOL_VERSION } from '../../schema/worker-protocol.js';
import type { Log } from '../log/log.js';
import type { WorkerMetricsIngest } from '../metrics/ingest.js';
import { WorkerProcess } from './worker-process.js';
import type { WorkerStatus } from './worker-process.js';
import type { Clock, ClockTimer } from '../batching/clock.js';
import { REAL_CLOCK } from '../batching/clock.js';
import type { StartGate } from './start-gate.js';
import type { WorkerOutputFault } from './output-faults.js';

/** What a pool needs from the server around it. */
export interface WorkerPoolDeps {
  readonly entry: string;
  readonly metrics: MetricsConfig;
  /** False when metrics are off: the workers' caches are no-ops (default true). */
  readonly metricsEnabled?: boolean;
  /** The labels the server fills in, carried to each worker (default none). */
  readonly autoLabels?: AutoLabels;
  /** TorchServe-style worker port numbers, unique per incarnation (9000, 9001, …). */
  readonly nextWorkerPort: () => number;
  /**
   * Where the workers' metrics go: each worker process hands it its metrics messages, the pool
   * announces each incarnation to it before the fork (`started`) and forgets it after its exit.
   */
  readonly ingest: WorkerMetricsIngest;
  /** A worker's messages that are neither control nor metrics (a generation engine's outputs). */
  readonly onOtherMessage: (workerId: string, msg: unknown) => void;
  /** A worker is gone for good (the ingest forgets it right after): drop per-worker state. */
  readonly onWorkerGone: (workerId: string) => void;
  /** A worker loaded its model (`WorkerLoadTime`). */
  readonly onWorkerLoaded: (workerId: string, loadTimeMs: number) => void;
  /** The pool's logger; each worker logs through a child with `worker` and `model` bindings. */
  readonly log: Log;
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  readonly shutdownTimeoutMs?: number;
  /** Timers for the restart backoff (default: Node's; a fake in unit tests). */
  readonly clock?: Clock;
  /** Server-wide bound on workers loading at once (none when absent). */
  readonly startGate?: StartGate;
  /** Bound on each worker's load (init → ready), ms; past it the worker is killed as a failed load. */
  readonly loadTimeoutMs?: number;
  /**
   * The pool's unexpected-exit counter, bound once per pool (`tsserve_worker_restarts_total`
   * for the model); recorded at 0 when bound, so the series exists before the first crash.
   */
  readonly restartCounter?: (modelName: string) => { record(n: number): void };
  /**
   * The model's `tsserve_worker_output_faults_total` series of one reason, bound on the first
   * fault of that reason (a healthy model shows none of them).
   */
  readonly faultCounter?: (modelName: string, reason: WorkerOutputFault) => { record(n: number): void };
  /**
   * A loaded worker is being retired by a scale-down: resolves when the work it holds outside
   * batches is done (a generation engine's requests), so the pool's batch wait alone would not
   * see it. Bounded by the model's responseTimeout; the worker is then shut down.
   */
  readonly beforeRetire?: (workerId: string) => Promise<void>;
  /** Every live worker of the server, so the shutdown deadline can kill them all. */
  readonly registry?: { add(w: WorkerProcess): unknown; delete(w: WorkerProcess): unknown };
}

/** One worker as the management API shows it. */
export interface WorkerInfo {
  readonly id: string;
  readonly pid: number | null;
  readonly status: WorkerStatus;
  readonly startTime: string;
}

/** Pool of forked workers for one model. Emits `idle` when a worker can take a batch. */
export class WorkerPool extends EventEmitter {
  private readonly live = new Set<WorkerProcess>();
  private target: number;
  private maxWorkersValue: number;
  private failures = 0;
  private restartTimer: ClockTimer | null = null;
  private stopping = false;
  private lastErrorValue: string | null = null;
  /** Workers this pool asked to stop: their exit is expected (the process marks itself DEAD first). */
  private readonly retiring = new WeakSet<WorkerProcess>();
  private loadFailed = false;
  private indexSeq = 0;
  /** Spawns waiting for the start gate (counted as alive, so a second reconcile does not add more). */
  private queuedStarts = 0;
  private readonly waiters: Array<() => void> = [];

  private readonly restarts: { record(n: number): void };
  private readonly faultSeries = new Map<WorkerOutputFault, { record(n: number): void }>();
  private readonly countFault = (reason: WorkerOutputFault, n: number): void => {
    let s = this.faultSeries.get(reason);
    if (s === undefined) {
      s = this.deps.faultCounter?.(this.model.name, reason) ?? NOOP_SERIES;
      this.faultSeries.set(reason, s);
    }
    s.record(n);
  };

  constructor(
    readonly model: ModelConfig,
    private readonly deps: WorkerPoolDeps,
  ) {
    super();
    this.target = model.minWorkers;
    this.maxWorkersValue = model.maxWorkers;
    this.restarts = deps.restartCounter?.(model.name) ?? NOOP_SERIES;
    this.restarts.record(0);
  }

  get minWorkers(): number {
    return this.target;
  }
  get maxWorkers(): number {
    return this.maxWorkersValue;
  }
  /** The last load failure or unexpected exit, cleared when a worker becomes ready. */
  get lastError(): string | null {
    return this.lastErrorValue;
  }
  get readyCount(): number {
    let n = 0;
    for (const w of this.live) if (w.status === 'READY' || w.status === 'BUSY') n++;
    return n;
  }
  /** True when no worker can serve soon: scaled to zero, or none ready and the last load failed. */
  get unavailable(): boolean {
    return this.target === 0 || (this.readyCount === 0 && this.loadFailed);
  }

  /** Starts `minWorkers`; resolves once each has become ready or failed. */
  async start(): Promise<void> {
    await this.reconcile();
  }

  /** Sets the worker count to `min` (bounded by `max`); resolves when the new set is up. */
  async scale(min: number, max: number): Promise<void> {
    this.target = Math.min(min, Math.max(max, min));
    this.maxWorkersValue = Math.max(max, min);
    await this.reconcile();
  }

  /**
   * The worker with the fewest batches in flight that can take one more (with
   * `requireEmpty`, only one with none in flight), or null.
   */
  idleWorker(requireEmpty = false): WorkerProcess | null {
    let best: WorkerProcess | null = null;
    for (const w of this.live) {
      if (!w.canTake || (requireEmpty && w.inFlight > 0)) continue;
      if (best === null || w.inFlight < best.inFlight) best = w;
    }
    return best;
  }

  /** The live worker with this id (generation models address their workers directly). */
  worker(id: string): WorkerProcess | undefined {
    for (const w of this.live) if (w.id === id) return w;
    return undefined;
  }

  /** Snapshot for the management API. */
  workers(): WorkerInfo[] {
    return [...this.live].map((w) => ({
      id: w.id,
      pid: w.pid ?? null,
      status: w.status,
      startTime: w.startTime.toISOString(),
    }));
  }

  /** Stops every worker (each flushes its metrics and exits, bounded), no restarts after. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer !== null) (this.deps.clock ?? REAL_CLOCK).clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await Promise.all([...this.live].map((w) => this.retire(w)));
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves when no worker is busy (used to drain before shutdown). */
  whenIdle(): Promise<void> {
    if (![...this.live].some((w) => w.busy)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private async reconcile(): Promise<void> {
    if (this.stopping) return;
    const alive = [...this.live].filter((w) => w.status !== 'STOPPING' && w.status !== 'DEAD');
    if (alive.length > this.target) {
      // Retire idle workers first, then the newest busy ones (they finish their batch first).
      const order = alive.sort(
        (a, b) => Number(a.busy) - Number(b.busy) || b.startTime.getTime() - a.startTime.getTime(),
      );
      await Promise.all(order.slice(0, alive.length - this.target).map((w) => this.retire(w)));
      return;
    }
    const starts: Promise<void>[] = [];
    // Queued starts count as alive; each re-checks the target when its turn comes.
    for (let i = alive.length + this.queuedStarts; i < this.target; i++) starts.push(this.gatedSpawn());
    await Promise.all(starts);
  }

  private aliveCount(): number {
    let n = 0;
    for (const w of this.live) if (w.status !== 'STOPPING' && w.status !== 'DEAD') n++;
    return n;
  }

  /** Waits for a start slot, then spawns unless stopping or the target was met meanwhile. */
  private async gatedSpawn(): Promise<void> {
    const gate = this.deps.startGate;
    if (gate === undefined) return this.spawn();
    this.queuedStarts++;
    const release = await gate.acquire();
    this.queuedStarts--;
    try {
      if (this.stopping || this.aliveCount() >= this.target) return;
      await this.spawn();
    } finally {
      release();
    }
  }

  private async retire(w: WorkerProcess): Promise<void> {
    const timeout = this.deps.shutdownTimeoutMs ?? 10_000;
    this.retiring.add(w);
    // Still loading: it holds no request and answers nothing until its load ends, so it is killed
    // rather than waited on (a SIGTERM during a long load must not take the worker timeout).
    if (w.status === 'STARTING') return w.kill();
    w.retire();
    while (w.busy && w.alive)
      await new Promise<void>((resolve) => {
        w.once('idle', resolve);
        w.once('exit', resolve);
      });
    const held = this.deps.beforeRetire?.(w.id);
    if (held !== undefined && w.alive) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.model.responseTimeoutSec * 1000);
      });
      await Promise.race([held, bound, new Promise<void>((resolve) => w.once('exit', resolve))]);
      clearTimeout(timer);
    }
    await w.shutdown(timeout);
  }

  private spawn(): Promise<void> {
    const port = this.deps.nextWorkerPort();
    const init: InitMessage = {
      type: 'tsserve.init',
      v: WORKER_PROTOCOL_VERSION,
      workerId: `W-${port}-${this.model.name}_${this.model.version}`,
      workerIndex: this.indexSeq++,
      model: this.model,
      metrics: this.deps.metrics,
      metricsEnabled: this.deps.metricsEnabled ?? true,
      autoLabels: this.deps.autoLabels ?? {},
    };
    this.deps.ingest.started?.(init.workerId, init.autoLabels ?? {});
    const log = this.deps.log.child({ worker: init.workerId, model: this.model.name });
    const w = new WorkerProcess({
      entry: this.deps.entry,
      init,
      ingest: this.deps.ingest,
      onOtherMessage: this.deps.onOtherMessage,
      log,
      batchTimeoutMs: this.model.responseTimeoutSec * 1000,
      countFault: this.countFault,
      ...(this.deps.clock !== undefined ? { nowMs: () => (this.deps.clock as Clock).now() } : {}),
      ...(this.deps.loadTimeoutMs !== undefined ? { loadTimeoutMs: this.deps.loadTimeoutMs } : {}),
    });
    this.live.add(w);
    this.deps.registry?.add(w);
    w.on('idle', () => this.onIdle());
    w.on('exit', (code: number | null, signal: string | null) => this.onExit(w, code, signal));
    return w.load().then(
      (ready) => {
        this.failures = 0;
        this.lastErrorValue = null;
        this.loadFailed = false;
        this.deps.onWorkerLoaded(w.id, ready.loadTimeMs);
        log.info(`worker ${w.id} (pid ${String(w.pid)}) ready in ${ready.loadTimeMs.toFixed(1)} ms`);
        this.emit('idle');
      },
      (err: Error) => {
        // Stopped on purpose (shutdown, scale-down) before it loaded: not a load failure.
        if (this.stopping || this.retiring.has(w)) {
          log.info(`worker ${w.id} was stopped before it loaded`);
          return;
        }
        this.lastErrorValue = err.message;
        this.loadFailed = true;
        log.error(err.message);
        void w.kill();
      },
    );
  }

  private onIdle(): void {
    if (this.waiters.length > 0 && ![...this.live].some((w) => w.busy))
      for (const wake of this.waiters.splice(0)) wake();
    this.emit('idle');
  }

  private onExit(w: WorkerProcess, code: number | null, signal: string | null): void {
    this.live.delete(w);
    this.deps.registry?.delete(w);
    this.deps.onWorkerGone(w.id);
    this.deps.ingest.forget(w.id);
    this.onIdle();
    const expected = this.stopping || this.retiring.has(w);
    if (expected) return;
    if (this.lastErrorValue === null)
      this.lastErrorValue = w.killReason ?? `worker ${w.id} died (${signal ?? `code ${String(code)}`})`;
    this.deps.log.warn(`worker ${w.id} died (${signal ?? `code ${String(code)}`}); replacing it`, {
      worker: w.id,
      model: this.model.name,
    });
    this.restarts.record(1);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.stopping || this.restartTimer !== null) return;
    const base = this.deps.backoffBaseMs ?? 1000;
    const max = this.deps.backoffMaxMs ?? 30_000;
    const delay = Math.min(max, base * 2 ** Math.min(this.failures, 20));
    this.failures++;
    this.restartTimer = (this.deps.clock ?? REAL_CLOCK).setTimeout(
      () => {
        this.restartTimer = null;
        void this.reconcile().then(() => {
          if (this.live.size < this.target) this.scheduleRestart();
        });
      },
      delay,
      true,
    );
  }
}
