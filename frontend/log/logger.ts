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
 * - `<log-dir>/access_log.log`: one JSON line per response, asynchronous with a bounded buffer,
 *   written in 8 KiB blocks or every 200 ms: when the disk cannot keep up, lines are dropped and
 *   counted rather than blocking requests. Rotated by size as the metric logs are (log4j's
 *   RollingFile in TorchServe): past 100 MiB it becomes `.1`, older ones move up, `.5` goes.
 */
import * as fs from 'fs';
import * as path from 'path';
import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import pretty from 'pino-pretty';
import type { AccessLog, Log, LogFields, LogThreshold } from './log.js';

/** File names, as TorchServe names them. */
export const TS_LOG_FILE = 'ts_log.log';
export const ACCESS_LOG_FILE = 'access_log.log';

/** Default bound on the access log's unwritten bytes. */
export const ACCESS_BUFFER_BYTES = 16 * 1024 * 1024;

/** The access log is rotated when the next line would take it past this many bytes… */
export const ACCESS_MAX_BYTES = 100 * 1024 * 1024;
/** …keeping this many rotated files (`.1` newest). */
export const ACCESS_KEEP = 5;

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
  /** Bound on the access log's unwritten bytes (default 16 MiB). */
  readonly accessBufferBytes?: number;
  /** Access log rotation (default ACCESS_MAX_BYTES, ACCESS_KEEP). */
  readonly accessRotation?: { readonly maxBytes: number; readonly keep: number };
}

/** The server's loggers and their lifecycle. */
export interface ServerLogger {
  readonly log: Log;
  readonly access: AccessLog;
  /** Access lines dropped because their buffer was full. */
  accessDropped(): number;
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
  const at = (fn: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal') =>
    (msg: string, fields?: LogFields): void => {
      if (state.closed) return; // after close() the files are gone: drop, never throw
      if (fields === undefined) p[fn](msg);
      else p[fn](fields, msg);
    };
  return {
    trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal'),
    child: (bindings) => wrap(p.child(bindings), state),
    isLevelEnabled: (level) => p.isLevelEnabled(level),
  };
}

/** Creates the server's loggers (ts_log.log, console, access_log.log). */
export function createServerLogger(opts: ServerLoggerOptions): ServerLogger {
  const now = opts.nowMs ?? Date.now;
  const timestamp = (): string => `,"time":"${new Date(now()).toISOString()}"`;
  const files: Flushable[] = [];
  const quiet = (d: Flushable): Flushable => {
    // A failed write (disk full, closed pipe) must not crash the server through an 'error' event.
    d.on('error', () => undefined);
    return d;
  };
  const main = quiet(pino.destination({ dest: path.join(opts.logDir, TS_LOG_FILE), sync: true, append: true }));
  files.push(main);
  const streams: { level: 'trace'; stream: DestinationStream }[] = [{ level: 'trace', stream: main as unknown as DestinationStream }];
  const mode = opts.console ?? (process.stdout.isTTY === true ? 'pretty' : 'json');
  let consoleDest: Flushable | null = null;
  if (mode === 'pretty') {
    streams.push({ level: 'trace', stream: pretty({ destination: 1, sync: true, colorize: pretty.isColorSupported, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true }) });
  } else if (mode === 'json') {
    consoleDest = quiet(pino.destination({ dest: 1, sync: false }));
    streams.push({ level: 'trace', stream: consoleDest as unknown as DestinationStream });
  }
  const root = pino({
    level: opts.level,
    timestamp,
    formatters: { level: (label) => ({ level: label }) },
  }, pino.multistream(streams));

  let dropped = 0;
  // Opened here, synchronously, so flush() at exit can write even the first lines.
  // Lines are written in blocks of ACCESS_WRITE_BYTES (or every ACCESS_FLUSH_MS when quieter):
  // one write per line cost a request about 7 µs of the event loop under load.
  const accessPath = path.join(opts.logDir, ACCESS_LOG_FILE);
  const rotation = opts.accessRotation ?? { maxBytes: ACCESS_MAX_BYTES, keep: ACCESS_KEEP };
  const openAccess = (): Flushable & { flush(): void } => {
    const d = quiet(pino.destination({
      dest: fs.openSync(accessPath, 'a'), sync: false,
      minLength: ACCESS_WRITE_BYTES,
      maxLength: opts.accessBufferBytes ?? ACCESS_BUFFER_BYTES,
    })) as Flushable & { flush(): void };
    d.on('drop', () => { dropped++; });
    return d;
  };
  let accessDest = openAccess();
  files.push(accessDest);
  let accessBytes = 0;
  try { accessBytes = fs.statSync(accessPath).size; } catch { /* just created */ }
  // The old writer keeps its descriptor, so what it still holds lands in `.1`, the file it now
  // names; the new one opens a fresh access_log.log. Synchronous renames: one per 100 MiB.
  const rotateAccess = (): void => {
    try {
      if (rotation.keep <= 0) fs.rmSync(accessPath, { force: true });
      else {
        fs.rmSync(`${accessPath}.${rotation.keep}`, { force: true });
        for (let i = rotation.keep - 1; i >= 1; i--) {
          try { fs.renameSync(`${accessPath}.${i}`, `${accessPath}.${i + 1}`); } catch { /* no such file yet */ }
        }
        fs.renameSync(accessPath, `${accessPath}.1`);
      }
      const old = accessDest;
      accessDest = openAccess();
      files.splice(files.indexOf(old), 1, accessDest);
      old.end();
      accessBytes = 0;
    } catch (e) {
      // Keep writing to the file we have; try again at the next line past the bound.
      root.warn(`access log: rotating ${ACCESS_LOG_FILE} failed: ${String(e)}`);
      accessBytes = 0;
    }
  };
  // Only when a line came since the last tick: sonic-boom's flush() writes even an empty buffer.
  let accessWaiting = false;
  const accessTimer = setInterval(() => {
    if (!accessWaiting) return;
    accessWaiting = false;
    try { accessDest.flush(); } catch { /* closed */ }
  }, ACCESS_FLUSH_MS);
  accessTimer.unref();

  const state = { closed: false };
  const flush = (): void => {
    for (const d of [...files, ...(consoleDest ? [consoleDest] : [])]) {
      try { d.flushSync(); } catch { /* nothing more can be done at exit */ }
    }
  };
  process.once('exit', flush);
  return {
    log: wrap(root, state),
    // An access line has no level, pid or hostname: one JSON object straight to its destination.
    access: (r) => {
      if (state.closed) return;
      const line = `${JSON.stringify({ time: new Date(now()).toISOString(), ...r })}\n`;
      const bytes = Buffer.byteLength(line);
      if (accessBytes > 0 && accessBytes + bytes > rotation.maxBytes) rotateAccess();
      accessDest.write(line);
      accessBytes += bytes;
      accessWaiting = true;
    },
    accessDropped: () => dropped,
    flush,
    close: () => {
      if (state.closed) return;
      if (dropped > 0) root.warn(`access log: ${dropped} line(s) dropped because ${ACCESS_LOG_FILE} could not keep up`);
      state.closed = true;
      clearInterval(accessTimer);
      flush();
      process.off('exit', flush);
      for (const d of files) {
        try { d.end(); } catch { /* already closed */ }
      }
    },
  };
}
