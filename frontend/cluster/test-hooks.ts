/**
 * The two hooks the `--api-server-count` tests fault a front with. Both are read from
 * environment variables only a test sets (no flag, request or header reaches them), so a
 * production server has neither: a hung front cannot be made from the network.
 *
 * - `TSSERVE_TEST_FRONT_HEARTBEAT_MS`: the primary pings its fronts this often instead of every
 *   5 s (the deadline stays three missed pings), so a test waits a second, not 15.
 * - `TSSERVE_TEST_FRONT_STALL`: a front blocks its event loop on SIGUSR2, for that many ms (a
 *   busy front) or `forever` (a hung one). Without it SIGUSR2 kills a front, as node's default.
 */
import type { LogLevel } from '../log/log.js';

export const HEARTBEAT_ENV = 'TSSERVE_TEST_FRONT_HEARTBEAT_MS';
export const STALL_ENV = 'TSSERVE_TEST_FRONT_STALL';

/** Bounds of the test's heartbeat: below 10 ms a loaded machine's fronts would all look hung. */
const MIN_HEARTBEAT_MS = 10;
const MAX_HEARTBEAT_MS = 5_000;

/** The heartbeat interval a test asked for (ms), undefined when unset; a bad value throws, naming it. */
export function testHeartbeatMs(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[HEARTBEAT_ENV];
  if (raw === undefined) return undefined;
  const ms = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(ms >= MIN_HEARTBEAT_MS && ms <= MAX_HEARTBEAT_MS)) {
    throw new Error(
      `${HEARTBEAT_ENV} (a test hook): expected an integer of ms from ${MIN_HEARTBEAT_MS} to ${MAX_HEARTBEAT_MS}, got ${JSON.stringify(raw)}`,
    );
  }
  return ms;
}

/**
 * With `TSSERVE_TEST_FRONT_STALL` set, SIGUSR2 blocks this process's event loop (Atomics.wait:
 * the thread sleeps, it does not spin a shared core) and, for a finite stall, logs it once over.
 */
export function installStallHook(
  log: (level: LogLevel, msg: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const raw = env[STALL_ENV];
  if (raw === undefined) return;
  const ms = raw === 'forever' ? Infinity : /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (Number.isNaN(ms)) {
    log(
      'error',
      `${STALL_ENV} (a test hook): expected an integer of ms or 'forever', got ${JSON.stringify(raw)}; no stall hook`,
    );
    return;
  }
  const cell = new Int32Array(new SharedArrayBuffer(4));
  process.on('SIGUSR2', () => {
    Atomics.wait(cell, 0, 0, ms);
    log('info', `test hook: event loop blocked for ${raw} ms on SIGUSR2`);
  });
}
