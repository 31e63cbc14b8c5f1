/**
 * Starts a CLI child and waits for the first whole line of its stdout, for tests that interrupt
 * a command mid-run (SIGINT after its first answer) and pin what it wrote and how it exited.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** A running child past its first stdout line: what it wrote so far (and later), and its exit code. */
export interface PastFirstLine {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

/** Runs `node args…` and resolves once its stdout holds a whole line. */
export async function pastFirstLine(args: readonly string[]): Promise<PastFirstLine> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const first = new Promise<void>((resolve) =>
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('\n')) resolve();
    }),
  );
  const exited = (once(child, 'exit') as Promise<[number | null, string | null]>).then(([code]) => code);
  await first;
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}
