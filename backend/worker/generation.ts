/**
 * Hands a `handler: generate` worker over to the engine's loop (`backend/engine/worker-loop`).
 */
import type { InitMessage } from '../../schema/worker-protocol.js';
import { runGenerationWorker } from '../engine/worker-loop.js';
import type { WorkerIo } from './worker-io.js';

/**
 * Starts the loop and returns the listener that must receive every later message, or null
 * after answering `tsserve.load_failed` (the loop threw on start).
 */
export function startGeneration(init: InitMessage, io: WorkerIo): ((msg: unknown) => void) | null {
  const fail = (error: string): null => {
    io.send({ type: 'tsserve.load_failed', workerId: init.workerId, error });
    return null;
  };
  const run = runGenerationWorker;
  const listeners: ((msg: unknown) => void)[] = [];
  try {
    const started = run(
      init,
      (msg) => io.send(msg as never),
      (l) => void listeners.push(l),
      (line) => io.log('error', line),
    );
    // The loop resolves after `tsserve.shutdown` once everything is sent; the process ends then.
    Promise.resolve(started).then(
      () => io.exit(0),
      (e: unknown) => {
        io.log('error', `generation loop failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
        io.exit(1);
      },
    );
  } catch (e) {
    return fail(`generation engine failed to start: ${(e as Error).message}`);
  }
  return (msg) => {
    for (const l of listeners) l(msg);
  };
}
