/**
 * The vocoder worker's loop driven directly (no process) on the real generated model: chunks
 * answered in order with their PCM16, rejected input answered with its reason and the request's
 * later chunks dropped, a cancelled request's queued chunks dropped.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runVocoderWorker } from '../../../backend/vocoder/vocoder-loop.js';
import type { InitMessage } from '../../../schema/worker-protocol.js';
import { WORKER_PROTOCOL_VERSION } from '../../../schema/worker-protocol.js';
import { writeTinyVocoder } from '../../../tools/models/tiny-vocoder.js';
import { until } from '../../support/until.js';

describe('runVocoderWorker', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsserve-vocloop-'));
    writeTinyVocoder(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('should answer chunks in order, reject bad input with its reason, and drop cancelled and later chunks', async () => {
    const sent: Record<string, unknown>[] = [];
    let deliver: (msg: unknown) => void = () => undefined;
    const init = {
      type: 'tsserve.init',
      v: WORKER_PROTOCOL_VERSION,
      workerId: 'W-1',
      workerIndex: 0,
      model: {
        name: 'v',
        version: '1.0',
        dir,
        handler: 'vocoder',
        modelFile: 'model.onnx',
        batchSize: 1,
        maxBatchDelayMs: 0,
        minWorkers: 1,
        maxWorkers: 1,
        responseTimeoutSec: 60,
        threads: 1,
      },
    } as unknown as InitMessage;
    const done = runVocoderWorker(
      init,
      (m) => sent.push(m as Record<string, unknown>),
      (h) => {
        deliver = h;
      },
    );
    await until(() => sent.some((m) => m.type === 'tsserve.ready'), { message: 'ready' });
    const chunk = (requestId: string, seq: number, codes: number[]): void =>
      deliver({ type: 'tsserve.voc.chunk', requestId, seq, codes: Int32Array.from(codes) });
    chunk('a', 0, [65, 66]);
    chunk('a', 1, [67]);
    chunk('bad', 0, [65, 999]);
    chunk('bad', 1, [65]);
    chunk('empty', 0, []);
    chunk('c', 0, [70]);
    deliver({ type: 'tsserve.voc.cancel', requestId: 'c' });
    chunk('d', 0, [71]);
    await until(() => sent.some((m) => m.requestId === 'd'), {
      message: 'the last chunk answered',
      observe: () => sent,
    });
    deliver({ type: 'tsserve.shutdown' });
    await done;
    const answers = sent
      .filter((m) => m.type !== 'tsserve.ready')
      .map((m) =>
        m.type === 'tsserve.voc.audio'
          ? `${String(m.requestId)}/${String(m.seq)} audio ${String(m.frames)} ${(m.pcm as Uint8Array).byteLength}`
          : `${String(m.requestId)}/${String(m.seq)} ${String(m.reason)}`,
      );
    expect(answers).to.deep.equal([
      'bad/0 invalid_codec_token',
      'empty/0 no_codec_tokens',
      'a/0 audio 1920 3840',
      'a/1 audio 960 1920',
      'd/0 audio 960 1920',
    ]);
  });
});
