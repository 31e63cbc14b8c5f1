/**
 * `tsserve start`: validates metrics.yaml once (any problem stops start-up, every one printed),
 * builds the frontend metrics and the worker ingest, starts the three listeners and the model
 * workers, and runs in the foreground until SIGINT/SIGTERM/SIGHUP, then drains and exits 0.
 *
 * Refusals to start (bad flags, an invalid metrics.yaml, a missing --model-store) are command
 * output: plain lines on stderr, like `metrics validate`. From the moment the log directory
 * exists, everything goes through the one server logger created here (ts_log.log, console).
 */
import type { OtlpSettings } from '../../frontend/metrics/otlp/otlp-settings.js';
import { otlpMetricsSettings } from '../../frontend/metrics/otlp/otlp-settings.js';
import type { TracingSettings } from '../../frontend/tracing/trace-settings.js';
import { otlpTracesSettings } from '../../frontend/tracing/trace-settings.js';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { MetricsConfig, SinkMode } from '../../schema/types.js';
import {
  METRICS_PROFILES,
  defaultMetricsConfigPath,
  formatProblem,
  loadMetricsConfig,
  profileConfigPath,
} from '../../schema/config/load.js';
import { parseModeWord } from '../../schema/config/modes.js';
import { packageVersion, showHiddenProblem } from '../../schema/config/stability.js';
import { parseAddress } from '../../frontend/http/address.js';
import type { ServerConfig } from '../../frontend/server/server.js';
import { createServer, defaultKinds, StartRefused } from '../../frontend/main.js';
import { readChatTemplateFile } from '../../frontend/generation/chat-template.js';
import type { ListenAddress } from '../../frontend/http/address.js';
import { parseStartOptions, startUsage } from '../../frontend/server/start-options.js';
import { vllmSwitchOn, vllmSwitchProblems } from '../../schema/vllm-env.js';
import type { AccessLog, Log, LogErrorCounter } from '../../frontend/log/log.js';
import { createServerLogger } from '../../frontend/log/logger.js';
import type { StartOptions } from '../../frontend/server/start-options.js';
import { generateNewStore } from '../models/store.js';
import { makeDirs, notADirectory } from './dir-arg.js';

/** `--metrics-mode` value → modes; `off`/`none` → no sinks at all (metrics switched off). */
export function parseModesFlag(value: string): { modes: SinkMode[] } | { error: string } {
  const words = value
    .split(',')
    .map((w) => w.trim())
    .filter((w) => w !== '');
  if (words.length === 1 && ['off', 'none'].includes(words[0].toLowerCase())) return { modes: [] };
  const modes: SinkMode[] = [];
  for (const w of words) {
    const m = parseModeWord(w);
    if (m === null)
      return {
        error: `--metrics-mode: unknown mode '${w}' (use tslog, prometheus, statsd, otlp, a comma list of them, or off)`,
      };
    if (!modes.includes(m)) modes.push(m);
  }
  if (modes.length === 0) return { error: '--metrics-mode: empty (use tslog, prometheus, statsd, otlp or off)' };
  return { modes };
}

function parseStatsd(value: string): { host: string; port: number } | null {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(value.trim());
  if (m === null) return null;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1] === '' ? '127.0.0.1' : m[1], port } : null;
}

/**
 * `--models NAME=DIR ...` | `all` | `none` → the server's model list. `none` starts with no model,
 * as TorchServe starts without `--models`, for models registered later through the management API.
 */
function parseModels(values: readonly string[]): ServerConfig['models'] | { error: string } {
  if (values.length === 1 && values[0] === 'all') return 'all';
  if (values.length === 1 && values[0] === 'none') return [];
  const out: { name: string; url: string }[] = [];
  for (const v of values) {
    if (v === 'all' || v === 'none') return { error: `--models: '${v}' cannot be combined with NAME=DIR entries` };
    const eq = v.indexOf('=');
    if (eq === 0) return { error: `--models: '${v}' has no name (use NAME=DIR)` };
    const name = eq > 0 ? v.slice(0, eq) : v;
    const url = eq > 0 ? v.slice(eq + 1) : v;
    if (url === '') return { error: `--models: '${v}' has no directory (use NAME=DIR)` };
    if (out.some((m) => m.name === name)) return { error: `--models: the name '${name}' is given twice` };
    out.push({ name, url });
  }
  return out;
}

/** Generates the default store when it is missing; null (logged) when that fails. */
async function ensureStore(dir: string, log: Log): Promise<string | null> {
  if (fs.existsSync(dir)) return dir;
  log.info(`model store ${dir} is missing: generating the demo store (tsserve models generate)`);
  try {
    const r = await generateNewStore(dir, { log: (line) => log.info(line) });
    log.info(`model store ${dir}: ${r.written.length} written, ${r.skipped.length} kept`);
    return dir;
  } catch (e) {
    log.error(`model store ${dir}: ${(e as Error).message}`);
    return null;
  }
}

/**
 * Signals that stop the server through the drain. SIGHUP (the terminal closed, `kill -HUP`)
 * is one of them: node's default for it exits at once, cutting in-flight requests and losing
 * unflushed metrics. The JVM under TorchServe runs its shutdown hook on HUP as on TERM, and we
 * have nothing to reload in place (metrics.yaml is validated once, at start): drain and stop.
 */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Runs `tsserve start`; resolves to the exit code once the server has stopped. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseStartOptions(argv, process.env);
  if (!parsed.ok) {
    for (const p of parsed.problems) process.stderr.write(`tsserve start: ${p}\n`);
    return 2;
  }
  const opts = parsed.options;
  if (opts.help) {
    process.stdout.write(startUsage());
    return 0;
  }

  const problems: string[] = [];
  const addr = (flag: string, v: string): ReturnType<typeof parseAddress> | null => {
    try {
      return parseAddress(flag, v);
    } catch (e) {
      problems.push((e as Error).message);
      return null;
    }
  };
  const inference = addr('--inference-address', opts.inferenceAddress);
  const management = addr('--management-address', opts.managementAddress);
  const metricsAddr = addr('--metrics-address', opts.metricsAddress);
  let modes: SinkMode[] | undefined;
  if (opts.metricsMode !== null) {
    const m = parseModesFlag(opts.metricsMode);
    if ('error' in m) problems.push(m.error);
    else modes = m.modes;
  }
  let statsd: { host: string; port: number } | undefined;
  if (opts.statsdAddress !== null) {
    const s = parseStatsd(opts.statsdAddress);
    if (s === null) problems.push(`--statsd-address: '${opts.statsdAddress}' is not HOST:PORT`);
    else statsd = s;
  }
  const models = parseModels(opts.models);
  if (typeof models === 'object' && 'error' in models) problems.push(models.error);
  // Metric deprecation: the server's version (TS_SERVER_VERSION simulates an upgrade in tests).
  const serverVersion = process.env.TS_SERVER_VERSION || packageVersion();
  const showHidden = opts.showHiddenMetricsForVersion;
  const hiddenProblem = showHidden === null ? null : showHiddenProblem(serverVersion, showHidden);
  if (hiddenProblem !== null) problems.push(hiddenProblem);
  problems.push(...vllmSwitchProblems(process.env));
  let profileFile: string | null = null;
  if (opts.metricsProfile !== null) {
    profileFile = profileConfigPath(opts.metricsProfile);
    if (profileFile === null)
      problems.push(
        `--metrics-profile: unknown profile '${opts.metricsProfile}' (known: ${Object.keys(METRICS_PROFILES).join(', ')})`,
      );
    else if (opts.metricsConfig !== null)
      problems.push('--metrics-profile and --metrics-config both name the metrics configuration; give one');
  }
  if (problems.length > 0 || inference === null || management === null || metricsAddr === null) {
    for (const p of problems) process.stderr.write(`tsserve start: ${p}\n`);
    return 2;
  }

  // Validate metrics.yaml once, completely; the parsed config goes to every worker as is.
  const configFile = path.resolve(opts.metricsConfig ?? profileFile ?? defaultMetricsConfigPath());
  const loaded = loadMetricsConfig(configFile);
  if (!loaded.ok) {
    process.stderr.write(
      `tsserve start: invalid metrics config ${configFile} (${loaded.problems.length} problem(s)); not starting:\n`,
    );
    for (const p of loaded.problems) process.stderr.write(`${formatProblem(p)}\n`);
    return 1;
  }
  const config = loaded.config;
  // The otlp sink's flag and OTEL_* environment matter (and are checked) only when it runs.
  let otlp: OtlpSettings | undefined;
  if ((modes ?? config.modes).includes('otlp')) {
    const o = otlpMetricsSettings(opts.otlpMetricsEndpoint, process.env, 'tsserve');
    if ('problems' in o) {
      for (const p of o.problems) process.stderr.write(`tsserve start: ${p}\n`);
      return 2;
    }
    otlp = o.settings;
  } else if (opts.otlpMetricsEndpoint !== null) {
    process.stderr.write(
      'tsserve start: --otlp-metrics-endpoint is set but the otlp sink is not on (add otlp to --metrics-mode)\n',
    );
    return 2;
  }
  // Tracing is off unless its flag or OTEL_* environment turns it on.
  const traced = otlpTracesSettings(opts.otlpTracesEndpoint, process.env, 'tsserve');
  if ('problems' in traced) {
    for (const p of traced.problems) process.stderr.write(`tsserve start: ${p}\n`);
    return 2;
  }
  const tracing = traced.settings ?? undefined;
  const storeDir = path.resolve(opts.modelStore);
  if (!opts.modelStoreIsDefault && !fs.existsSync(storeDir)) {
    process.stderr.write(
      `tsserve start: --model-store: directory ${storeDir} does not exist (generate one with: tsserve models generate ${opts.modelStore})\n`,
    );
    return 1;
  }
  const notStoreDir = notADirectory('model-store', storeDir);
  if (notStoreDir !== null) {
    process.stderr.write(`tsserve start: ${notStoreDir}\n`);
    return 1;
  }
  const logDir = path.resolve(opts.logDir);
  // A log directory that cannot be made is a refusal like the others: one line, not a stack.
  const notLogDir = notADirectory('log-dir', logDir);
  if (notLogDir !== null) {
    process.stderr.write(`tsserve start: ${notLogDir}\n`);
    return 1;
  }
  let logger: ReturnType<typeof createServerLogger>;
  try {
    makeDirs(logDir);
    // The one logger of this process; everything below logs through it or a child of it.
    logger = createServerLogger({ level: opts.logLevel, logDir });
  } catch (e) {
    process.stderr.write(`tsserve start: --log-dir: cannot write logs in ${logDir}: ${(e as Error).message}\n`);
    return 1;
  }
  // A crash of the frontend itself is the last record of ts_log.log (written synchronously).
  const onCrash = (err: unknown): void => {
    logger.log.fatal(`uncaught exception: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    logger.flush();
    process.exit(1);
  };
  process.on('uncaughtException', onCrash);
  try {
    return await serve(
      opts,
      {
        configFile,
        config,
        storeDir,
        logDir,
        modes,
        statsd,
        otlp,
        tracing,
        models: models as ServerConfig['models'],
        inference,
        management,
        metricsAddr,
        serverVersion,
        showHidden,
      },
      logger.log,
      logger.access,
      logger.countErrorsIn,
    );
  } finally {
    process.off('uncaughtException', onCrash);
    logger.close();
  }
}

interface Checked {
  readonly configFile: string;
  readonly config: MetricsConfig;
  readonly storeDir: string;
  readonly logDir: string;
  readonly modes: SinkMode[] | undefined;
  readonly statsd: { host: string; port: number } | undefined;
  readonly otlp: OtlpSettings | undefined;
  readonly tracing: TracingSettings | undefined;
  readonly models: ServerConfig['models'];
  readonly inference: ListenAddress;
  readonly management: ListenAddress;
  readonly metricsAddr: ListenAddress;
  /** The server's version and --show-hidden-metrics-for-version, for deprecated metrics. */
  readonly serverVersion: string;
  readonly showHidden: string | null;
}

/** Runs the server with checked options until a signal; resolves to the exit code. */
async function serve(
  opts: StartOptions,
  c: Checked,
  log: Log,
  access: AccessLog,
  countLogErrors: (counter: LogErrorCounter) => void,
): Promise<number> {
  const store = await ensureStore(c.storeDir, log);
  if (store === null) return 1;
  let chatTemplate: string | undefined;
  try {
    if (opts.chatTemplate !== null) chatTemplate = await readChatTemplateFile(opts.chatTemplate);
  } catch (e) {
    process.stderr.write(`tsserve start: ${(e as Error).message}\n`);
    return 1;
  }
  // From the moment the listeners are up (before the models load), a signal drains.
  const stop = new AbortController();
  const stopped = new Promise<void>((resolve) => {
    const onSignal = (sig: NodeJS.Signals): void => {
      for (const s of STOP_SIGNALS) process.off(s, onSignal);
      log.info(`${sig}: draining (finishing in-flight requests, stopping workers)`);
      stop.abort();
      resolve();
    };
    for (const s of STOP_SIGNALS) process.on(s, onSignal);
  });
  let server;
  try {
    server = await createServer(
      {
        server: {
          inference: c.inference,
          management: c.management,
          metrics: c.metricsAddr,
          modelStore: store,
          models: c.models,
          logDir: c.logDir,
          enableTokenAuth: opts.enableTokenAuth,
          maxRequestSizeBytes: opts.maxRequestSize,
          bodyLimits: {
            maxDepth: opts.maxJsonDepth,
            maxElements: opts.maxJsonElements,
            timeoutMs: opts.requestTimeout,
            idleTimeoutMs: opts.requestIdleTimeout,
          },
          ...(opts.jobQueueSize > 0 ? { queueCapacity: opts.jobQueueSize } : {}),
          maxWorkers: opts.maxWorkers > 0 ? opts.maxWorkers : 4 * os.availableParallelism(),
          ...(opts.modelLoadTimeout > 0 ? { modelLoadTimeoutMs: opts.modelLoadTimeout * 1000 } : {}),
          ...(opts.shutdownTimeout > 0 ? { shutdownTimeoutMs: opts.shutdownTimeout * 1000 } : {}),
          headerTimeoutMs: opts.headerTimeout,
          apiServerCount: opts.apiServerCount,
          // The fronts get the template's text, not its path: the file was read once, here.
          ...(chatTemplate !== undefined ? { chatTemplate } : {}),
          ...(c.tracing !== undefined ? { tracing: c.tracing } : {}),
        },
        metrics: {
          config: c.config,
          configFile: c.configFile,
          ...(c.modes ? { modes: c.modes } : {}),
          ...(c.statsd ? { statsd: c.statsd } : {}),
          ...(c.otlp ? { otlp: c.otlp } : {}),
          serverVersion: c.serverVersion,
          showHidden: c.showHidden,
          systemIntervalSec: opts.disableSystemMetrics ? null : opts.metricTimeInterval,
        },
      },
      {
        kinds: defaultKinds({
          // handler: pipeline models (spoken answers through a chat hook, /v1/audio/speech).
          pipeline: {
            statsEnabled: !opts.disableLogStats,
            logStatsIntervalSec: opts.logStatsInterval,
            ...(log.isLevelEnabled('debug') ? { debugLog: (m: string) => log.debug(m) } : {}),
          },
          generation: {
            logStatsIntervalSec: opts.logStatsInterval,
            debug: log.isLevelEnabled('debug'),
            debugLog: (m) => log.debug(m),
            statsEnabled: !opts.disableLogStats,
            enableMfuMetrics: opts.enableMfuMetrics,
            computeNansInLogits: vllmSwitchOn('VLLM_COMPUTE_NANS_IN_LOGITS'),
            ...(chatTemplate !== undefined ? { chatTemplate } : {}),
          },
        }),
        logger: { log, access, countErrorsIn: countLogErrors },
        stopSignal: stop.signal,
      },
    );
  } catch (e) {
    if (e instanceof StartRefused) {
      process.stderr.write(`tsserve start: ${e.message}\n`);
      for (const d of e.details) process.stderr.write(`${d}\n`);
    } else log.error(`tsserve start: ${(e as Error).message}`);
    return 1;
  }
  if (!stop.signal.aborted) log.info('Model server started.');
  await stopped;
  await server.stop();
  log.info('Model server stopped.');
  return 0;
}
