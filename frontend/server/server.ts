/**
 * The model server: three listeners (inference, management, metrics), the model manager, the
 * worker pools. `startServer` resolves once models are registered and every listener is up;
 * `stop()` drains: stop accepting, finish queued and in-flight requests, workers flush and exit.
 */
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import type { Express } from 'express';
import type { MetricsConfig } from '../../schema/types.js';
import type { BodyLimits } from '../http/body-limits.js';
import { bodyLimits } from '../http/body-limits.js';
import { inferenceApp } from '../http/inference-app.js';
import { managementApp } from '../http/management-app.js';
import { metricsApp } from '../http/metrics-app.js';
import { accessLogListener } from '../http/access-log.js';
import type { TokenKeys } from '../http/token-auth.js';
import { writeKeyFile } from '../http/token-auth.js';
import type { AccessLog, Log } from '../log/log.js';
import { levelCallback } from '../log/log.js';
import { ModelStore } from '../store/model-store.js';
import type { ListenAddress } from './address.js';
import { formatAddress, isLoopback } from './address.js';
import { FrontendSeries } from './frontend-series.js';
import type { MetricsPort } from './metrics-port.js';
import type { ModelKindContext } from './model-kinds.js';
import { registeredModelKinds } from './model-kinds.js';
import { ModelManager } from './model-manager.js';

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
}

/** The parts the server records into and forwards worker metrics to. */
export interface ServerDeps {
  readonly metrics: MetricsPort;
  readonly metricsConfig: MetricsConfig;
  readonly ingest: { handle(workerKey: string, msg: unknown): boolean; forget(workerKey: string): void };
  /** The server's logger; workers log through children of it (`worker`, `model` bindings). */
  readonly log: Log;
  /** One record per response on every listener; none when absent. */
  readonly access?: AccessLog;
}

/** A running server. */
export interface RunningServer {
  readonly urls: { readonly inference: string; readonly management: string; readonly metrics: string };
  readonly manager: ModelManager;
  /** Present when token auth is on. */
  readonly keys: TokenKeys | null;
  /** Graceful stop (idempotent). */
  stop(): Promise<void>;
}

/** Default worker entry, relative to this compiled file (dist/frontend/server/). */
export const DEFAULT_WORKER_ENTRY = path.resolve(import.meta.dirname, '..', '..', 'backend', 'worker', 'main.js');

function listen(app: Express, addr: ListenAddress, name: string, access: AccessLog | undefined): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    // The access listener goes first: it must wrap the response before the app can answer.
    if (access !== undefined) server.on('request', accessLogListener(name, access));
    server.on('request', app);
    server.keepAliveTimeout = 65_000;
    server.once('error', reject);
    server.listen(addr.port, addr.host, () => { server.off('error', reject); resolve(server); });
  });
}

function boundAddress(server: http.Server, host: string): string {
  const a = server.address() as AddressInfo;
  return formatAddress({ host, port: a.port });
}

/** Starts the server; rejects (after cleaning up) when a model or a listener cannot start. */
export async function startServer(cfg: ServerConfig, deps: ServerDeps): Promise<RunningServer> {
  const series = new FrontendSeries(deps.metrics);
  let workerPort = 9000;
  const limits = bodyLimits({ ...cfg.bodyLimits, maxBytes: cfg.maxRequestSizeBytes });
  const warnedUnknown = new Set<string>();
  const ctx: ModelKindContext = {
    metrics: deps.metrics, metricsConfig: deps.metricsConfig, series, log: levelCallback(deps.log), bodyLimits: limits,
    ingestMetrics: (id, msg) => deps.ingest.handle(id, msg),
    poolDeps: {
      entry: cfg.workerEntry ?? DEFAULT_WORKER_ENTRY,
      metrics: deps.metricsConfig,
      nextWorkerPort: () => workerPort++,
      onOtherMessage: (id, msg) => {
        if (deps.ingest.handle(id, msg)) return;
        if (!warnedUnknown.has(id)) { warnedUnknown.add(id); deps.log.warn(`worker ${id}: ignoring a message of unknown type`); }
      },
      onWorkerGone: (id) => deps.ingest.forget(id),
      onWorkerLoaded: (id, ms) => series.workerLoaded(id, ms),
      log: deps.log,
      shutdownTimeoutMs: cfg.workerShutdownTimeoutMs ?? 10_000,
    },
  };
  const store = new ModelStore(cfg.modelStore);
  const manager = new ModelManager(store, ctx, cfg.queueCapacity);
  const servers: http.Server[] = [];
  const stopAll = async (): Promise<void> => {
    for (const s of servers) s.close();
    await manager.stopAll();
    for (const s of servers) s.closeAllConnections();
  };

  try {
    const wanted = cfg.models === 'all' ? store.list().map((e) => ({ name: e.name, url: e.name })) : cfg.models;
    for (const m of wanted) {
      try {
        await manager.register({ name: m.name, url: m.url, loadedAtStartup: true });
      } catch (e) {
        if (cfg.models !== 'all') throw e;
        deps.log.error(`model ${m.name} skipped: ${(e as Error).message}`);
      }
    }
    const authOn = cfg.enableTokenAuth || !isLoopback(cfg.management.host);
    const keys = authOn ? writeKeyFile(cfg.logDir) : null;
    const kinds = [...registeredModelKinds().values()];
    const extraRoutes = kinds.flatMap((k) => (k.routes ? [k.routes(ctx, (n) => manager.get(n), () => manager.list())] : []));
    const inf = await listen(inferenceApp({
      lookup: (n) => manager.get(n), series, maxRequestSizeBytes: cfg.maxRequestSizeBytes, bodyLimits: limits,
      ...(keys !== null && cfg.enableTokenAuth ? { token: keys.inference } : {}), extraRoutes,
    }), cfg.inference, 'inference', deps.access);
    servers.push(inf);
    const mgmt = await listen(managementApp({ manager, series, bodyLimits: limits, ...(keys !== null ? { token: keys.management } : {}) }), cfg.management, 'management', deps.access);
    servers.push(mgmt);
    const met = await listen(metricsApp(deps.metrics), cfg.metrics, 'metrics', deps.access);
    servers.push(met);
    let stopping: Promise<void> | null = null;
    return {
      urls: { inference: boundAddress(inf, cfg.inference.host), management: boundAddress(mgmt, cfg.management.host), metrics: boundAddress(met, cfg.metrics.host) },
      manager, keys,
      stop: () => (stopping ??= stopAll()),
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
