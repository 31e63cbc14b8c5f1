/**
 * n-gram speculative decoding end to end: a REAL `tsserve start` serving tiny-lm with and
 * without `speculative_config`, the official `openai` client, the spec-decode families on
 * /metrics compared exactly with an in-process engine run of the same prompt, and the
 * SpecDecoding stat line in the server log.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type OpenAI from 'openai';
import { loadEngine, readModelDir } from '../../backend/engine/load.js';
import { configArgs } from './config-args.js';
import { delta, openaiClient, Scrape, tinyLmVariants } from './generation-helpers.js';
import type { VllmExtras } from './generation-helpers.js';
import { removeStores, startTsserve, tempDir } from './harness.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';

type CompletionBody = OpenAI.Completions.CompletionCreateParamsNonStreaming & VllmExtras;

const SPEC = { method: 'ngram', num_speculative_tokens: 4, prompt_lookup_max: 3, prompt_lookup_min: 1 };

describe('speculative decoding (real tsserve start, tiny-lm, openai client)', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  let server: Tsserve;
  let client: OpenAI;
  const L = { model_name: 'tiny-spec', engine: '0' };

  before(async () => {
    dir = tempDir('spec');
    store = tinyLmVariants(path.join(dir, 'store'), { 'tiny-lm': {}, 'tiny-spec': { speculative_config: SPEC } });
    fs.mkdirSync(path.join(dir, 'logs'));
    server = await startTsserve({
      store,
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics', '--log-stats-interval', '1'],
      logDir: path.join(dir, 'logs'),
    });
    client = openaiClient(server);
  });

  after(() => {
    server?.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it("should answer with the plain model's greedy text and count drafts exactly as the engine run offline does", async () => {
    // A prompt whose greedy continuation is mostly a cycle: "qld z" and its own first 80 tokens.
    const seed = await client.completions.create({
      model: 'tiny-lm',
      prompt: 'qld z',
      max_tokens: 80,
      temperature: 0,
      ignore_eos: true,
    } as CompletionBody);
    const head = seed.choices[0]!.text;
    expect(Buffer.byteLength(head), 'one ASCII byte per token').to.equal(80);
    const prompt = `qld z${head}`;
    const body = { prompt, max_tokens: 48, temperature: 0, ignore_eos: true };
    const before = await Scrape.of(server);
    const plain = await client.completions.create({ model: 'tiny-lm', ...body } as CompletionBody);
    const spec = await client.completions.create({ model: 'tiny-spec', ...body } as CompletionBody);
    expect(spec.choices[0]!.text).to.equal(plain.choices[0]!.text);
    expect(spec.usage!.completion_tokens).to.equal(48);
    // Stats ride on every step, and the last one of an idle engine always carries them.
    let after = await Scrape.of(server);
    await until(
      async () => {
        after = await Scrape.of(server);
        return (
          delta(before, after, 'ts_generation_tokens_total', L) === 48 && after.get('ts_num_requests_running', L) === 0
        );
      },
      {
        message: "the spec engine's stats after the request",
        observe: () => after.get('ts_generation_tokens_total', L),
      },
    );

    // The same prompt through an engine of the same model and settings, in this process.
    const m = await readModelDir(path.join(store, 'tiny-spec'));
    const e = await loadEngine({ dir: path.join(store, 'tiny-spec'), modelFile: m.modelFile, engine: m.engine });
    e.addRequest('r', prompt, body);
    const want = { numDrafts: 0, numDraftTokens: 0, numAcceptedTokens: 0, perPos: [0, 0, 0, 0] };
    while (e.hasWork()) {
      const d = (await e.step()).stats?.specDecoding;
      if (d === undefined) continue;
      want.numDrafts += d.numDrafts;
      want.numDraftTokens += d.numDraftTokens;
      want.numAcceptedTokens += d.numAcceptedTokens;
      d.numAcceptedTokensPerPos.forEach((n, i) => (want.perPos[i]! += n));
    }
    await e.runner.close();
    expect(want.numAcceptedTokens).to.be.greaterThan(0);
    expect({
      numDrafts: delta(before, after, 'ts_spec_decode_num_drafts_total', L),
      numDraftTokens: delta(before, after, 'ts_spec_decode_num_draft_tokens_total', L),
      numAcceptedTokens: delta(before, after, 'ts_spec_decode_num_accepted_tokens_total', L),
      perPos: [0, 1, 2, 3].map((p) =>
        delta(before, after, 'ts_spec_decode_num_accepted_tokens_per_pos_total', { ...L, position: String(p) }),
      ),
    }).to.deep.equal(want);
    expect(want.perPos.reduce((a, b) => a + b, 0)).to.equal(want.numAcceptedTokens);
    // The plain engine has no spec series at all.
    expect(after.has('ts_spec_decode_num_drafts_total', { model_name: 'tiny-lm' })).to.equal(false);
  });

  it("should log vLLM's SpecDecoding line for the speculating engine (--log-stats-interval 1)", async () => {
    const line =
      /"msg":"\[tiny-spec\] Engine 000: SpecDecoding metrics: Mean acceptance length: \d+\.\d\d, Accepted throughput: \d+\.\d\d tokens\/s, Drafted throughput: \d+\.\d\d tokens\/s, Accepted: \d+ tokens, Drafted: [1-9]\d* tokens, Per-position acceptance rate: \d\.\d{3}, \d\.\d{3}, \d\.\d{3}, \d\.\d{3}, Avg Draft acceptance rate: \d+\.\d%"/;
    await client.completions.create({
      model: 'tiny-spec',
      prompt: 'abababababababab',
      max_tokens: 16,
      temperature: 0,
      ignore_eos: true,
    } as CompletionBody);
    await until(() => line.test(server.output()), {
      message: 'a SpecDecoding line for tiny-spec',
      observe: () =>
        server
          .output()
          .split('\n')
          .filter((l) => l.includes('[tiny-spec]'))
          .slice(-3),
    });
  });
});
