/**
 * The vocoder worker's loop (`handler: vocoder`, a pipeline's code2wav stage): loads the ONNX
 * model, answers `tsserve.ready`, then turns each `tsserve.voc.chunk` into one
 * `tsserve.voc.audio` (PCM16), strictly in arrival order. A cancelled request's queued chunks
 * are dropped; a rejected chunk (a token outside the codec vocabulary, an empty chunk) answers
 * `tsserve.voc.error` with the reason and drops the request's later chunks.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { InitMessage } from '../../schema/worker-protocol.js';
import type { FromVocoderMessage, VocoderChunkMessage, VocoderRejectReason } from '../../schema/vocoder-ipc.js';
import { epochNowMs } from '../../schema/vocoder-ipc.js';
import { createSession, tensorI64 } from '../onnx/ort.js';
import type { OrtSession } from '../onnx/ort.js';

/** A chunk waiting for the model, with its receive-side timings. */
interface Received {
  readonly msg: VocoderChunkMessage;
  readonly rxStartEpochMs: number;
  readonly codes: BigInt64Array;
  readonly rxMs: number;
}

/** Codec vocabulary of the model (its `handlerOptions.vocabSize`, default the tiny LM's 259). */
function vocabOf(init: InitMessage): number {
  const v = init.model.handlerOptions?.vocabSize;
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 259;
}

/** Runs a vocoder worker until `tsserve.shutdown`; resolves once the session is released. */
export async function runVocoderWorker(
  init: InitMessage,
  send: (msg: unknown) => void,
  onMessage: (handler: (msg: unknown) => void) => void,
): Promise<void> {
  const inbox: Received[] = [];
  const dropped = new Set<string>();
  const vocab = vocabOf(init);
  let wake: (() => void) | null = null;
  let shuttingDown = false;
  const reject = (requestId: string, seq: number, reason: VocoderRejectReason, message: string): void => {
    dropped.add(requestId);
    send({ type: 'tsserve.voc.error', requestId, seq, reason, message } satisfies FromVocoderMessage);
  };
  onMessage((raw) => {
    const rxStartEpochMs = epochNowMs();
    const t0 = performance.now();
    const m = raw as { type?: unknown; requestId?: unknown };
    if (m.type === 'tsserve.shutdown') shuttingDown = true;
    else if (m.type === 'tsserve.voc.cancel' && typeof m.requestId === 'string') dropped.add(m.requestId);
    else if (m.type === 'tsserve.voc.chunk') {
      const msg = raw as VocoderChunkMessage;
      if (dropped.has(msg.requestId)) return;
      const codes = msg.codes instanceof Int32Array ? msg.codes : new Int32Array(0);
      if (codes.length === 0)
        return reject(msg.requestId, msg.seq, 'no_codec_tokens', 'the chunk holds no codec tokens');
      const wide = new BigInt64Array(codes.length);
      for (let i = 0; i < codes.length; i++) {
        const c = codes[i]!;
        if (c < 0 || c >= vocab)
          return reject(
            msg.requestId,
            msg.seq,
            'invalid_codec_token',
            `codec token ${c} is outside the vocoder's vocabulary (0..${vocab - 1})`,
          );
        wide[i] = BigInt(c);
      }
      inbox.push({ msg, rxStartEpochMs, codes: wide, rxMs: performance.now() - t0 });
    } else return;
    if (wake !== null) {
      const w = wake;
      wake = null;
      w();
    }
  });

  let session: OrtSession;
  const t0 = performance.now();
  try {
    session = await createSession(join(init.model.dir, init.model.modelFile), { threads: init.model.threads });
  } catch (e) {
    send({ type: 'tsserve.load_failed', workerId: init.workerId, error: `vocoder: ${(e as Error).message}` });
    return;
  }
  const input = session.inputNames[0]!;
  const output = session.outputNames[0]!;
  send({ type: 'tsserve.ready', workerId: init.workerId, loadTimeMs: performance.now() - t0 });

  for (;;) {
    const r = inbox.shift();
    if (r === undefined) {
      if (shuttingDown) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      continue;
    }
    const { msg } = r;
    if (dropped.has(msg.requestId)) continue;
    const c0 = performance.now();
    try {
      const out = (await session.run({ [input]: tensorI64(r.codes, [r.codes.length]) }, [output]))[output]!;
      if (out.type !== 'int16') throw new Error(`the model's output ${output} is ${out.type}, not int16 PCM`);
      const pcm = new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.byteLength);
      send({
        type: 'tsserve.voc.audio',
        requestId: msg.requestId,
        seq: msg.seq,
        pcm,
        frames: out.data.length,
        rxStartEpochMs: r.rxStartEpochMs,
        rxMs: r.rxMs,
        computeMs: performance.now() - c0,
      } satisfies FromVocoderMessage);
    } catch (e) {
      reject(msg.requestId, msg.seq, 'vocoder_failed', (e as Error).message);
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  await session.release();
}
