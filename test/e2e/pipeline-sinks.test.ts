/**
 * Issue 12's "every family renders in every sink" for the pipeline's own families: a server
 * with tiny-omni and all three sinks (StatsD to the real `statsd` daemon) answers one streamed
 * pcm16 and one whole WAV spoken request through the official client; then every `ts_omni_*`
 * family of metrics.yaml is looked for in /metrics, in ts_metrics.log and in the daemon's
 * lines, and the frames counter sums to the frames the client got, in each sink.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type OpenAI from 'openai';
import { defaultMetricsConfigPath, loadMetricsConfig } from '../../schema/config.js';
import { openaiClient } from './generation-helpers.js';
import { removeStores, scrape, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { decodeWav, omniStore } from './pipeline-helpers.js';
import { startStatsd } from './statsd-daemon.js';
import type { StatsdDaemon } from './statsd-daemon.js';
import { until } from '../support/until.js';

/** Families no ordinary request records, with why (each is covered where it can be recorded). */
const NOT_RECORDED: Readonly<Record<string, string>> = {
  ts_omni_audio_skipped_requests_total:
    'only a vocoder rejection records it (pipeline-skipped.test.ts, backend/vocoder unit test)',
};

describe('pipeline families in every sink (real tsserve start, tiny-omni, statsd daemon)', function () {
  this.timeout(180_000);
  let dir: string;
  let logDir: string;
  let server: Tsserve;
  let statsd: StatsdDaemon;
  let client: OpenAI;

  before(async () => {
    dir = tempDir('omni-sinks');
    logDir = path.join(dir, 'logs');
    fs.mkdirSync(logDir);
    statsd = await startStatsd();
    server = await startTsserve({
      store: omniStore(path.join(dir, 'store'), {}),
      logDir,
      args: [
        '--metrics-mode',
        'tslog,prometheus,statsd',
        '--statsd-address',
        `127.0.0.1:${statsd.port}`,
        '--disable-system-metrics',
        '--models',
        'tiny-omni=tiny-omni',
      ],
    });
    client = openaiClient(server);
  });

  after(() => {
    server?.kill();
    statsd?.stop();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it('should render every ts_omni_* family in prometheus, tslog and statsd, with the frames the client got in each', async () => {
    const body = (stream: boolean, format: 'wav' | 'pcm16'): OpenAI.Chat.ChatCompletionCreateParams =>
      ({
        model: 'tiny-omni',
        messages: [{ role: 'user', content: `sinks ${format}` }],
        max_tokens: 10,
        temperature: 0,
        stream,
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format },
        ...({ ignore_eos: true } as object),
      }) as OpenAI.Chat.ChatCompletionCreateParams;
    let pcmBytes = 0;
    const stream = await client.chat.completions.create(
      body(true, 'pcm16') as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    for await (const c of stream) {
      const data = (c.choices[0]?.delta as { audio?: { data?: string } } | undefined)?.audio?.data;
      if (data !== undefined) pcmBytes += Buffer.from(data, 'base64').length;
    }
    const whole = await client.chat.completions.create(
      body(false, 'wav') as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    );
    const frames = pcmBytes / 2 + decodeWav(Buffer.from(whole.choices[0]!.message.audio!.data, 'base64')).frames;

    const loaded = loadMetricsConfig(defaultMetricsConfigPath());
    if (!loaded.ok) throw new Error('the repo metrics.yaml does not load');
    const families = loaded.config.metrics
      .filter((m) => m.name.startsWith('ts_omni_') && NOT_RECORDED[m.name] === undefined)
      .map((m) => m.name);
    expect(families.length).to.equal(17);
    const tslogPath = path.join(logDir, 'ts_metrics.log');
    const tslog = (): string => (fs.existsSync(tslogPath) ? fs.readFileSync(tslogPath, 'utf8') : '');
    const sum = (lines: readonly string[], re: RegExp): number =>
      lines.reduce((s, l) => s + Number(re.exec(l)?.[1] ?? 0), 0);
    const statsdFrames = (): number => sum(statsd.lines, /^ts_omni_audio_frames_total:(\d+)\|c\|/);
    const tslogFrames = (): number => sum(tslog().split('\n'), / - ts_omni_audio_frames_total\.\w+:(\d+)\.0\|/);
    // The sinks flush on their own timers (statsd 100 ms, tslog 200 ms).
    await until(() => (statsdFrames() === frames && tslogFrames() === frames ? true : null), {
      message: 'the frames in statsd and tslog',
      observe: () => [frames, statsdFrames(), tslogFrames()],
    });
    await until(
      () =>
        families.every((n) => statsd.lines.some((l) => l.startsWith(`${n}:`)) && tslog().includes(` - ${n}.`))
          ? true
          : null,
      {
        message: 'a line of every family in statsd and tslog',
        observe: () =>
          families.filter((n) => !statsd.lines.some((l) => l.startsWith(`${n}:`)) || !tslog().includes(` - ${n}.`)),
      },
    );
    const text = await scrape(server);
    const missing = families.filter((n) => !new RegExp(`^${n}(_bucket|_sum|_count)?\\{`, 'm').test(text));
    const promFrames = sum(text.split('\n'), /^ts_omni_audio_frames_total\{[^}]*\} (\d+)$/);
    expect({ missing, promFrames, frames }).to.deep.equal({ missing: [], promFrames: frames, frames: 10 * 960 * 2 });
  });
});
