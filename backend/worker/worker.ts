/**
 * The worker's message handling, apart from the process glue in `main.ts` so it can be driven
 * directly: init → load the handler and answer ready | load_failed; batch → run it, answer one
 * response per request, record HandlerTime and PredictionTime, flush; shutdown → flush, exit 0.
 */
import * as fs from 'fs';
import { performance } from 'perf_hooks';
import type { BatchMessage, BatchTensors, InitMessage, ResultMessage } from '../../schema/worker-protocol.js';
import { WORKER_PROTOCOL_VERSION } from '../../schema/worker-protocol.js';
import { createWorkerMetrics } from '../metrics/worker-metrics.js';
import type { WorkerMetricsApi } from '../metrics/worker-metrics.js';
import type { HandlerRequest } from '../handlers/types.js';
import { loadHandler } from './load-handler.js';
import type { LoadedHandler } from './load-handler.js';
import { WorkerContext } from './context.js';
import { failAll, runBatch } from './run-batch.js';
import { BatchFailureLog } from './batch-failure-log.js';
import type { WorkerIo } from './worker-io.js';
import { startGeneration } from './generation.js';
import { startVocoder } from './vocoder.js';

export type { WorkerIo } from './worker-io.js';

/** The batch's requests, each with its tensors (views of the batch's one buffer) when it has them. */
function withInputs(requests: BatchMessage['requests'], tensors: BatchTensors | undefined): readonly HandlerRequest[] {
  if (tensors === undefined) return requests;
  const { kinds, kindOf, data, offsets } = tensors;
  let k = 0;
  return requests.map((r, i): HandlerRequest => {
    const h = kinds[kindOf[i] ?? -1];
    if (h === undefined) return r;
    const bytes = h.map(() => {
      const from = offsets[k] ?? 0;
      const to = offsets[++k] ?? from;
      return data.subarray(from, to);
    });
    return { requestId: r.requestId, body: r.body, tensors: { heads: h, data: bytes } };
  });
}

/** Milliseconds between timer flushes, so long-running handler work still reports metrics. */
export const FLUSH_INTERVAL_MS = 1000;

/** One worker incarnation's state machine. */
export class Worker {
  private metrics: WorkerMetricsApi | null = null;
  private context: WorkerContext | null = null;
  private handler: LoadedHandler | null = null;
  private workerId = '';
  private queue: Promise<void> = Promise.resolve();
  private current: BatchMessage | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private delegated: ((msg: unknown) => void) | null = null;
  private state: 'new' | 'loading' | 'ready' | 'failed' = 'new';
  private exiting = false;
  private readonly failures: BatchFailureLog;

  constructor(private readonly io: WorkerIo) {
    this.failures = new BatchFailureLog(
      (line) => io.log('error', line),
      () => performance.now(),
    );
  }

  /** Entry point for every message from the frontend. */
  onMessage(msg: unknown): void {
    if (this.delegated !== null) {
      this.delegated(msg);
      return;
    }
    if (typeof msg !== 'object' || msg === null) return;
    const m = msg as { type?: unknown };
    switch (m.type) {
      case 'tsserve.init':
        this.queue = this.queue.then(() => this.init(msg as InitMessage));
        break;
      case 'tsserve.batch':
        this.queue = this.queue.then(() => this.batch(msg as BatchMessage));
        break;
      case 'tsserve.shutdown':
        this.queue = this.queue.then(() => this.shutdown(0));
        break;
      default:
        this.io.log('warn', `ignoring unknown message type ${JSON.stringify(m.type)}`);
    }
  }

  /** The frontend went away: flush what we can and leave. */
  onDisconnect(): void {
    if (this.delegated !== null) {
      // The generation loop owns shutdown; if it does not exit by itself, we do.
      this.delegated({ type: 'tsserve.shutdown' });
      setTimeout(() => this.io.exit(0), 5000).unref();
      return;
    }
    void this.shutdown(0);
  }

  /**
   * An exception escaped the handler's promise chain (a stray callback threw): the process state
   * is unknown, so the batch in flight is answered with 500s, metrics are flushed, and the
   * worker exits non-zero for the frontend to restart it.
   */
  onFatal(err: unknown): void {
    const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
    this.io.log('error', `fatal: uncaught exception in handler code: ${detail}`);
    const why = `worker crashed: ${err instanceof Error ? err.message : String(err)}`;
    const b = this.current;
    if (b !== null) {
      this.current = null;
      this.sendResult({
        type: 'tsserve.result',
        batchId: b.batchId,
        responses: failAll(b.requests.length, 500, why),
        handlerMs: 0,
      });
    } else if (this.state === 'loading') {
      this.state = 'failed';
      this.io.send({ type: 'tsserve.load_failed', workerId: this.workerId, error: why });
    }
    void this.shutdown(1);
  }

  private async init(init: InitMessage): Promise<void> {
    if (this.state !== 'new') {
      this.io.log('warn', 'ignoring a second tsserve.init');
      return;
    }
    this.state = 'loading';
    this.workerId = init.workerId;
    const fail = (error: string): void => {
      this.state = 'failed';
      this.io.send({ type: 'tsserve.load_failed', workerId: init.workerId, error });
    };
    if ((init.v as number) !== WORKER_PROTOCOL_VERSION) {
      fail(
        `worker protocol version ${String(init.v)} is not supported (this worker speaks ${WORKER_PROTOCOL_VERSION})`,
      );
      return;
    }
    if (init.model.handler === 'generate') {
      // The generation loop builds its own metrics cache and answers ready itself.
      const listener = startGeneration(init, this.io);
      if (listener === null) this.state = 'failed';
      else this.delegated = listener;
      return;
    }
    if (init.model.handler === 'vocoder') {
      // A pipeline's code2wav stage: its loop answers ready itself and records no handler metrics.
      this.delegated = startVocoder(init, this.io);
      return;
    }
    let realDir: string;
    try {
      realDir = fs.realpathSync(init.model.dir);
    } catch {
      fail(`model directory ${init.model.dir} does not exist`);
      return;
    }
    const metrics = createWorkerMetrics(init.metrics, {
      modelName: init.model.name,
      send: (m, done) => this.io.send(m, done),
      log: (line) => this.io.log('warn', line),
      enabled: init.metricsEnabled !== false,
      autoLabels: init.autoLabels ?? {},
    });
    this.metrics = metrics;
    this.flushTimer = setInterval(() => metrics.flush(), FLUSH_INTERVAL_MS);
    this.flushTimer.unref();

    const t0 = performance.now();
    try {
      const ctx = new WorkerContext(init.model, realDir, metrics);
      this.context = ctx;
      const handler = await loadHandler(realDir, init.model.handler);
      if (handler.kind === 'staged') await handler.stages.initialize?.(ctx);
      else await handler.init?.(ctx);
      this.handler = handler;
      this.state = 'ready';
    } catch (e) {
      fail(e instanceof Error ? e.message : String(e));
      metrics.flush();
      return;
    }
    const loadTimeMs = performance.now() - t0;
    metrics.flush(); // whatever initialize() recorded (TorchServe's InitializeCallCount)
    this.io.send({ type: 'tsserve.ready', workerId: init.workerId, loadTimeMs });
  }

  private async batch(b: BatchMessage): Promise<void> {
    const handler = this.handler;
    const ctx = this.context;
    const metrics = this.metrics;
    const requests = withInputs(Array.isArray(b.requests) ? (b.requests as BatchMessage['requests']) : [], b.tensors);
    if (handler === null || ctx === null || metrics === null) {
      this.sendResult({
        type: 'tsserve.result',
        batchId: b.batchId,
        responses: failAll(requests.length, 503, 'worker has no model loaded'),
        handlerMs: 0,
      });
      return;
    }
    const ids = requests.map((r) => String(r.requestId));
    this.current = b;
    ctx.setRequestIds(ids);
    const outcome = await runBatch(handler, requests, ctx);
    if (this.current !== b) return; // answered already by onFatal
    this.current = null;
    if (outcome.thrown !== undefined) this.failures.report(b.batchId, outcome.thrown);
    // Default request id = the batch's ids joined by ',' (TorchServe's HandlerTime with idx=None).
    // Only when recorded: taking one out of metrics.yaml turns it off (TorchServe), it is no drop.
    if (metrics.records('HandlerTime')) metrics.addTime('HandlerTime', outcome.handlerMs, undefined, 'ms');
    if (metrics.records('PredictionTime')) metrics.addTime('PredictionTime', outcome.predictionMs, undefined, 'ms');
    const result: ResultMessage = {
      type: 'tsserve.result',
      batchId: b.batchId,
      responses: outcome.responses,
      handlerMs: outcome.handlerMs,
    };
    // The batch's metrics ride in its result: one channel write a batch, not two. With nothing
    // to flush (or metrics off) the result goes alone. Forced even while the channel is
    // congested: the result is sent anyway, and held back its metrics would reach the frontend
    // after its requests were answered, or never, if the worker died before the drain. What
    // this adds to the channel's queue is bounded: one flush (maxPointsPerFlush) per result,
    // and the frontend has at most `depth` batches at a worker.
    let carried = false;
    metrics.flush(true, (m, written) => {
      carried = true;
      return this.sendResult({ ...result, metrics: m }, written);
    });
    if (!carried) this.sendResult(result);
    ctx.setRequestIds([]);
  }

  /**
   * Sends a result; a body the channel cannot carry turns the batch into 500s (its metrics
   * still carried), not a crash. Returns the channel's answer (false: backlog full).
   */
  private sendResult(r: ResultMessage, onWritten?: () => void): boolean | void {
    try {
      return this.io.send(r, onWritten);
    } catch (e) {
      const why = `handler returned a value that cannot be sent to the frontend: ${(e as Error).message}`;
      this.io.log('error', why);
      return this.io.send({ ...r, responses: failAll(r.responses.length, 500, why) }, onWritten);
    }
  }

  private async shutdown(code: number): Promise<void> {
    if (this.exiting) return;
    this.exiting = true;
    if (this.flushTimer !== null) clearInterval(this.flushTimer);
    try {
      this.metrics?.flush(true);
    } catch {
      // flush never throws by contract; exiting matters more than a last datapoint
    }
    await this.context?.releaseSessions();
    this.io.exit(code);
  }
}
