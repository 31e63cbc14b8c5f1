/**
 * The model server: three listeners (inference, management, metrics), the model manager, the
 * worker pools. The listeners open first (so `/ping` reports the models while they load);
 * `startServer` resolves once every start-up model has loaded or failed. `stop()` drains: new
 * requests get 503 with Retry-After, queued and in-flight ones finish, workers flush and exit;
 * past the shutdown deadline the workers are killed.
 */
import type { HealthReport } from '../models/health.js';
import { inferenceDocument } from '../openapi/inference-doc.js';
import { managementDocument } from '../openapi/management-doc.js';
import { metricsDocument } from '../openapi/metrics-doc.js';
import type { AllowedMethods } from '../http/allowed-methods.js';
import { StatusSampler } from '../status/status-sampler.js';
import { statusRoutes } from '../http/status-routes.js';
import { packageVersion } from '../../schema/config/stability.js';
import type * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import type { MetricsConfig } from '../../schema/types.js';
import type { BodyLimits } from '../models/body-limits.js';
import { bodyLimits } from '../models/body-limits.js';
import { inferenceApp, sendInferenceError } from '../http/inference-app.js';
import { managementApp } from '../http/management-app.js';
import { metricsApp } from '../http/metrics-app.js';
import { guardTarget } from '../http/request-target.js';
import { HttpMetrics } from '../http/http-metrics.js';
import { drainGate } from '../http/drain-gate.js';
import { boundAddress, listen } from '../http/listen.js';
import type { TokenKeys } from '../http/token-auth.js';
import { writeKeyFile } from '../http/token-auth.js';
import type { AccessLog, Log } from '../log/log.js';
import { levelCallback } from '../log/log.js';
import { ModelStore } from '../store/model-store.js';
import type { ListenAddress } from '../http/address.js';
import { formatAddress, isLoopback } from '../http/address.js';
import { FrontendSeries } from '../models/frontend-series.js';
import type { MetricsPort } from '../models/metrics-port.js';
import type { ModelKind, ModelKindContext } from '../models/model-kinds.js';
import type { Clock } from '../batching/clock.js';
import { ModelManager, RegistrationError } from '../models/model-manager.js';
import { healthOf } from '../models/health.js';
import { StartGate } from '../workers/start-gate.js';
import { FrontRecords } from '../cluster/front-records.js';
import type { FrontMetricsIngest } from '../cluster/front-records.js';
import type { WorkerMetricsIngest } from '../metrics/ingest.js';
import { FrontSupervisor } from '../cluster/front-supervisor.js';
import { snapshotOf } from '../cluster/snapshot.js';
import type { ForeignFamily } from '../metrics/exposition/foreign-family.js';
import { FRONT_METRICS } from '../cluster/front-port.js';
import type { WorkerProcess } from '../workers/worker-process.js';
import type { TracingSettings } from '../tracing/trace-settings.js';

/** Everything the server is configured with (already parsed and checked). */
export interface ServerConfig {
  readonly inference: ListenAddress;
  readonly management: ListenAddress;
  readonly metrics: ListenAddress;
  /** Existing model store directory. */
  readonly modelStore: string;
  /** `all`, or explicit models (`url` relative to the store). */
  readonly models: 'all' | readonly { readonly name: string; readonly url: string }[];
  readonly logDir: string;
  readonly enableTokenAuth: boolean;
  readonly maxRequestSizeBytes: number;
  /** JSON bounds and body timeouts on every listener (defaults: DEFAULT_BODY_LIMITS). */
  readonly bodyLimits?: Partial<BodyLimits>;
  /** Queue bound per model; default 100 × batchSize. */
  readonly queueCapacity?: number;
  /** Worker entry script; default the compiled `backend/worker/main.js`. */
  readonly workerEntry?: string;
  /** Bound on each worker's shutdown (flush and exit). */
  readonly workerShutdownTimeoutMs?: number;
  /** Server-wide bound on workers over all models (`--max-workers`); default unbounded. */
  readonly maxWorkers?: number;
  /** Bound on one worker's model load (`--model-load-timeout`); default none. */
  readonly modelLoadTimeoutMs?: number;
  /** Overall bound on `stop()` (`--shutdown-timeout`): past it workers are killed; default none. */
  readonly shutdownTimeoutMs?: number;
  /** ms a client has to send its request line and headers (`--header-timeout`); default 30 s. */
  readonly headerTimeoutMs?: number;
  /**
   * Front processes serving the inference port (`--api-server-count`); default 1: this process
   * serves it itself. Above 1 they are forked through node:cluster and this process keeps the
   * models, the workers, the sinks and the management and metrics listeners.
   */
  readonly apiServerCount?: number;
  /** --chat-template's text, for the fronts' generation models (the primary's generation kind has its own copy). */
  readonly chatTemplate?: string;
  /** Tracing's settings when it is on (`--otlp-traces-endpoint`): each front process traces its own requests. */
  readonly tracing?: TracingSettings;
}

/** Workers loading their model at once, server-wide: a few, as many as the CPUs up to 4. */
export const WORKER_START_CONCURRENCY = Math.max(2, Math.min(4, os.availableParallelism()));

/** The parts the server records into and forwards worker metrics to. */
export interface ServerDeps {
  /** The model kinds beyond the built-in batched one (their routes mount in this order). */
  readonly kinds: readonly ModelKind[];
  /** The batchers' time and timers (default the real clock). */
  readonly clock?: Clock;
  readonly metrics: MetricsPort;
  readonly metricsConfig: MetricsConfig;
  /** The workers' and the fronts' metrics go here (`MetricsIngest`). */
  readonly ingest: WorkerMetricsIngest & FrontMetricsIngest;
  /** The server's logger; workers log through children of it (`worker`, `model` bindings). */
  readonly log: Log;
  /** One record per response on every listener; none when absent. */
  readonly access?: AccessLog;
  /** Receives the fronts' process metrics source (`--api-server-count` above 1). */
  readonly processPeers?: { source: (() => Promise<readonly ForeignFamily[]>) | null };
  /** Called once the three listeners are up, before the models load (`stop` works from then on). */
  readonly onListening?: (early: { readonly urls: RunningServer['urls']; stop(): Promise<void> }) => void;
}

/** A running server. */
export interface RunningServer {
  readonly urls: { readonly inference: string; readonly management: string; readonly metrics: string };
  readonly manager: ModelManager;
  /** Present when token auth is on. */
  readonly keys: TokenKeys | null;
  /** Each listener's routes and their methods (the inference one absent when front processes serve it). */
  readonly routes: ServerRoutes;
  /** Graceful stop (idempotent). */
  stop(): Promise<void>;
}

/** The route tables of the three listeners, as their 405s read them (the OpenAPI test walks them). */
export interface ServerRoutes {
  inference?: AllowedMethods;
  management?: AllowedMethods;
  metrics?: AllowedMethods;
}

/** What /ping and /health say while the start-up models' configs are still being read. */
const STILL_REGISTERING: HealthReport = Object.freeze({ ping: 'Unhealthy', serving: false });

/** Default worker entry, relative to this compiled file (dist/frontend/server/). */
export const DEFAULT_WORKER_ENTRY = path.resolve(import.meta.dirname, '..', '..', 'backend', 'worker', 'main.js');

/** The front processes of `--api-server-count N`, relaying to this process's models. */
function startFronts(
  cfg: ServerConfig,
  deps: ServerDeps,
  manager: ModelManager,
  limits: BodyLimits,
  token: { token?: string },
  series: FrontendSeries,
): FrontSupervisor {
  return new FrontSupervisor({
    count: cfg.apiServerCount ?? 1,
    init: {
      host: cfg.inference.host,
      port: cfg.inference.port,
      maxRequestSizeBytes: cfg.maxRequestSizeBytes,
      bodyLimits: limits,
      headerTimeoutMs: cfg.headerTimeoutMs ?? 0,
      ...token,
      metrics: FRONT_METRICS.flatMap((n) => {
        const m = deps.metrics.get(n);
        return m === null ? [] : [m.spec];
      }),
      processMetrics: deps.metrics.modes.includes('prometheus'),
      maxPointsPerFlush: deps.metricsConfig.limits.maxPointsPerFlush,
      ...(cfg.chatTemplate !== undefined ? { chatTemplate: cfg.chatTemplate } : {}),
      ...(cfg.tracing !== undefined ? { tracing: cfg.tracing } : {}),
    },
    models: () => ({ models: manager.list().map(snapshotOf), health: healthOf(manager.list()) }),
    lookup: (n) => manager.get(n),
    ingest: new FrontRecords(deps.ingest, deps.log, deps.access),
    log: deps.log,
    restartCounter: series.frontRestarts(),
  });
}

/** Starts the server; rejects (after cleaning up) when a model or a listener cannot start. */
export async function startServer(cfg: ServerConfig, deps: ServerDeps): Promise<RunningServer> {
  const series = new FrontendSeries(deps.metrics);
  let workerPort = 9000;
  const limits = bodyLimits({ ...cfg.bodyLimits, maxBytes: cfg.maxRequestSizeBytes });
  // Workers warned of once for an unknown message type; a gone worker's entry goes with it.
  const warnedUnknown = new Set<string>();
  // Every live worker of every model: the shutdown deadline kills them all.
  const registry = new Set<WorkerProcess>();
  // The `--api-server-count` fronts (null with one process): told of every worker that comes
  // up or goes, so their /ping and /health are not up to 500 ms behind.
  let fronts: FrontSupervisor | null = null;
  const ctx: ModelKindContext = {
    metrics: deps.metrics,
    metricsConfig: deps.metricsConfig,
    series,
    log: levelCallback(deps.log),
    bodyLimits: limits,
    ...(cfg.queueCapacity !== undefined ? { queueCapacity: cfg.queueCapacity } : {}),
    ...(deps.clock !== undefined ? { clock: deps.clock } : {}),
    poolDeps: {
      entry: cfg.workerEntry ?? DEFAULT_WORKER_ENTRY,
      metrics: deps.metricsConfig,
      metricsEnabled: deps.metrics.modes.length > 0,
      autoLabels: deps.metrics.autoLabels ?? {},
      nextWorkerPort: () => workerPort++,
      ingest: deps.ingest,
      onOtherMessage: (id) => {
        if (!warnedUnknown.has(id)) {
          warnedUnknown.add(id);
          deps.log.warn(`worker ${id}: ignoring a message of unknown type`);
        }
      },
      onWorkerGone: (id) => {
        warnedUnknown.delete(id);
        fronts?.announce();
      },
      onWorkerLoaded: (id, ms) => {
        series.workerLoaded(id, ms);
        fronts?.announce();
      },
      restartCounter: (model) => series.workerRestarts(model),
      faultCounter: (model, reason) => series.workerOutputFaults(model, reason),
      log: deps.log,
      shutdownTimeoutMs: cfg.workerShutdownTimeoutMs ?? 10_000,
      startGate: new StartGate(WORKER_START_CONCURRENCY),
      registry,
      ...(cfg.modelLoadTimeoutMs !== undefined ? { loadTimeoutMs: cfg.modelLoadTimeoutMs } : {}),
    },
  };
  const store = new ModelStore(cfg.modelStore);
  const manager = new ModelManager(store, ctx, cfg.queueCapacity, cfg.maxWorkers, deps.kinds);
  const servers: http.Server[] = [];
  const routes: ServerRoutes = {};
  let registering = true;
  const version = packageVersion();
  let draining = false;
  const stopAll = async (): Promise<void> => {
    // The listeners stay open while draining: a new request gets a 503 with Retry-After (and a
    // readiness probe fails), which a client or load balancer acts on; a refused connection says less.
    draining = true;
    fronts?.drain();
    const graceful = manager.stopAll();
    const limit = cfg.shutdownTimeoutMs;
    if (limit !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([
        graceful.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), limit);
        }),
      ]);
      clearTimeout(timer);
      if (late) {
        deps.log.warn(
          `shutdown: still draining after --shutdown-timeout ${limit / 1000} s; killing ${registry.size} worker(s)`,
        );
        const aborted = manager.abortAll(); // first: no worker is restarted, queued requests get 503
        for (const w of registry) void w.kill();
        await aborted;
      }
    }
    await graceful;
    await fronts?.stop(); // their last metrics flush is in before the sinks close
    for (const s of servers) {
      s.close();
      s.closeAllConnections();
    }
  };
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => (stopping ??= (status.stop(), stopAll()));

  // The status page's sampler (GET / on the management port): once a second while watched, from /metrics' own cells.
  const status = new StatusSampler({
    describe: () => manager.list().map((m) => m.describe()),
    cells: deps.metrics.cells?.() ?? null,
    familyName: (key) => deps.metrics.byKey(key)?.spec.name ?? null,
    modes: deps.metrics.modes,
    version: packageVersion(),
  });

  try {
    const authOn = cfg.enableTokenAuth || !isLoopback(cfg.management.host);
    const keys = authOn ? writeKeyFile(cfg.logDir) : null;
    const extraRoutes = deps.kinds.flatMap((k) =>
      k.routes
        ? [
            k.routes(
              ctx,
              (n) => manager.get(n),
              () => manager.list(),
            ),
          ]
        : [],
    );
    const isDraining = (): boolean => draining;
    const count = (status: number): void => series.countResponse(status);
    /** The HTTP families of the answers the drain gives before any app sees the request. */
    const drainHttp = new HttpMetrics((n, d) => series.bind(n, d));
    const token = keys !== null && cfg.enableTokenAuth ? { token: keys.inference } : {};
    let inferenceUrl: string;
    if ((cfg.apiServerCount ?? 1) > 1) {
      fronts = startFronts(cfg, deps, manager, limits, token, series);
      manager.onChange = () => fronts?.announce();
      inferenceUrl = formatAddress({ host: cfg.inference.host, port: await fronts.start() });
      const sup = fronts;
      if (deps.processPeers !== undefined) deps.processPeers.source = () => sup.processFamilies();
    } else {
      const infApp = inferenceApp({
        lookup: (n) => manager.get(n),
        list: () => manager.list(),
        series,
        maxRequestSizeBytes: cfg.maxRequestSizeBytes,
        bodyLimits: limits,
        ...token,
        extraRoutes,
        health: () => (registering ? STILL_REGISTERING : healthOf(manager.list())),
        description: inferenceDocument(version),
      });
      routes.inference = infApp.allowed;
      const inf = await listen(
        drainGate(infApp, isDraining, () => true, count, drainHttp, sendInferenceError),
        cfg.inference,
        'inference',
        deps.access,
        cfg.headerTimeoutMs,
        count,
      );
      servers.push(inf);
      inferenceUrl = boundAddress(inf, cfg.inference.host);
    }
    // Management reads keep working while draining; changes are refused.
    const mgmtApp = managementApp({
      manager,
      series,
      bodyLimits: limits,
      status: (ctx) => statusRoutes(status, ctx),
      description: managementDocument(version),
      ...(keys !== null ? { token: keys.management } : {}),
    });
    routes.management = mgmtApp.allowed;
    const mgmt = await listen(
      guardTarget(
        drainGate(mgmtApp, isDraining, (req) => req.method !== 'GET' && req.method !== 'HEAD', count, drainHttp),
        count,
      ),
      cfg.management,
      'management',
      deps.access,
      cfg.headerTimeoutMs,
      count,
    );
    servers.push(mgmt);
    const metApp = metricsApp(deps.metrics, metricsDocument(version));
    routes.metrics = metApp.allowed;
    const met = await listen(guardTarget(metApp), cfg.metrics, 'metrics', deps.access, cfg.headerTimeoutMs);
    servers.push(met);
    const urls = {
      inference: inferenceUrl,
      management: boundAddress(mgmt, cfg.management.host),
      metrics: boundAddress(met, cfg.metrics.host),
    };
    deps.onListening?.({ urls, stop });

    // Register every start-up model first (configs read, so /ping counts them all), then start
    // them together: the start gate lets a few workers load at a time, server-wide.
    const wanted =
      cfg.models === 'all'
        ? store
            .list((name, why) => deps.log.error(`model ${name} skipped: ${why}`))
            .map((e) => ({ name: e.name, url: e.name }))
        : cfg.models;
    const prepared = [];
    // Reading the configs is asynchronous: /ping says Unhealthy until every start-up model is registered, so it counts them all.
    for (const m of wanted) {
      try {
        const model = await manager.prepare({ name: m.name, url: m.url, loadedAtStartup: true });
        if (model !== null) prepared.push(model);
      } catch (e) {
        if (cfg.models !== 'all') throw e;
        // A pipeline's stage model is not a broken model: say so without an error line on every start.
        if (e instanceof RegistrationError && e.stageOnly)
          deps.log.info(`model ${m.name} not served alone: ${e.message}`);
        else deps.log.error(`model ${m.name} skipped: ${(e as Error).message}`);
      }
    }
    registering = false;
    if (!draining) await Promise.all(prepared.map((m) => m.start().finally(() => fronts?.announce())));
    return { urls, manager, keys, routes, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
