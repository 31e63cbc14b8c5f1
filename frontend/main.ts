/**
 * The composition root of the model server: `createServer` builds the metrics (sinks, the worker
 * ingest, the system metrics), the models of the given kinds and their workers, and the three
 * listeners, from configuration already parsed and checked. `tsserve start` parses its flags and
 * calls it; tests build their servers through it too.
 */
import type { ServerRoutes } from './server/server.js';
import type { MetricsConfig, SinkMode } from '../schema/types.js';
import type { Clock } from './batching/clock.js';
import type { AccessLog, Log, LogErrorCounter } from './log/log.js';
import { levelCallback } from './log/log.js';
import type { ForeignFamily } from './metrics/exposition/foreign-family.js';
import { FrontendMetrics } from './metrics/frontend-metrics.js';
import type { OtlpSettings } from './metrics/otlp/otlp-settings.js';
import { MetricsIngest } from './metrics/ingest.js';
import { checkFrontendMetrics } from './models/frontend-series.js';
import type { MetricsPort } from './models/metrics-port.js';
import type { ModelKind } from './models/model-kinds.js';
import type { ModelManager } from './models/model-manager.js';
import type { TokenKeys } from './http/token-auth.js';
import type { ServerConfig, ServerDeps } from './server/server.js';
import { startServer } from './server/server.js';
import type { SystemMetricsHandle } from './system/system-metrics.js';
import { startSystemMetrics } from './system/system-metrics.js';
import { Tracer } from './tracing/otel-tracing.js';
import { setActiveTracer } from './tracing/request-span.js';

export { defaultKinds } from './kinds/default-kinds.js';

/** How the metrics are built: the validated metrics.yaml and what the flags override. */
export interface MetricsSettings {
  readonly config: MetricsConfig;
  /** Where `config` was read from (named in start-up lines and refusals). */
  readonly configFile: string;
  /** `--metrics-mode` (default the yaml's); `[]` switches metrics off. */
  readonly modes?: readonly SinkMode[];
  /** `--statsd-address` (overrides the yaml's statsd host and port). */
  readonly statsd?: { readonly host: string; readonly port: number };
  /** The otlp sink's endpoint and OTEL_* settings (checked), when it runs. */
  readonly otlp?: OtlpSettings;
  /** The server's version and `--show-hidden-metrics-for-version`, for deprecated metrics. */
  readonly serverVersion?: string;
  readonly showHidden?: string | null;
  /** Seconds between system metrics (`--metric-time-interval`); null: none (`--disable-system-metrics`). */
  readonly systemIntervalSec: number | null;
}

/** Everything `createServer` builds from. */
export interface CreateServerConfig {
  readonly server: ServerConfig;
  readonly metrics: MetricsSettings;
}

/** The server's logger (`createServerLogger`'s, or a recording one in a test). */
export interface ServerLogging {
  readonly log: Log;
  /** One record per response on every listener; none when absent. */
  readonly access?: AccessLog;
  /** Where the log files' own failures are counted from the moment the metrics are up. */
  readonly countErrorsIn?: (counter: LogErrorCounter) => void;
}

/** What `createServer` is given besides configuration. */
export interface CreateServerParts {
  /** The model kinds beyond the built-in batched one (`defaultKinds(...)` for `tsserve start`). */
  readonly kinds: readonly ModelKind[];
  /** The batchers' time and timers (default the real clock). */
  readonly clock?: Clock;
  readonly logger: ServerLogging;
  /** Aborted (a signal): the server drains from the moment its listeners are up. */
  readonly stopSignal?: AbortSignal;
  /** Metrics built by the caller (a unit test's recording port); then `metrics.config` only goes to the workers. */
  readonly metrics?: { readonly port: MetricsPort; readonly ingest: ServerDeps['ingest'] };
}

/** A running server: its listeners, its models, and the stop that drains them and closes the metrics. */
export interface TsServer {
  readonly urls: { readonly inference: string; readonly management: string; readonly metrics: string };
  readonly manager: ModelManager;
  readonly keys: TokenKeys | null;
  /** Each listener's routes and the methods each path takes (what the OpenAPI documents describe). */
  readonly routes: ServerRoutes;
  readonly metrics: MetricsPort;
  /** Drains, stops the workers and the system metrics, closes the sinks it built (idempotent). */
  stop(): Promise<void>;
}

/** A start-up refused before any listener opened: the lines to print (a first line, then details). */
export class StartRefused extends Error {
  constructor(
    message: string,
    readonly details: readonly string[],
  ) {
    super(message);
  }
}

/** Builds the metrics a server records into, or refuses (closing them) when the yaml declares what it cannot fill. */
async function buildMetrics(
  config: CreateServerConfig,
  parts: CreateServerParts,
  peers: { source: (() => Promise<readonly ForeignFamily[]>) | null },
): Promise<{ port: MetricsPort; ingest: ServerDeps['ingest']; close(): Promise<void> }> {
  if (parts.metrics !== undefined) return { ...parts.metrics, close: () => Promise.resolve() };
  const m = config.metrics;
  const log = parts.logger.log;
  const metrics = new FrontendMetrics(m.config, {
    logDir: config.server.logDir,
    processMetrics: true,
    ...((config.server.apiServerCount ?? 1) > 1 ? { processPeers: () => peers.source?.() ?? Promise.resolve([]) } : {}),
    log: levelCallback(log),
    ...(m.modes ? { modes: m.modes } : {}),
    ...(m.statsd ? { statsd: m.statsd } : {}),
    ...(m.otlp ? { otlp: m.otlp } : {}),
    ...(m.serverVersion !== undefined ? { serverVersion: m.serverVersion } : {}),
    ...(m.showHidden !== undefined ? { showHiddenMetricsForVersion: m.showHidden } : {}),
  });
  // The log files' failures (a rotation, lost lines) from start-up on, in tsserve_log_errors_total.
  parts.logger.countErrorsIn?.((file, reason, n) => metrics.self.logError(file, reason, n));
  const wrong = checkFrontendMetrics(metrics);
  if (wrong.length > 0) {
    await metrics.close();
    throw new StartRefused(
      `metrics config ${m.configFile} declares frontend metrics the server cannot fill; not starting:`,
      wrong.map((w) => `${m.configFile}:${w}`),
    );
  }
  const ingest = new MetricsIngest(metrics, { log: (msg) => log.warn(msg) });
  return { port: metrics, ingest, close: () => metrics.close() };
}

/**
 * Builds and starts the server: metrics, models, workers, listeners; resolves once every
 * start-up model has loaded or failed. Rejects, having closed what it built, when the metrics
 * config is refused (StartRefused) or a listener or an explicitly named model cannot start.
 */
export async function createServer(config: CreateServerConfig, parts: CreateServerParts): Promise<TsServer> {
  const log = parts.logger.log;
  // Above one front, /metrics shows every process's runtime metrics, each with its pid.
  const peers: { source: (() => Promise<readonly ForeignFamily[]>) | null } = { source: null };
  const metrics = await buildMetrics(config, parts, peers);
  // Tracing on: this process's provider, its spans lost counted with the self-metrics.
  const self = metrics.port instanceof FrontendMetrics ? metrics.port.self : null;
  const tracer =
    config.server.tracing !== undefined
      ? new Tracer(config.server.tracing, {
          log: (level, msg) => log[level](msg),
          ...(self !== null ? { onDropped: (reason, n) => self.spansDropped(reason, n) } : {}),
        })
      : null;
  const untrace = setActiveTracer(tracer);
  const closeTracing = async (): Promise<void> => {
    untrace();
    await tracer?.close();
  };
  let early: (() => Promise<void>) | null = null;
  const onAbort = (): void => void early?.();
  parts.stopSignal?.addEventListener('abort', onAbort, { once: true });
  let server;
  try {
    server = await startServer(config.server, {
      kinds: parts.kinds,
      ...(parts.clock !== undefined ? { clock: parts.clock } : {}),
      metrics: metrics.port,
      metricsConfig: metrics.port instanceof FrontendMetrics ? metrics.port.config : config.metrics.config,
      ingest: metrics.ingest,
      log,
      ...(parts.logger.access !== undefined ? { access: parts.logger.access } : {}),
      processPeers: peers,
      onListening: (up) => {
        log.info(`Inference API bind to: ${up.urls.inference}`);
        log.info(`Management API bind to: ${up.urls.management}`);
        log.info(`Metrics API bind to: ${up.urls.metrics}`);
        early = () => up.stop();
        if (parts.stopSignal?.aborted === true) void up.stop();
      },
    });
  } catch (e) {
    parts.stopSignal?.removeEventListener('abort', onAbort);
    await closeTracing();
    await metrics.close();
    throw e;
  }
  const interval = config.metrics.systemIntervalSec;
  const system: SystemMetricsHandle | null =
    interval === null || metrics.port.modes.length === 0 || !(metrics.port instanceof FrontendMetrics)
      ? null
      : startSystemMetrics(metrics.port, { intervalSec: Math.max(1, interval), diskPath: config.server.logDir });
  logStartup(config, metrics.port, server, system !== null, log);
  const running = server;
  let stopping: Promise<void> | null = null;
  return {
    urls: running.urls,
    manager: running.manager,
    keys: running.keys,
    routes: running.routes,
    metrics: metrics.port,
    stop: () =>
      (stopping ??= (async () => {
        parts.stopSignal?.removeEventListener('abort', onAbort);
        await running.stop();
        system?.stop();
        // The spans of the last requests are exported (bounded) before the sinks close.
        await closeTracing();
        await metrics.close();
      })()),
  };
}

/** The start-up lines of ts_log.log: what the metrics, the store and the workers are configured as. */
function logStartup(
  config: CreateServerConfig,
  metrics: MetricsPort,
  server: { readonly manager: ModelManager; readonly keys: TokenKeys | null; readonly urls: TsServer['urls'] },
  systemOn: boolean,
  log: Log,
): void {
  const { server: cfg, metrics: m } = config;
  const activeModes = metrics.modes.length === 0 ? 'off' : metrics.modes.join(',');
  const statsd = m.statsd;
  log.info(
    `Metrics config: ${m.configFile}; metrics mode: ${activeModes}${metrics.modes.includes('tslog') ? `; metric logs in ${cfg.logDir}` : ''}${metrics.modes.includes('statsd') ? `; statsd ${statsd ? `${statsd.host}:${statsd.port}` : `${m.config.statsd.host}:${m.config.statsd.port}`}` : ''}`,
  );
  // An address for a sink that is off sends nothing; say so rather than look configured.
  if (statsd !== undefined && !metrics.modes.includes('statsd')) {
    log.warn(
      `--statsd-address ${statsd.host}:${statsd.port} is not used: the metrics mode is ${activeModes} (add statsd to --metrics-mode to send there)`,
    );
  }
  log.info(`System metrics: ${systemOn ? `every ${m.systemIntervalSec} s` : 'off'}`);
  const t = cfg.tracing;
  if (t !== undefined)
    log.info(
      `Tracing: spans exported to ${t.endpoint} (sampler ${t.sampler}${t.sampler.endsWith('traceidratio') ? ` ${t.ratio}` : ''}, queue ${t.maxQueueSize})`,
    );
  log.info(
    `Model store: ${cfg.modelStore}; models: ${
      server.manager
        .list()
        .map((x) => x.config.name)
        .join(', ') || '(none)'
    }`,
  );
  const loadSec = cfg.modelLoadTimeoutMs !== undefined ? cfg.modelLoadTimeoutMs / 1000 : 0;
  const shutdownSec = cfg.shutdownTimeoutMs !== undefined ? cfg.shutdownTimeoutMs / 1000 : 0;
  log.info(
    `Workers: at most ${cfg.maxWorkers ?? Infinity} over all models (--max-workers); model load timeout ${loadSec > 0 ? `${loadSec} s` : 'none'}; shutdown timeout ${shutdownSec > 0 ? `${shutdownSec} s` : 'none'}`,
  );
  const fronts = cfg.apiServerCount ?? 1;
  if (fronts > 1)
    log.info(
      `API servers: ${fronts} front processes share ${server.urls.inference}; this process (pid ${process.pid}) keeps the workers and sinks`,
    );
  if (server.keys !== null) log.info(`Token authorization on: keys in ${server.keys.file}`);
}
