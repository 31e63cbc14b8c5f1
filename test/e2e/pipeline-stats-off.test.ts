/**
 * `--disable-log-stats` end to end: the same spoken request against a REAL server with stats on
 * and with them off. Off, no pipeline, audio, transfer or engine sample is rendered (the records
 * are no-ops chosen at construction) and /metrics shrinks to the serving families; on, every
 * pipeline family also reaches the tslog sink.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type OpenAI from 'openai';
import { configArgs } from './config-args.js';
import { openaiClient } from './generation-helpers.js';
import { removeStores, scrape, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { omniStore } from './pipeline-helpers.js';

const BODY = {
  model: 'tiny-omni',
  messages: [{ role: 'user', content: 'count me' }],
  max_tokens: 6,
  temperature: 0,
  modalities: ['text', 'audio'],
  audio: { voice: 'alloy', format: 'wav' },
  ignore_eos: true,
} as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

/** Sample lines (not comments) of an exposition whose name starts with one of `prefixes` or that carry `label=`. */
function samples(text: string, match: (line: string) => boolean): string[] {
  return text.split('\n').filter((l) => l !== '' && !l.startsWith('#') && match(l));
}

describe('--disable-log-stats (real tsserve start, tiny-omni)', function () {
  this.timeout(180_000);
  let dir: string;
  const servers: Tsserve[] = [];

  before(() => {
    dir = tempDir('omni-off');
    omniStore(path.join(dir, 'store'), {});
  });

  after(() => {
    for (const s of servers) s.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  async function run(extra: readonly string[]): Promise<{ text: string; server: Tsserve }> {
    const server = await startTsserve({
      store: path.join(dir, 'store'),
      args: [
        ...configArgs(),
        '--metrics-mode',
        'tslog,prometheus',
        '--disable-system-metrics',
        '--models',
        'tiny-omni=tiny-omni',
        ...extra,
      ],
    });
    servers.push(server);
    const r = await openaiClient(server).chat.completions.create(BODY);
    expect(r.choices[0]!.finish_reason).to.equal('length');
    return { text: await scrape(server), server };
  }

  it('should render no pipeline, audio, transfer or engine sample with the flag, and all of them without', async () => {
    const stats = (l: string): boolean => l.startsWith('ts_omni_') || l.includes('stage="thinker"');
    const on = await run([]);
    const off = await run(['--disable-log-stats']);
    const onLines = on.text.split('\n').length;
    const offLines = off.text.split('\n').length;
    expect(samples(off.text, stats)).to.deep.equal([]);
    expect(samples(on.text, (l) => l.startsWith('ts_omni_requests_success_total{'))).to.deep.equal([
      'ts_omni_requests_success_total{model_name="tiny-omni",finished_reason="stop"} 0',
      'ts_omni_requests_success_total{model_name="tiny-omni",finished_reason="length"} 1',
      'ts_omni_requests_success_total{model_name="tiny-omni",finished_reason="abort"} 0',
      'ts_omni_requests_success_total{model_name="tiny-omni",finished_reason="error"} 0',
    ]);
    // Serving families stay.
    expect(samples(off.text, (l) => l.startsWith('http_requests_total{'))).to.not.deep.equal([]);
    // The line counts docs/pipelines.md states.
    process.stdout.write(`      /metrics lines: stats on ${onLines}, off ${offLines}\n`);
    expect(offLines).to.be.below(onLines);
    // On: the pipeline families reach the tslog sink too.
    await on.server.stop();
    const log = fs.readFileSync(path.join(on.server.logDir, 'ts_metrics.log'), 'utf8');
    expect(log).to.match(
      / - ts_omni_audio_frames_total\.Frames:5760\.0\|#model_name:tiny-omni,stage:code2wav,replica:0\|#hostname:/,
    );
    expect(log).to.match(
      / - ts_generation_tokens_total\.Tokens:1\.0\|#model_name:tiny-omni,stage:thinker,replica:0\|#hostname:/,
    );
  });
});
