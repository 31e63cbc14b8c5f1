/**
 * The generation worker's main loop (`handler: generate`): loads the engine, answers
 * `tsserve.ready` (or `tsserve.load_failed`), then steps back-to-back while there is work,
 * sending one `tsserve.gen.step` per step. Between steps it yields to the event loop with
 * setImmediate so `tsserve.gen.add` / `tsserve.gen.abort` are seen; with no work it sleeps
 * until a message arrives. `tsserve.shutdown` lets in-flight requests finish, refuses new ones,
 * then closes the model and resolves.
 */
import { performance } from 'node:perf_hooks';
import { decodeToGenWorkerMessage } from '../../schema/engine-ipc.js';
import type { GenErrorMessage, GenStepMessage } from '../../schema/engine-ipc.js';
import type { InitMessage } from '../../schema/worker-protocol.js';
import type { EngineCore } from './engine-core.js';
import { loadEngine } from './load.js';

/**
 * Runs a generation worker until `tsserve.shutdown`; resolves once the model is closed and
 * every message has been handed to `send` (the caller then exits the process).
 */
export async function runGenerationWorker(
  init: InitMessage,
  send: (msg: unknown) => void,
  onMessage: (handler: (msg: unknown) => void) => void,
  /** Diagnostics (the worker's log channel); dropped when absent. */
  logError: (line: string) => void = () => undefined,
  /** Builds the engine (tests hand in one over a fake runner). */
  load: (init: InitMessage) => Promise<EngineCore> = loadFromInit,
): Promise<void> {
  const engineIndex = init.workerIndex;
  const inbox: unknown[] = [];
  let wake: (() => void) | null = null;
  // Listen before loading so requests sent right after `ready` are never lost.
  onMessage((msg) => {
    inbox.push(msg);
    if (wake !== null) {
      const w = wake;
      wake = null;
      w();
    }
  });
  const trySend = (msg: GenStepMessage | GenErrorMessage | Record<string, unknown>): void => {
    try {
      send(msg);
    } catch (e) {
      logError(`generation worker: could not send ${String(msg.type)}: ${(e as Error).message}`);
    }
  };
  const error = (message: string, requestId?: string): void =>
    trySend(
      requestId === undefined
        ? { type: 'tsserve.gen.error', engine: engineIndex, message }
        : { type: 'tsserve.gen.error', engine: engineIndex, requestId, message },
    );

  const t0 = performance.now();
  let engine: EngineCore;
  try {
    engine = await load(init);
  } catch (e) {
    trySend({
      type: 'tsserve.load_failed',
      workerId: init.workerId,
      error: `generation engine: ${(e as Error).message}`,
    });
    return;
  }
  trySend({ type: 'tsserve.ready', workerId: init.workerId, loadTimeMs: performance.now() - t0 });

  let shuttingDown = false;
  const handle = (msg: unknown): void => {
    const type = typeof msg === 'object' && msg !== null ? (msg as { type?: unknown }).type : undefined;
    if (type === 'tsserve.shutdown') {
      shuttingDown = true;
      return;
    }
    if (type !== 'tsserve.gen.add' && type !== 'tsserve.gen.abort') return;
    const d = decodeToGenWorkerMessage(msg);
    const rid = (msg as { requestId?: unknown }).requestId;
    if (!d.ok) {
      error(`invalid ${String(type)}: ${d.problems.join('; ')}`, typeof rid === 'string' ? rid : undefined);
      return;
    }
    const m = d.msg;
    if (m.type === 'tsserve.gen.abort') {
      engine.abort(m.requestId);
      return;
    }
    if (shuttingDown) {
      error('the worker is shutting down', m.requestId);
      return;
    }
    try {
      engine.addRequest(m.requestId, m.prompt ?? m.promptTokenIds!, m.params);
    } catch (e) {
      error((e as Error).message, m.requestId);
    }
  };

  for (;;) {
    while (inbox.length > 0) handle(inbox.shift());
    if (!engine.hasWork()) {
      if (shuttingDown) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      continue;
    }
    const out = await engine.step();
    trySend({ type: 'tsserve.gen.step', engine: engineIndex, ...out });
    // A failed run already finished its own sequences with `error` in this step's outputs; the
    // message is for the log. Sent as an engine error it would fail every other request too.
    const failed = engine.takeError();
    if (failed !== undefined) logError(`generation engine ${engineIndex}: ${failed}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  await engine.runner.close();
}

/** The engine of `init`'s model directory, as the worker process loads it. */
function loadFromInit(init: InitMessage): Promise<EngineCore> {
  return loadEngine({
    dir: init.model.dir,
    modelFile: init.model.modelFile,
    engine: init.model.engine ?? {},
    threads: init.model.threads,
  });
}
