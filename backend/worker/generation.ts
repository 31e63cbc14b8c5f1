/**
 * Hands a `handler: generate` worker over to the engine's loop (`backend/engine/worker-loop`).
 * The loop is loaded at run time so a build without the engine still starts ONNX workers and
 * answers a generate model with a clear `tsserve.load_failed`.
 */
import * as path from 'path';
import type { InitMessage } from '../../schema/worker-protocol';
import type { WorkerIo } from './worker';

/** The engine loop's entry, as `backend/engine/worker-loop.ts` exports it. */
type RunGenerationWorker = (
  init: InitMessage,
  send: (msg: unknown) => void,
  onMessage: (listener: (msg: unknown) => void) => void,
) => Promise<void> | void;

/** Compiled location of the engine loop, relative to this file. */
const LOOP_MODULE = path.join(__dirname, '..', 'engine', 'worker-loop.js');

/**
 * Starts the loop and returns the listener that must receive every later message, or null
 * after answering `tsserve.load_failed` (module missing, or the loop threw on start).
 */
export function startGeneration(init: InitMessage, io: WorkerIo): ((msg: unknown) => void) | null {
  const fail = (error: string): null => {
    io.send({ type: 'tsserve.load_failed', workerId: init.workerId, error });
    return null;
  };
  let run: RunGenerationWorker;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- optional module, see above
    const mod = require(LOOP_MODULE) as { runGenerationWorker?: unknown };
    if (typeof mod.runGenerationWorker !== 'function') return fail(`${LOOP_MODULE} does not export runGenerationWorker`);
    run = mod.runGenerationWorker as RunGenerationWorker;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(LOOP_MODULE)) {
      return fail('handler "generate" is not available in this build: the generation engine (backend/engine/worker-loop) is missing');
    }
    return fail(`generation engine failed to load: ${err.message}`);
  }
  const listeners: ((msg: unknown) => void)[] = [];
  try {
    const started = run(init, (msg) => io.send(msg as never), (l) => void listeners.push(l));
    // The loop resolves after `tsserve.shutdown` once everything is sent; the process ends then.
    Promise.resolve(started).then(
      () => io.exit(0),
      (e: unknown) => {
        io.log(`generation loop failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
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
