/**
 * Worker process entry, forked by the frontend with `serialization: 'advanced'`. Wires the
 * process (IPC messages, disconnect, uncaught exceptions) to a `Worker`; exits only after every
 * message it sent has been handed to the channel, so the last metrics flush is never lost.
 */
import { Worker } from './worker.js';
import type { WorkerIo } from './worker-io.js';

/** Bound on how long an exit waits for queued IPC messages to drain. */
const EXIT_DRAIN_MS = 3000;

function main(): void {
  if (typeof process.send !== 'function') {
    process.stderr.write('tsserve worker: must be started by the tsserve frontend (no IPC channel)\n');
    process.exit(2);
  }
  let inFlight = 0;
  let drained: (() => void) | null = null;

  const io: WorkerIo = {
    send(msg, onWritten) {
      if (!process.connected) return false;
      inFlight++;
      try {
        // The callback fires once the message is written to the channel (or failed to be);
        // false back means the channel's backlog is full (the message is still queued).
        return process.send!(msg, undefined, {}, () => {
          inFlight--;
          onWritten?.();
          if (inFlight === 0 && drained) drained();
        });
      } catch (e) {
        inFlight--; // serialization failed synchronously (e.g. a function in a body)
        throw e;
      }
    },
    exit(code) {
      const done = (): void => process.exit(code);
      if (inFlight === 0 || !process.connected) return done();
      drained = done;
      setTimeout(done, EXIT_DRAIN_MS).unref();
    },
    log(level, line) {
      // Over IPC while the channel is up (the frontend logs it with this worker's bindings);
      // else stderr, which the frontend captures too.
      if (process.connected) {
        try {
          this.send({ type: 'tsserve.log', level, msg: line });
          return;
        } catch {
          /* fall through to stderr */
        }
      }
      process.stderr.write(`${line}\n`);
    },
  };

  const worker = new Worker(io);
  process.on('message', (msg: unknown) => worker.onMessage(msg));
  process.on('disconnect', () => worker.onDisconnect());
  // A terminal's Ctrl-C and hang-up go to the whole process group, workers included. The frontend
  // drains on them and stops its workers when their requests are done; a worker that died with
  // the group's signal would fail every request it held. Its ends are the frontend's stop message
  // and the IPC channel's disconnect (the frontend gone), never a terminal's signal.
  process.on('SIGINT', () => undefined);
  process.on('SIGHUP', () => undefined);
  process.on('uncaughtException', (err) => worker.onFatal(err));
  process.on('unhandledRejection', (reason) => worker.onFatal(reason));
}

main();
