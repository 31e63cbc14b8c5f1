/**
 * One engine as the frontend sees it: a READY generation worker, its bound series, its stats,
 * its log line, and the sinks of the requests it runs. Step messages are counted first, then
 * handed to each request's sink, so a client that reads its answer finds the metrics updated.
 */
import type {
  GenErrorMessage,
  GenRequestOutput,
  GenSamplingParams,
  GenStepMessage,
  ToGenWorkerMessage,
} from '../../schema/engine-ipc.js';
import type { AutoLabels } from '../../schema/metrics-api.js';
import type { MetricsPort } from '../models/metrics-port.js';
import type { CacheConfigInfo } from './engine-series.js';
import { bindEngineSeries } from './engine-series.js';
import { EngineStats } from './engine-stats.js';
import type { RequestTimings } from './engine-stats.js';
import { LoggingStatLogger } from './logging-stat-logger.js';

/** Where one request's outputs go (the OpenAI layer). Every callback is terminal except onOutput. */
export interface GenerationSink {
  /** One output of one of the request's sequences (the last one of a sequence has finishReason). */
  onOutput(o: GenRequestOutput): void;
  /** The request failed: `status` 400 when the engine refused it, 500/503 when the engine failed. */
  onError(status: number, message: string): void;
  /** Its phases, just before the output that finishes its last sequence (for Server-Timing). */
  onTimings?(t: RequestTimings): void;
  /** Admission confirmed, for a request whose handle was `pending` (relayed by a front process). */
  onAccepted?(): void;
}

interface Entry {
  readonly sink: GenerationSink;
  readonly n: number;
  finished: number;
  seenOutput: boolean;
}

/** The frontend half of one engine. */
export class GenerationEngine {
  readonly stats: EngineStats;
  readonly logger: LoggingStatLogger;
  private readonly sinks = new Map<string, Entry>();

  constructor(
    readonly workerId: string,
    /** The `engine` label: the lowest slot free when the worker became ready. */
    readonly index: number,
    modelName: string,
    metrics: Pick<MetricsPort, 'byKey'>,
    cache: CacheConfigInfo,
    nowMs: () => number,
    private readonly post: (msg: ToGenWorkerMessage) => boolean,
    /** A pipeline stage's replica: its automatic labels (`stage`, `replica` instead of `engine`). */
    autoLabels?: AutoLabels,
    /** False with --disable-log-stats: the engine's series are no-ops. */
    statsEnabled = true,
    /** True when the engine scans its logits for NaN: corrupted_requests is registered. */
    computeNans = false,
  ) {
    this.logger = new LoggingStatLogger(index, nowMs, computeNans);
    this.stats = new EngineStats(
      bindEngineSeries(metrics, modelName, String(index), cache, autoLabels, statsEnabled, computeNans),
      nowMs,
      this.logger,
    );
  }

  /** Requests in flight on this engine. */
  get load(): number {
    return this.sinks.size;
  }

  /** Sends a request (text, or token ids as `promptTokenIds`) to the engine; false when the worker cannot be reached. */
  add(
    requestId: string,
    arrivalMs: number,
    prompt: string | readonly number[],
    params: GenSamplingParams & { readonly max_tokens: number },
    sink: GenerationSink,
  ): boolean {
    const n = params.n ?? 1;
    this.stats.addRequest(
      requestId,
      arrivalMs,
      n,
      params.max_tokens,
      typeof prompt === 'string' ? undefined : prompt.length,
    );
    this.sinks.set(requestId, { sink, n, finished: 0, seenOutput: false });
    const add: ToGenWorkerMessage =
      typeof prompt === 'string'
        ? { type: 'tsserve.gen.add', requestId, prompt, params }
        : { type: 'tsserve.gen.add', requestId, promptTokenIds: prompt, params };
    if (this.post(add)) return true;
    this.stats.dropRequest(requestId);
    this.sinks.delete(requestId);
    return false;
  }

  /** Asks the engine to abort a request; it finishes with `abort` in a later step (and counts). */
  abort(requestId: string): void {
    if (this.sinks.has(requestId)) this.post({ type: 'tsserve.gen.abort', requestId });
  }

  /** One step from the worker. */
  onStep(msg: GenStepMessage): void {
    this.stats.onStep(msg);
    for (const o of msg.outputs) {
      const e = this.sinks.get(o.requestId);
      if (e === undefined) continue;
      e.seenOutput = true;
      let timings: RequestTimings | undefined;
      if (o.finishReason !== undefined && ++e.finished === e.n) {
        this.sinks.delete(o.requestId);
        timings = this.stats.takeTimings(o.requestId);
      }
      try {
        if (timings !== undefined) e.sink.onTimings?.(timings);
        e.sink.onOutput(o);
      } catch {
        // A broken client connection must not stop the other requests' outputs.
      }
    }
  }

  /** An error from the worker: one refused request, or the whole engine. */
  onError(msg: GenErrorMessage): void {
    if (msg.requestId === undefined) {
      this.fail(500, `engine ${this.index} failed: ${msg.message}`);
      return;
    }
    const e = this.sinks.get(msg.requestId);
    if (e === undefined) return;
    this.sinks.delete(msg.requestId);
    this.stats.dropRequest(msg.requestId);
    e.sink.onError(e.seenOutput ? 500 : 400, msg.message);
  }

  /** The worker is gone or failed: every unfinished sequence finishes with `error`. */
  fail(status: number, message: string): void {
    this.stats.failAll('error');
    const all = [...this.sinks.values()];
    this.sinks.clear();
    for (const e of all) e.sink.onError(status, message);
  }
}
