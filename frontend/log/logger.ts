/**
 * The pino adapter: the one file that imports pino and pino-pretty. `createServerLogger` is
 * called once by `tsserve start`; the `Log` it returns is passed down to everything else.
 *
 * Destinations (all in this process, no worker-thread transport, so shutdown never waits on a
 * thread and `flush()` really writes everything):
 * - `<log-dir>/ts_log.log`: JSON lines, written synchronously (low volume; the last line before
 *   a crash is on disk);
 * - the console: readable lines (pino-pretty) when stdout is a TTY, else the same JSON lines,
 *   which is what a container's log collector reads; written asynchronously, flushed at exit;
 * - `<log-dir>/access_log.log`: one JSON line per response, queued with a bound, written in
 *   8 KiB blocks or every 200 ms: when the disk cannot keep up, lines are dropped and counted
 *   rather than blocking requests.
 * Both files are rotated by size as the metric logs are, by the same writer (rotating-file.ts;
 * log4j's RollingFile in TorchServe): past 100 MiB a file becomes `.1`, older ones move up,
 * `.5` goes.
 */
import * as fs from 'fs';
import * as path from 'path';
import { pino } from 'pino';
import type { DestinationStream } from 'pino';
import pretty from 'pino-pretty';
import type { Logger } from 'pino';
import type { AccessLog, Log, LogErrorCounter, LogFields, LogFileError, LogThreshold } from './log.js';
import { LOG_KEEP, LOG_MAX_BYTES, RotatingFile } from './rotating-file.js';
import { accessLine } from './access-line.js';

/** File names, as TorchServe names them. */
export const TS_LOG_FILE = 'ts_log.log';
export const ACCESS_LOG_FILE = 'access_log.log';

/** Default bound on the access log's unwritten characters (lines beyond it are dropped and counted). */
export const ACCESS_BUFFER_CHARS = 16 * 1024 * 1024;

/** ts_log.log and access_log.log rotate as the metric logs do: past 100 MiB, keeping 5. */
export { LOG_KEEP, LOG_MAX_BYTES } from './rotating-file.js';

/** The access log is written in blocks of at least this many bytes… */
export const ACCESS_WRITE_BYTES = 8 * 1024;
/** …or what has waited this long (ms), so a quiet server's lines still reach the file promptly. */
export const ACCESS_FLUSH_MS = 200;

/** How `createServerLogger` is configured. */
export interface ServerLoggerOptions {
  readonly level: LogThreshold;
  /** Existing directory for ts_log.log and access_log.log. */
  readonly logDir: string;
  /** Console output: default `pretty` when stdout is a TTY, else `json`; `off` for none. */
  readonly console?: 'pretty' | 'json' | 'off';
  /** Epoch-ms clock of the records' `time` (tests pin it); default `Date.now`. */
  readonly nowMs?: () => number;
  /** Bound on the access log's unwritten characters (default 16 Mi). */
  readonly accessBufferChars?: number;
  /** Block size of the access log's writes in bytes (default ACCESS_WRITE_BYTES). */
  readonly accessWriteBytes?: number;
  /** Size rotation of ts_log.log and access_log.log (default LOG_MAX_BYTES, LOG_KEEP). */
  readonly rotation?: { readonly maxBytes: number; readonly keep: number };
}

/** The server's loggers and their lifecycle. */
export interface ServerLogger {
  readonly log: Log;
  readonly access: AccessLog;
  /** Access lines lost: their buffer was full, or their write failed. */
  accessDropped(): number;
  /**
   * Count the files' failures in `counter` from now on (tsserve_log_errors_total, which exists
   * only once the metrics are up); failures before that are passed on at once.
   */
  readonly countErrorsIn: (counter: LogErrorCounter) => void;
  /** Writes out everything buffered, synchronously; safe to call again. */
  flush(): void;
  /** Flushes, then closes the files; later records are dropped. */
  close(): void;
}

interface Flushable {
  write(line: string): unknown;
  flushSync(): void;
  end(): void;
  on(event: string, fn: (...args: unknown[]) => void): unknown;
}

function wrap(p: Logger, state: { closed: boolean }): Log {
  const at =
    (fn: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal') =>
    (msg: string, fields?: LogFields): void => {
      if (state.closed) return; // after close() the files are gone: drop, never throw
      if (fields === undefined) p[fn](msg);
      else p[fn](fields, msg);
    };
  return {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    child: (bindings) => wrap(p.child(bindings), state),
    isLevelEnabled: (level) => p.isLevelEnabled(level),
  };
}

/** Counts of failures until a counter is given, then the counter itself. */
class ErrorTally {
  private counter: LogErrorCounter | null = null;
  private readonly held = new Map<string, { file: string; reason: LogFileError; n: number }>();

  add(file: string, reason: LogFileError, n: number): void {
    if (this.counter !== null) {
      this.counter(file, reason, n);
      return;
    }
    const key = `${file}\u0000${reason}`;
    const h = this.held.get(key);
    if (h === undefined) this.held.set(key, { file, reason, n });
    else h.n += n;
  }

  attach(counter: LogErrorCounter): void {
    this.counter = counter;
    for (const h of this.held.values()) counter(h.file, h.reason, h.n);
    this.held.clear();
  }
}

/** Creates the server's loggers (ts_log.log, console, access_log.log). */
export function createServerLogger(opts: ServerLoggerOptions): ServerLogger {
  const now = opts.nowMs ?? Date.now;
  const timestamp = (): string => `,"time":"${new Date(now()).toISOString()}"`;
  const rotation = opts.rotation ?? { maxBytes: LOG_MAX_BYTES, keep: LOG_KEEP };
  const tally = new ErrorTally();
  // The files' own warnings go to ts_log.log and the console through `root`, made below: a
  // warning follows a failed write or rotation, so none can come before `root` exists.
  let warn: (msg: string) => void = () => undefined;
  const fileOpts = (file: string) => ({
    ...rotation,
    nowMs: now,
    log: (_level: 'warn' | 'error', msg: string) => warn(msg),
    onLost: (n: number) => tally.add(file, 'lines_lost', n),
    countedIn: `tsserve_log_errors_total{file="${file}",reason="lines_lost"}`,
    onRotateFailed: () => tally.add(file, 'rotation_failed', 1),
    rotationCountedIn: `tsserve_log_errors_total{file="${file}",reason="rotation_failed"}`,
  });
  // Synchronous, opened here: an unwritable log directory is refused now, by the caller.
  const main = new RotatingFile(path.join(opts.logDir, TS_LOG_FILE), {
    ...fileOpts(TS_LOG_FILE),
    label: 'server log',
    sync: true,
    flushMs: 0,
    chunkChars: 0,
    maxQueueChars: 0,
  });
  const streams: { level: 'trace'; stream: DestinationStream }[] = [
    { level: 'trace', stream: { write: (line: string) => main.append(line) } },
  ];
  const mode = opts.console ?? (process.stdout.isTTY === true ? 'pretty' : 'json');
  let consoleDest: Flushable | null = null;
  if (mode === 'pretty') {
    streams.push({
      level: 'trace',
      stream: pretty({
        destination: 1,
        sync: true,
        colorize: pretty.isColorSupported,
        translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
        ignore: 'pid,hostname',
        singleLine: true,
      }),
    });
  } else if (mode === 'json') {
    consoleDest = pino.destination({ dest: 1, sync: false }) as unknown as Flushable;
    // A failed write (a closed pipe) must not crash the server through an 'error' event.
    consoleDest.on('error', () => undefined);
    streams.push({ level: 'trace', stream: consoleDest as unknown as DestinationStream });
  }
  const root = pino(
    {
      level: opts.level,
      timestamp,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.multistream(streams),
  );
  warn = (msg) => root.warn(msg);

  let dropped = 0;
  // Created now, as ts_log.log is: the file is there from the start, and a directory where it
  // cannot be made is refused by the caller rather than found at the first request.
  fs.closeSync(fs.openSync(path.join(opts.logDir, ACCESS_LOG_FILE), 'a'));
  // Lines are written in blocks of ACCESS_WRITE_BYTES (or every ACCESS_FLUSH_MS when quieter):
  // one write per line cost a request about 7 µs of the event loop under load.
  const access = new RotatingFile(path.join(opts.logDir, ACCESS_LOG_FILE), {
    ...fileOpts(ACCESS_LOG_FILE),
    label: 'access log',
    flushMs: ACCESS_FLUSH_MS,
    chunkChars: opts.accessWriteBytes ?? ACCESS_WRITE_BYTES,
    maxQueueChars: opts.accessBufferChars ?? ACCESS_BUFFER_CHARS,
    onLost: (n: number) => {
      dropped += n;
      tally.add(ACCESS_LOG_FILE, 'lines_lost', n);
    },
  });

  const state = { closed: false };
  const flushConsole = (): void => {
    try {
      consoleDest?.flushSync();
    } catch {
      /* nothing more can be done at exit */
    }
  };
  // At exit, rotating-file.ts writes the access log's queue itself; the console is flushed here.
  process.once('exit', flushConsole);
  const flush = (): void => {
    access.flushSync();
    flushConsole();
  };
  return {
    log: wrap(root, state),
    // An access line has no level, pid or hostname: one JSON object straight to its file.
    access: (r) => {
      if (state.closed) return;
      access.append(accessLine(now(), r));
    },
    accessDropped: () => dropped,
    countErrorsIn: (counter) => tally.attach(counter),
    flush,
    close: () => {
      if (state.closed) return;
      flush();
      if (dropped > 0)
        root.warn(
          `access log: ${dropped} line(s) lost; counted in tsserve_log_errors_total{file="${ACCESS_LOG_FILE}",reason="lines_lost"}`,
        );
      state.closed = true;
      process.off('exit', flushConsole);
      void access.close();
      void main.close();
      try {
        consoleDest?.end();
      } catch {
        /* already closed */
      }
    },
  };
}
