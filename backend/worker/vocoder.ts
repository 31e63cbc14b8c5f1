/** Hands a `handler: vocoder` worker over to the vocoder's loop (`backend/vocoder`). */
import type { InitMessage } from '../../schema/worker-protocol.js';
import { runVocoderWorker } from '../vocoder/vocoder-loop.js';
import type { WorkerIo } from './worker-io.js';

/** Starts the loop and returns the listener that must receive every later message. */
export function startVocoder(init: InitMessage, io: WorkerIo): (msg: unknown) => void {
  const listeners: ((msg: unknown) => void)[] = [];
  runVocoderWorker(
    init,
    (msg) => io.send(msg as never),
    (l) => void listeners.push(l),
  ).then(
    () => io.exit(0),
    (e: unknown) => {
      io.log('error', `vocoder loop failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      io.exit(1);
    },
  );
  return (msg) => {
    for (const l of listeners) l(msg);
  };
}
