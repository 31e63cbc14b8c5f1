/**
 * `tsserve start` options: each from its flag, then env `TS_<NAME>` (e.g. `TS_METRICS_MODE`),
 * then the default. The command line is read by `util.parseArgs` (see `flags.ts`). Parsing
 * never throws: it returns the options or every problem found.
 */
import * as os from 'os';
import { LOG_LEVELS, isLogThreshold } from '../log/log.js';
import { MAX_HEADER_TIMEOUT_MS } from '../http/header-timeout.js';
import type { LogThreshold } from '../log/log.js';
import type { FlagDef } from './flags.js';
import { envName, parseFlags } from './flags.js';

/** Most front processes `--api-server-count` takes: twice the CPUs. */
export function maxApiServers(): number {
  return 2 * os.availableParallelism();
}

/** One option's definition. */
interface OptionDef extends FlagDef {
  readonly def: string | readonly string[] | boolean | number | null;
  readonly help: string;
}

/** Every option of `tsserve start`, in help order. */
export const START_OPTIONS: readonly OptionDef[] = [
  { flag: 'inference-address', kind: 'string', def: 'http://127.0.0.1:8080', help: 'inference API listener' },
  {
    flag: 'management-address',
    kind: 'string',
    def: 'http://127.0.0.1:8081',
    help: 'management API listener (token auth is required when not loopback)',
  },
  {
    flag: 'metrics-address',
    kind: 'string',
    def: 'http://127.0.0.1:8082',
    help: 'metrics API listener (GET /metrics)',
  },
  {
    flag: 'model-store',
    kind: 'string',
    def: './model-store',
    help: 'model store directory (the default one is generated when missing)',
  },
  {
    flag: 'models',
    kind: 'list',
    def: ['all'],
    help: 'models to load: NAME=DIR ... or NAME=DIR,NAME=DIR (DIR inside the store), all, or none (register them later)',
  },
  { flag: 'metrics-config', kind: 'string', def: null, help: "metrics.yaml (default: the repo's metrics.yaml)" },
  {
    flag: 'metrics-profile',
    kind: 'string',
    def: null,
    help: "vllm: vLLM's metric names on /metrics (the repo's metrics-vllm.yaml); instead of --metrics-config",
  },
  {
    flag: 'metrics-mode',
    kind: 'string',
    def: null,
    help: 'tslog,prometheus,statsd,otlp (comma list; overrides mode: in the yaml); off = no metrics',
  },
  {
    flag: 'statsd-address',
    kind: 'string',
    def: null,
    help: "HOST:PORT of the StatsD agent (default: the yaml's statsd block)",
  },
  {
    flag: 'otlp-metrics-endpoint',
    kind: 'string',
    def: null,
    help: 'URL the otlp sink posts to (default: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, else http://127.0.0.1:4318/v1/metrics)',
  },
  {
    flag: 'otlp-traces-endpoint',
    kind: 'string',
    def: null,
    help: "URL traces are exported to over OTLP/HTTP (vLLM's flag; default off, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; docs/tracing.md)",
  },
  {
    flag: 'log-dir',
    kind: 'string',
    def: './logs',
    help: 'directory of ts_log.log, access_log.log, ts_metrics.log, model_metrics.log and key_file.json',
  },
  {
    flag: 'log-level',
    kind: 'string',
    def: 'info',
    help: `${LOG_LEVELS.join('|')}|silent: least level written to ts_log.log and the console`,
  },
  { flag: 'metric-time-interval', kind: 'int', def: 60, help: 'seconds between system metrics samples' },
  { flag: 'disable-system-metrics', kind: 'bool', def: false, help: 'do not collect CPU/memory/disk metrics' },
  {
    flag: 'enable-token-auth',
    kind: 'bool',
    def: false,
    help: 'require Authorization: Bearer <key> (keys in <log-dir>/key_file.json)',
  },
  {
    flag: 'max-request-size',
    kind: 'int',
    def: 1048576,
    help: 'largest request body in bytes, as sent and once inflated (larger: 413)',
  },
  {
    flag: 'max-json-depth',
    kind: 'int',
    def: 32,
    help: 'deepest nesting of JSON arrays and objects in a body (deeper: 400)',
  },
  {
    flag: 'max-json-elements',
    kind: 'int',
    def: 262144,
    help: 'most JSON values (or tensor elements) in a body (more: 400)',
  },
  { flag: 'request-timeout', kind: 'int', def: 30000, help: 'ms for a request body to arrive in full (later: 408)' },
  {
    flag: 'header-timeout',
    kind: 'int',
    def: 30000,
    help: 'ms for the request line and headers to arrive (later: 408 and the connection closed; at most 300000)',
  },
  {
    flag: 'request-idle-timeout',
    kind: 'int',
    def: 10000,
    help: 'ms a request body may stall between two pieces (longer: 408)',
  },
  {
    flag: 'job-queue-size',
    kind: 'int',
    def: 0,
    help: 'requests queued per model before 503 (0: 100 x batchSize); for a generation model, requests in flight per engine (0: 100 x max_num_seqs)',
  },
  {
    flag: 'disable-log-stats',
    kind: 'bool',
    def: false,
    help: "no engine, pipeline, audio or transfer stats (vLLM's flag): /metrics keeps the serving families",
  },
  {
    flag: 'enable-mfu-metrics',
    kind: 'bool',
    def: false,
    help: "estimate each engine step's FLOPs and memory bytes into vLLM's MFU counters (vLLM's flag)",
  },
  {
    flag: 'log-stats-interval',
    kind: 'int',
    def: 10,
    help: "seconds between the generation engines' stat lines (0: 10)",
  },
  {
    flag: 'max-workers',
    kind: 'int',
    def: 0,
    help: 'workers over all models together; more is refused with 400 (0: 4 x CPUs)',
  },
  {
    flag: 'model-load-timeout',
    kind: 'int',
    def: 120,
    help: 'seconds a worker may take to load its model before it is killed (0: no limit)',
  },
  {
    flag: 'shutdown-timeout',
    kind: 'int',
    def: 25,
    help: 'seconds the SIGTERM drain may take before workers are killed; sinks are flushed after (0: no limit)',
  },
  {
    flag: 'api-server-count',
    kind: 'int',
    def: 1,
    help: `HTTP front processes sharing the inference port (1..${maxApiServers()}); one process keeps the workers and sinks`,
  },
  {
    flag: 'chat-template',
    kind: 'string',
    def: null,
    help: "a Jinja chat template file for every generation model, instead of its own (vLLM's flag; read once at start-up)",
  },
  {
    flag: 'show-hidden-metrics-for-version',
    kind: 'string',
    def: null,
    help: 'X.Y, the previous minor version: show the deprecated metrics it showed',
  },
];

/** Parsed options (strings unresolved; the caller resolves paths and addresses). */
export interface StartOptions {
  readonly inferenceAddress: string;
  readonly managementAddress: string;
  readonly metricsAddress: string;
  readonly modelStore: string;
  /** True when --model-store was not given (flag or env). */
  readonly modelStoreIsDefault: boolean;
  readonly models: readonly string[];
  readonly metricsConfig: string | null;
  /** `--metrics-profile NAME`: a shipped metrics configuration (only `vllm`). */
  readonly metricsProfile: string | null;
  readonly metricsMode: string | null;
  readonly statsdAddress: string | null;
  readonly otlpMetricsEndpoint: string | null;
  readonly otlpTracesEndpoint: string | null;
  readonly logDir: string;
  readonly logLevel: LogThreshold;
  readonly metricTimeInterval: number;
  readonly disableSystemMetrics: boolean;
  readonly enableTokenAuth: boolean;
  readonly maxRequestSize: number;
  readonly maxJsonDepth: number;
  readonly maxJsonElements: number;
  readonly requestTimeout: number;
  readonly requestIdleTimeout: number;
  readonly headerTimeout: number;
  /** Front processes on the inference port (1: none, this process serves it). */
  readonly apiServerCount: number;
  readonly jobQueueSize: number;
  readonly logStatsInterval: number;
  readonly disableLogStats: boolean;
  /** `--enable-mfu-metrics`: the engines' FLOPs and bytes estimate (the MFU counters move). */
  readonly enableMfuMetrics: boolean;
  readonly maxWorkers: number;
  readonly modelLoadTimeout: number;
  readonly shutdownTimeout: number;
  /** `--chat-template FILE` (read and compiled once by start). */
  readonly chatTemplate: string | null;
  /** `--show-hidden-metrics-for-version X.Y` (checked against the server version by start). */
  readonly showHiddenMetricsForVersion: string | null;
  readonly help: boolean;
}

/** Options, or every problem. */
export type StartOptionsResult =
  { readonly ok: true; readonly options: StartOptions } | { readonly ok: false; readonly problems: readonly string[] };

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** The `--help` text. */
export function startUsage(): string {
  const lines = [
    'Usage: tsserve start [options]',
    '',
    'Serves the models of a model store until SIGINT/SIGTERM/SIGHUP, then drains and exits 0.',
    '',
    'Options (flag, then env, then default):',
  ];
  for (const o of START_OPTIONS) {
    const def = o.def === null ? '' : ` (default ${Array.isArray(o.def) ? o.def.join(' ') : String(o.def)})`;
    // A flag longer than the column (--show-hidden-metrics-for-version) still gets two spaces.
    lines.push(`  --${o.flag}${o.kind === 'bool' ? '' : ' VALUE'}  `.padEnd(34) + `${o.help}${def}`);
    lines.push(`${''.padEnd(34)}env ${envName(o.flag)}`);
  }
  lines.push('  -h, --help'.padEnd(34) + 'this text');
  return lines.join('\n') + '\n';
}

/**
 * Flags that arm a timer, with the most each takes: Node fires a timer set past 2^31-1 ms
 * (24.8 days) after 1 ms, which would kill every load or time out every body at once.
 */
const TIMER_FLAG_MAX: readonly (readonly [flag: string, max: number, unit: string])[] = [
  ['metric-time-interval', 86_400, 's'],
  ['log-stats-interval', 86_400, 's'],
  ['model-load-timeout', 86_400, 's'],
  ['shutdown-timeout', 86_400, 's'],
  ['request-timeout', 86_400_000, 'ms'],
  ['request-idle-timeout', 86_400_000, 'ms'],
];

/**
 * Flags for which 0 has no meaning, refused: a 0 ms body deadline 408s every body that takes
 * more than one read, a 0-byte limit 413s every body, a JSON depth or element bound of 0 400s
 * every body holding an array or object (every prediction, every JSON registration), a 0 s
 * sampling interval sampled every second while the log said 0 s, and a 0 header timeout was
 * the default 30000 ms (the flags where 0 means no limit or a default say so in --help).
 */
const POSITIVE_FLAGS: readonly (readonly [flag: string, unit: string])[] = [
  ['metric-time-interval', 's'],
  ['max-request-size', 'byte'],
  ['max-json-depth', 'level'],
  ['max-json-elements', 'element'],
  ['request-timeout', 'ms'],
  ['header-timeout', 'ms'],
  ['request-idle-timeout', 'ms'],
];

/** Parses argv (after `start`) and env. */
export function parseStartOptions(argv: readonly string[], env: NodeJS.ProcessEnv): StartOptionsResult {
  const parsed = parseFlags(argv, START_OPTIONS, 'tsserve start');
  const problems = [...parsed.problems];
  const given = parsed.given.values;
  const out: Record<string, unknown> = { help: parsed.given.help };
  for (const o of START_OPTIONS) {
    const fromEnv = env[envName(o.flag)];
    const fromArgv = given.get(o.flag);
    const raw =
      fromArgv !== undefined && fromArgv.length > 0
        ? fromArgv
        : fromEnv !== undefined && fromEnv !== ''
          ? o.kind === 'list'
            ? fromEnv.split(/[\s,]+/).filter((s) => s !== '')
            : [fromEnv]
          : undefined;
    const key = camel(o.flag);
    // An empty value on the command line (`--log-dir=`, `--models ""`, an unset shell variable)
    // is a mistake, not the default: it logged into the current directory and loaded every model.
    if (
      (o.kind === 'string' || o.kind === 'list') &&
      fromArgv !== undefined &&
      fromArgv.every((v) => v.trim() === '')
    ) {
      problems.push(`--${o.flag}: empty value (leave the flag out for the default)`);
      out[key] = o.def;
      continue;
    }
    if (raw === undefined) {
      out[key] = o.def;
      continue;
    }
    const last = raw[raw.length - 1]!;
    switch (o.kind) {
      case 'list':
        out[key] = raw;
        break;
      case 'string':
        out[key] = last;
        break;
      case 'bool': {
        const v = last.trim().toLowerCase();
        if (!['true', 'false', '1', '0', 'yes', 'no'].includes(v))
          problems.push(`--${o.flag}: expected true or false, got '${last}'`);
        out[key] = v === 'true' || v === '1' || v === 'yes';
        break;
      }
      case 'int': {
        // Decimal digits only: Number() would take '' and ' ' as 0 (an empty --shutdown-timeout=
        // meant no limit), and '0x10' or '1e3' as numbers other than the digits it shows.
        const text = last.trim();
        const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
        if (!Number.isSafeInteger(n)) problems.push(`--${o.flag}: expected a non-negative integer, got '${last}'`);
        out[key] = n;
        break;
      }
    }
  }
  const level = String(out.logLevel).toLowerCase();
  if (!isLogThreshold(level))
    problems.push(`--log-level: expected one of ${LOG_LEVELS.join(', ')}, silent, got '${String(out.logLevel)}'`);
  out.logLevel = level;
  const fronts = Number(out.apiServerCount);
  if (Number.isInteger(fronts) && (fronts < 1 || fronts > maxApiServers())) {
    problems.push(
      `--api-server-count: expected 1..${maxApiServers()} (2 x the ${os.availableParallelism()} CPUs), got ${fronts}`,
    );
  }
  const headerMs = Number(out.headerTimeout);
  if (Number.isInteger(headerMs) && headerMs > MAX_HEADER_TIMEOUT_MS)
    problems.push(`--header-timeout: at most ${MAX_HEADER_TIMEOUT_MS} ms, got ${headerMs}`);
  for (const [flag, unit] of POSITIVE_FLAGS) {
    if (out[camel(flag)] === 0) problems.push(`--${flag}: at least 1 ${unit}, got 0`);
  }
  for (const [flag, max, unit] of TIMER_FLAG_MAX) {
    const n = Number(out[camel(flag)]);
    if (Number.isInteger(n) && n > max) problems.push(`--${flag}: at most ${max} ${unit} (one day), got ${n}`);
  }
  out.modelStoreIsDefault = !given.has('model-store') && (env.TS_MODEL_STORE ?? '') === '';
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, options: out as unknown as StartOptions };
}
