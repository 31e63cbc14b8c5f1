/**
 * `tsserve generate` against the real server: the same body as an input line and as a
 * `/v1/completions` request gives the same tokens (temperature 0, or a seed), with every sampling
 * field the server takes (the CLI dropped all but ten of them, so their outputs differed).
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, generateStore, post, removeStores, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

/** Bodies a user sends both ways, each changing the output in its own way. */
const BODIES: readonly Readonly<Record<string, unknown>>[] = [
  { prompt: 'Hello', max_tokens: 8, temperature: 0 },
  { prompt: 'The', max_tokens: 5, seed: 3, n: 2 },
  { prompt: 'Hello', max_tokens: 12, temperature: 0, frequency_penalty: 2 },
  {
    prompt: 'Hello',
    max_tokens: 12,
    temperature: 0.7,
    seed: 5,
    presence_penalty: 1.5,
    repetition_penalty: 1.3,
    top_k: 5,
  },
  { prompt: 'Hello', max_tokens: 12, temperature: 0, logit_bias: { 122: -100 } },
  { prompt: 'Hello', max_tokens: 4, temperature: 0, logprobs: 2 },
  { prompt: 'Hello', max_tokens: 4, temperature: 0, echo: true },
  { prompt: [72, 105], max_tokens: 6, seed: 11, min_p: 0.1, top_p: 0.9 },
  { prompt: 'Hello', max_tokens: 8, temperature: 0, stop: ['d'], include_stop_str_in_output: true },
  { prompt: 'Hello', temperature: 0 },
];

interface Choice {
  readonly text: string;
  readonly logprobs?: unknown;
  readonly finish_reason: string;
}

describe('tsserve generate against the server', function () {
  this.timeout(120_000);
  let dir: string;
  let server: Tsserve | undefined;

  before(async () => {
    dir = tempDir('offline-generate');
    server = await startTsserve({
      store: generateStore(['tiny-lm']),
      args: ['--models', 'tiny-lm=tiny-lm', '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
  });

  after(() => {
    server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it('should answer each line with the tokens /v1/completions answers for the same body', async () => {
    const online: Choice[][] = [];
    for (const body of BODIES) {
      const r = await post(`${server!.inference}/v1/completions`, { model: 'tiny-lm', ...body });
      expect(r.status, JSON.stringify(r.json)).to.equal(200);
      online.push(
        (r.json as { choices: Choice[] }).choices.map((c) => ({
          text: c.text,
          finish_reason: c.finish_reason,
          ...(c.logprobs !== null ? { logprobs: c.logprobs } : {}),
        })),
      );
    }
    const input = path.join(dir, 'in.jsonl');
    fs.writeFileSync(input, BODIES.map((b) => JSON.stringify(b)).join('\n'));
    const r = spawnSync(
      process.execPath,
      [CLI, 'generate', '--model', path.join(generateStore(['tiny-lm']), 'tiny-lm'), '--input', input],
      { encoding: 'utf8' },
    );
    expect([r.status, r.stderr]).to.deep.equal([0, '']);
    const offline = r.stdout
      .trim()
      .split('\n')
      .map((l) =>
        (JSON.parse(l) as { choices: Choice[] }).choices.map((c) => ({
          text: c.text,
          finish_reason: c.finish_reason,
          ...(c.logprobs !== undefined ? { logprobs: c.logprobs } : {}),
        })),
      );
    expect(offline).to.deep.equal(online);
  });
});
