/** A `Log` that records `level: msg` lines (with bindings and fields as JSON) for unit tests. */
import type { Log, LogFields, LogLevel } from '../../../frontend/log/log.js';

/** A recording logger: every record is pushed to `lines` as `level: msg` plus `{...}` when it has fields. */
export function recordingLog(lines: string[], bindings: LogFields = {}): Log {
  const at =
    (level: LogLevel) =>
    (msg: string, fields?: LogFields): void => {
      const extra = { ...bindings, ...fields };
      lines.push(`${level}: ${msg}${Object.keys(extra).length > 0 ? ` ${JSON.stringify(extra)}` : ''}`);
    };
  return {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    child: (b) => recordingLog(lines, { ...bindings, ...b }),
    isLevelEnabled: () => true,
  };
}
