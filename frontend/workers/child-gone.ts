/**
 * When a forked worker is gone. Normally at its 'close': it comes after 'exit' and after the IPC
 * channel has delivered every message, so the worker's last metrics flush is already ingested
 * when listeners see the exit. But 'close' also waits for stdout and stderr, which a process the
 * worker started may share and hold open for as long as it lives. The IPC channel's
 * 'disconnect' comes after its last message, so once the process exited and the channel closed,
 * nothing more of the worker's can be lost: past a grace (its last stderr lines, a crash's stack,
 * are logged first as usual), it is gone.
 */
import type { ChildProcess } from 'child_process';

/**
 * How long after a worker's exit and the close of its IPC channel its stdout and stderr may stay
 * open before it is handled as gone anyway (a process it started holds them).
 */
export const STDIO_GRACE_MS = 1000;

/** How a process's end reads in a message: `signal SIGKILL` or `code 1`. */
export function exitText(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `signal ${signal}` : `code ${String(code)}`;
}

/**
 * Calls `gone` once, when `child` is gone; `held` just before it when the grace ended it (its
 * stdout and stderr still open STDIO_GRACE_MS after it exited and its channel closed).
 */
export function whenChildGone(
  child: ChildProcess,
  gone: (code: number | null, signal: NodeJS.Signals | null) => void,
  held: (code: number | null, signal: NodeJS.Signals | null) => void,
): void {
  let isGone = false;
  const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
    if (isGone) return;
    isGone = true;
    gone(code, signal);
  };
  child.on('close', finish);
  let status: [number | null, NodeJS.Signals | null] | null = null;
  const closing = (): void => {
    if (status === null || child.connected || isGone) return;
    const [code, signal] = status;
    setTimeout(() => {
      if (isGone) return;
      held(code, signal);
      finish(code, signal);
    }, STDIO_GRACE_MS).unref();
  };
  child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
    status = [code, signal];
    closing();
  });
  child.on('disconnect', closing);
}
