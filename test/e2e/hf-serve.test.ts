import { expect } from 'chai';
import type OpenAI from 'openai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHfBase } from '../../frontend/store/hf-model-dir.js';
import { modelVocab } from '../../frontend/generation/model-vocab.js';
import { writeHfDir } from '../../tools/models/hf-dir.js';
import { greedyFile } from '../../tools/models/hf-greedy.js';
import { openaiClient } from './generation-helpers.js';
import type { Tsserve } from './harness.js';
import { startTsserve, tempDir } from './harness.js';

/** Token-id prompts (the export's byte tokenizer: ids are bytes). */
const PROMPTS = [
  [72, 101, 108, 108, 111],
  [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
];
const MAX_TOKENS = 9;

describe('tsserve serve DIR (a Hugging Face export with no model-config.yaml)', function () {
  this.timeout(120_000);
  let store: string;
  let server: Tsserve;
  let client: OpenAI;
  /** The direct onnxruntime greedy loop's tokens of each prompt, as logprobs name them. */
  let expected: string[][];

  before(async () => {
    store = join(tempDir('hf-serve'), 'store');
    // generation_config.json makes greedy the default: the requests below send no temperature.
    const { onnxFile } = writeHfDir(join(store, 'llama-gqa'), {
      generationConfig: { bos_token_id: 256, eos_token_id: 256, temperature: 0 },
    });
    const bad = join(store, 'broken');
    writeHfDir(bad, {});
    writeFileSync(join(bad, 'config.json'), JSON.stringify({ vocab_size: 260, num_attention_heads: 4 }));
    const hf = await readHfBase(store, join(store, 'llama-gqa'));
    if (!hf.ok) throw new Error(hf.problems.join('\n'));
    const vocab = modelVocab(hf.base.engine);
    expected = [];
    for (const p of PROMPTS) {
      const ids = (await greedyFile(onnxFile, 2, [p], MAX_TOKENS)).tokens[0]!;
      expected.push(ids.map((id) => vocab.tokenText(id)));
    }
    server = await startTsserve({ store, command: ['serve', join(store, 'llama-gqa')] });
    client = openaiClient(server);
  });

  after(async () => {
    await server?.stop();
  });

  it("should list the directory's model with max_model_len from max_position_embeddings", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => [m.id, (m as unknown as { max_model_len: number }).max_model_len])).to.deep.equal([
      ['llama-gqa', 256],
    ]);
  });

  it('should complete through the openai client with the direct greedy loop tokens (generation_config temperature 0)', async () => {
    for (const [i, prompt] of PROMPTS.entries()) {
      const r = await client.completions.create({
        model: 'llama-gqa',
        prompt,
        max_tokens: MAX_TOKENS,
        logprobs: 0,
        ignore_eos: true,
      } as OpenAI.CompletionCreateParamsNonStreaming);
      expect(r.choices[0]!.logprobs!.tokens).to.deep.equal(expected[i]);
      expect(r.usage!.completion_tokens).to.equal(MAX_TOKENS);
      expect(r.usage!.prompt_tokens).to.equal(prompt.length);
    }
  });

  it('should register the export over HTTP from inside the store, with no model-config.yaml', async () => {
    const res = await fetch(`${server.management}/models?url=llama-gqa&model_name=again`, { method: 'POST' });
    expect([res.status, await res.json()]).to.deep.equal([
      200,
      { status: 'Model "again" Version: 1.0 registered with 1 initial workers' },
    ]);
    const r = await client.completions.create({
      model: 'again',
      prompt: PROMPTS[1]!,
      max_tokens: MAX_TOKENS,
      logprobs: 0,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(r.choices[0]!.logprobs!.tokens).to.deep.equal(expected[1]);
    expect((await fetch(`${server.management}/models/again`, { method: 'DELETE' })).status).to.equal(200);
  });

  it('should refuse a broken directory registered over HTTP with every problem, and keep serving', async () => {
    const res = await fetch(`${server.management}/models?url=broken`, { method: 'POST' });
    const body = (await res.json()) as { code: number; message: string };
    expect([res.status, body.message]).to.deep.equal([
      400,
      [
        'invalid model config for broken:',
        'config.json: num_hidden_layers: required (a positive integer)',
        'config.json: head_dim: required when hidden_size is absent (a positive integer)',
        'config.json: max_position_embeddings: required (a positive integer)',
        "config.json: num_attention_heads: 4 K/V heads, but onnx/model.onnx's past has 2",
      ].join('\n  '),
    ]);
    const outside = await fetch(`${server.management}/models?url=${encodeURIComponent('../../etc')}`, {
      method: 'POST',
    });
    expect([outside.status, ((await outside.json()) as { message: string }).message]).to.deep.equal([
      400,
      "path '../../etc' must not contain '..'",
    ]);
    const r = await client.completions.create({
      model: 'llama-gqa',
      prompt: PROMPTS[0]!,
      max_tokens: MAX_TOKENS,
      logprobs: 0,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(r.choices[0]!.logprobs!.tokens).to.deep.equal(expected[0]);
  });
});
