/**
 * What a pipeline refuses. A vocoder that rejects its input skips the request: the client gets
 * an error naming the token (400 for /v1/audio/speech, whose codes are the client's own input),
 * never a 200 with empty audio, and `ts_omni_audio_skipped_requests_total{reason}` counts it. A
 * full stage (`--job-queue-size 1`: one request per replica) answers 503. A real server with a
 * pipeline whose code2wav stage takes a 128-token codec vocabulary (the tiny vocoder's model,
 * `handlerOptions.vocabSize: 128`), the official `openai` client.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import OpenAI from 'openai';
import { delta, Scrape } from './generation-helpers.js';
import { decodeWav, servedOmni, spoken } from './pipeline-helpers.js';
import { until } from '../support/until.js';

const M = { model_name: 'omni-narrow' };
const AUDIO = { model_name: 'omni-narrow', stage: 'code2wav', replica: '0' };

describe('pipeline refusals: a vocoder rejecting its input, a full stage (real tsserve start, openai client)', function () {
  this.timeout(120_000);
  // The same vocoder model, told its codec vocabulary is the 128 ASCII codes, behind a pipeline of its own.
  const omni = servedOmni(
    'omni-narrow',
    [
      '--metrics-mode',
      'prometheus',
      '--disable-system-metrics',
      '--models',
      'omni-narrow=omni-narrow',
      '--job-queue-size',
      '1',
    ],
    {
      prepare: (store) => {
        fs.cpSync(path.join(store, 'tiny-vocoder'), path.join(store, 'narrow-vocoder'), { recursive: true });
        const vcfg = yaml.load(fs.readFileSync(path.join(store, 'narrow-vocoder', 'model-config.yaml'), 'utf8')) as {
          handlerOptions: Record<string, unknown>;
        };
        vcfg.handlerOptions.vocabSize = 128;
        fs.writeFileSync(path.join(store, 'narrow-vocoder', 'model-config.yaml'), yaml.dump(vcfg));
        const pcfg = yaml.load(fs.readFileSync(path.join(store, 'tiny-omni', 'model-config.yaml'), 'utf8')) as {
          pipeline: { stages: { name: string; model: string }[] };
        };
        pcfg.pipeline.stages[1]!.model = 'narrow-vocoder';
        fs.mkdirSync(path.join(store, 'omni-narrow'));
        fs.writeFileSync(path.join(store, 'omni-narrow', 'model-config.yaml'), yaml.dump(pcfg));
      },
    },
  );

  it('should answer 400 naming the token, count the request as skipped and as error, and keep speaking valid input', async () => {
    const before = await Scrape.of(omni.server);
    const refused = await omni.client.audio.speech
      .create({ model: 'omni-narrow', voice: 'alloy', input: 'hello wörld', response_format: 'wav' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    const ok = decodeWav(
      new Uint8Array(
        await (
          await omni.client.audio.speech.create({
            model: 'omni-narrow',
            voice: 'alloy',
            input: 'hello',
            response_format: 'wav',
          })
        ).arrayBuffer(),
      ),
    );
    const after = await Scrape.of(omni.server);
    const d = (name: string, labels: Record<string, string>): number => delta(before, after, name, labels);
    expect(refused).to.be.instanceOf(OpenAI.APIError);
    const e = refused as InstanceType<typeof OpenAI.APIError>;
    expect([e.status, e.message]).to.deep.equal([
      400,
      "400 code2wav rejected the request: codec token 195 is outside the vocoder's vocabulary (0..127)",
    ]);
    expect({
      skipped: d('ts_omni_audio_skipped_requests_total', { ...AUDIO, reason: 'invalid_codec_token' }),
      error: d('ts_omni_requests_success_total', { ...M, finished_reason: 'error' }),
      stop: d('ts_omni_requests_success_total', { ...M, finished_reason: 'stop' }),
      frames: d('ts_omni_audio_frames_total', AUDIO),
      okFrames: ok.frames,
    }).to.deep.equal({ skipped: 1, error: 1, stop: 1, frames: 5 * 960, okFrames: 5 * 960 });
  });

  it('should answer 503 naming the full stage while a spoken stream holds it, count it, and speak again once it ended', async () => {
    const before = await Scrape.of(omni.server);
    const stream = await omni.client.chat.completions.create(
      spoken('omni-narrow', 'hold', 900, 'pcm16', true) as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    const it = stream[Symbol.asyncIterator]();
    await it.next(); // the role chunk: the run holds a thinker engine and a code2wav replica
    const refused = await omni.client.audio.speech
      .create({ model: 'omni-narrow', voice: 'alloy', input: 'hi', response_format: 'wav' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    stream.controller.abort();
    const pending = async (): Promise<number> => {
      const r = await fetch(`${omni.server.management}/models/omni-narrow`);
      return ((await r.json()) as { jobQueueStatus: { pendingRequests: number } }[])[0]!.jobQueueStatus.pendingRequests;
    };
    await until(async () => (await pending()) === 0, { message: 'the aborted stream left the pipeline' });
    const again = decodeWav(
      new Uint8Array(
        await (
          await omni.client.audio.speech.create({
            model: 'omni-narrow',
            voice: 'alloy',
            input: 'hi',
            response_format: 'wav',
          })
        ).arrayBuffer(),
      ),
    );
    const e = refused as InstanceType<typeof OpenAI.APIError>;
    const counted = delta(before, await Scrape.of(omni.server), 'tsserve_requests_refused_total', {
      model_name: 'omni-narrow',
      reason: 'queue_full',
    });
    expect([refused instanceof OpenAI.APIError, e.status, e.message, again.frames, counted]).to.deep.equal([
      true,
      503,
      '503 model omni-narrow: stage code2wav has 1 request in flight on its least loaded replica, the most one holds (--job-queue-size 1); retry later',
      2 * 960,
      1,
    ]);
  });
});
