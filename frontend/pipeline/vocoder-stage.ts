/**
 * A pipeline's code2wav stage in the frontend: the vocoder workers (one per replica, labelled
 * with the lowest free slot so a restarted worker keeps its replica number), addressed
 * directly. Each request bound here has a listener that receives its audio chunks in order;
 * a replica that dies fails every request bound to it, the others go on.
 */
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { FromVocoderMessage, VocoderChunkMessage } from '../../schema/vocoder-ipc.js';
import { isFromVocoderMessage } from '../../schema/vocoder-ipc.js';
import type { ModelKindContext } from '../models/model-kinds.js';
import type { WorkerInfo } from '../workers/worker-pool.js';
import { WorkerPool } from '../workers/worker-pool.js';

/** What the orchestrator hears about one request on this stage. */
export interface VocoderListener {
  onMessage(msg: FromVocoderMessage): void;
  /**
   * The replica is gone: 500 when its worker exited (as /predictions and a thinker replica
   * answer a dead worker), 503 when the stage was stopped.
   */
  onReplicaGone(status: 500 | 503, message: string): void;
}

interface Replica {
  readonly index: number;
  readonly workerId: string;
  readonly requests: Map<string, VocoderListener>;
}

/** The vocoder workers of one pipeline. */
export class VocoderStage {
  private readonly pool: WorkerPool;
  private readonly byWorker = new Map<string, Replica>();
  /** Set before the pool stops: its workers' exits are the stop, not crashes. */
  private stopping = false;

  constructor(
    readonly config: ModelConfig,
    ctx: ModelKindContext,
    private readonly onChange: () => void = () => undefined,
  ) {
    const base = ctx.poolDeps;
    this.pool = new WorkerPool(config, {
      ...base,
      onOtherMessage: (id, msg) => {
        if (isFromVocoderMessage(msg)) this.byWorker.get(id)?.requests.get(msg.requestId)?.onMessage(msg);
        else base.onOtherMessage(id, msg);
      },
      onWorkerLoaded: (id, ms) => {
        base.onWorkerLoaded(id, ms);
        this.up(id);
      },
      onWorkerGone: (id) => {
        if (this.stopping) this.gone(id, 503, () => `model ${config.name} was stopped`);
        else this.gone(id, 500, (r) => `worker ${id} of model ${config.name} (replica ${r.index}) exited`);
        base.onWorkerGone(id);
      },
    });
  }

  /** Starts the replicas; resolves when each is ready or failed. */
  start(): Promise<void> {
    return this.pool.start();
  }

  /** Replicas that are up, by index. */
  replicas(): readonly number[] {
    return [...this.byWorker.values()].map((r) => r.index).sort((a, b) => a - b);
  }

  /** Requests in flight on replica `index`. */
  load(index: number): number {
    for (const r of this.byWorker.values()) if (r.index === index) return r.requests.size;
    return Infinity;
  }

  /** True once stop() began: a replica that cannot be reached is stopping, not dead. */
  get isStopping(): boolean {
    return this.stopping;
  }

  /** Requests in flight on every replica. */
  get inFlight(): number {
    let n = 0;
    for (const r of this.byWorker.values()) n += r.requests.size;
    return n;
  }

  /** Binds a request to replica `index`; false when that replica is not up. */
  bind(index: number, requestId: string, listener: VocoderListener): boolean {
    for (const r of this.byWorker.values()) {
      if (r.index !== index) continue;
      r.requests.set(requestId, listener);
      return true;
    }
    return false;
  }

  /** Sends one chunk to the request's replica; false when it cannot be reached. */
  send(requestId: string, chunk: VocoderChunkMessage): boolean {
    const r = this.replicaOf(requestId);
    return r !== undefined && (this.pool.worker(r.workerId)?.post(chunk) ?? false);
  }

  /** Unbinds a request; with `cancel`, its queued chunks are dropped in the worker. */
  release(requestId: string, cancel: boolean): void {
    const r = this.replicaOf(requestId);
    if (r === undefined) return;
    r.requests.delete(requestId);
    if (cancel) this.pool.worker(r.workerId)?.post({ type: 'tsserve.voc.cancel', requestId });
  }

  workers(): WorkerInfo[] {
    return this.pool.workers();
  }

  /** The replica index worker `workerId` serves, while it is up. */
  replicaIndexOf(workerId: string): number | undefined {
    return this.byWorker.get(workerId)?.index;
  }

  get minWorkers(): number {
    return this.pool.minWorkers;
  }
  get maxWorkers(): number {
    return this.pool.maxWorkers;
  }

  /** Stops the workers; every bound request fails. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.pool.stop();
    for (const id of [...this.byWorker.keys()]) this.gone(id, 503, () => `model ${this.config.name} was stopped`);
  }

  private replicaOf(requestId: string): Replica | undefined {
    for (const r of this.byWorker.values()) if (r.requests.has(requestId)) return r;
    return undefined;
  }

  private up(workerId: string): void {
    const used = new Set([...this.byWorker.values()].map((r) => r.index));
    let index = 0;
    while (used.has(index)) index++;
    this.byWorker.set(workerId, { index, workerId, requests: new Map() });
    this.onChange();
  }

  private gone(workerId: string, status: 500 | 503, why: (r: Replica) => string): void {
    const r = this.byWorker.get(workerId);
    if (r === undefined) return;
    this.byWorker.delete(workerId);
    const all = [...r.requests.values()];
    r.requests.clear();
    const message = why(r);
    for (const l of all) l.onReplicaGone(status, message);
    this.onChange();
  }
}
