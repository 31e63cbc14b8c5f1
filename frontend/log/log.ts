/**
 * The server's logging interface. Code outside `frontend/log/logger.ts` logs through this type
 * only, so pino stays behind one adapter file and a unit test can pass a recording fake.
 */

/** Levels, lowest first (pino's names). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/** One level of a record. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A `--log-level` value: a level, or `silent` for nothing at all. */
export type LogThreshold = LogLevel | 'silent';

/** Extra fields of one record (or the bindings of a child logger). */
export type LogFields = Readonly<Record<string, unknown>>;

/** Writes one record at a fixed level; a no-op when the level is below the threshold. */
export type LogFn = (msg: string, fields?: LogFields) => void;

/** A logger: one function per level, and children that carry bindings on every record. */
export interface Log {
  readonly trace: LogFn;
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  readonly fatal: LogFn;
  /** A logger adding `bindings` to each of its records (e.g. `{ worker, model }`). */
  child(bindings: LogFields): Log;
  /** True when records of `level` are written (to skip building costly messages). */
  isLevelEnabled(level: LogLevel): boolean;
}

/** One access-log record: a response on one of the three listeners. */
export interface AccessRecord {
  /** `inference`, `management` or `metrics`. */
  readonly listener: string;
  readonly port: number;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  /** Response body bytes written. */
  readonly bytes: number;
  readonly requestId: string;
}

/** Why a log file failed (`tsserve_log_errors_total{reason}`): a rotation, or lines not written. */
export type LogFileError = 'rotation_failed' | 'lines_lost';

/** Counts `n` failures of the log file named `file` (e.g. `access_log.log`). */
export type LogErrorCounter = (file: string, reason: LogFileError, n: number) => void;

/** Where access records go (never blocks the response path). */
export type AccessLog = (record: AccessRecord) => void;

/** True when `value` names a threshold (`--log-level`). */
export function isLogThreshold(value: string): value is LogThreshold {
  return value === 'silent' || (LOG_LEVELS as readonly string[]).includes(value);
}

/** A `(level, msg)` callback over `log` (the shape the metrics and model-kind code take). */
export function levelCallback(log: Log): (level: LogLevel, msg: string) => void {
  return (level, msg) => log[level](msg);
}
