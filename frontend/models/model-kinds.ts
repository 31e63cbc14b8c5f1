/**
 * The seam for models that are not served through `/predictions` batches — generation models
 * (`handler: generate`) and their OpenAI routes. The server is given its kinds as a list
 * (`createServer(config, { kinds })`); a `handler: generate` model with no kind for it is skipped
 * at start-up with a logged note.
 */
import type { Router } from 'express';
import type { MetricsConfig } from '../../schema/types.js';
import type { BodyLimits } from './body-limits.js';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { Clock } from '../batching/clock.js';
import type { WorkerPoolDeps } from '../workers/worker-pool.js';
import type { FrontendSeries } from './frontend-series.js';
import type { MetricsPort } from './metrics-port.js';
import type { ServedModel } from './served-model.js';

/** What a model kind gets from the server to build its models. */
export interface ModelKindContext {
  readonly metrics: MetricsPort;
  readonly metricsConfig: MetricsConfig;
  readonly series: FrontendSeries;
  /**
   * Worker pool dependencies (entry script, worker naming, WorkerLoadTime, metrics ingest).
   * Pass your own `onOtherMessage` to receive engine outputs (metrics never reach it: the
   * workers hand them to the ingest); call the base one for anything that is not yours.
   */
  readonly poolDeps: WorkerPoolDeps;
  readonly log: (level: 'debug' | 'info' | 'warn' | 'error', msg: string) => void;
  /** Bounds on request bodies, for the kind's own routes (default: DEFAULT_BODY_LIMITS). */
  readonly bodyLimits?: BodyLimits;
  /** `--job-queue-size` when given: the requests a model queues before 503 (each kind says per what). */
  readonly queueCapacity?: number;
  /** The batchers' time and timers (default the real clock). */
  readonly clock?: Clock;
}

/** A kind of model, keyed by the `handler:` value of its model-config. */
export interface ModelKind {
  /** The `handler:` values whose models this kind builds. */
  readonly handlers: readonly string[];
  /** Builds (does not start) a served model; the server calls `start()`. */
  create(config: ModelConfig, ctx: ModelKindContext, modelUrl: string, loadedAtStartup: boolean): ServedModel;
  /**
   * Routes mounted on the inference listener (e.g. `/v1/completions`), after the built-in
   * ones; `lookup` finds registered models by name.
   */
  routes?(
    ctx: ModelKindContext,
    lookup: (name: string) => ServedModel | undefined,
    list: () => readonly ServedModel[],
  ): Router;
}

/** The kinds of a server by handler value; a handler claimed by two kinds is a programming error. */
export function kindTable(kinds: readonly ModelKind[]): ReadonlyMap<string, ModelKind> {
  const table = new Map<string, ModelKind>();
  for (const kind of kinds)
    for (const h of kind.handlers) {
      if (table.has(h)) throw new Error(`two model kinds for handler '${h}'`);
      table.set(h, kind);
    }
  return table;
}
