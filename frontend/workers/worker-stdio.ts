/**
 * A worker's stdout and stderr as log lines: stdout lines at info, stderr lines (a crash's
 * stack, node's own warnings) at warn, each with a `stream` field, split and bounded by
 * line-splitter.ts.
 */
import type { ChildProcess } from 'child_process';
import type { Log } from '../log/log.js';
import { LineSplitter } from './line-splitter.js';

/** Logs each line of `child`'s stdout and stderr; calls `onTruncated` once per line cut to the bound. */
export function pipeWorkerStdio(child: ChildProcess, log: Log, onTruncated: () => void): void {
  for (const stream of ['stdout', 'stderr'] as const) {
    const src = child[stream];
    if (src === null) continue;
    const lines = new LineSplitter((line, dropped) => {
      if (dropped > 0) onTruncated();
      if (stream === 'stdout') log.info(line, { stream });
      else log.warn(line, { stream });
    });
    src.setEncoding('utf8');
    src.on('data', (chunk: string) => lines.push(chunk));
    src.on('end', () => lines.end());
  }
}
