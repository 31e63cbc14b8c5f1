/**
 * TorchServe's per-model families on every door: a REAL `tsserve start` serving mlp, tiny-lm,
 * tiny-embed and the tiny-omni pipeline takes requests on /predictions, the Open Inference
 * Protocol, /v1/completions (streamed, and with two prompts: one request), /v1/chat/completions,
 * /v1/embeddings and a spoken pipeline chat; `ts_inference_requests_total` counts each HTTP
 * request once on its model, and the latency counters move for every model that took one.
 */
import { expect } from 'chai';
import type OpenAI from 'openai';
import { Scrape, delta, openaiClient } from './generation-helpers.js';
import { generateStore, mlpInput, post, removeStores, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';
import { spoken } from './pipeline-helpers.js';

const INFER = 'ts_inference_requests_total';
const LATENCY = 'ts_inference_latency_microseconds';
const MODELS = ['mlp', 'tiny-lm', 'tiny-embed', 'tiny-omni'] as const;

describe('ts_inference_requests_total on every door (real tsserve start)', function () {
  this.timeout(180_000);
  let store: string;
  let server: Tsserve;
  let client: OpenAI;

  before(async () => {
    store = generateStore(['mlp', 'tiny-lm', 'tiny-embed', 'tiny-vocoder', 'tiny-omni']);
    server = await startTsserve({ store, args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'] });
    client = openaiClient(server);
  });

  after(async () => {
    await server?.stop('SIGTERM');
    removeStores();
  });

  it('should count 3 mlp, 3 tiny-lm, 1 tiny-embed and 1 tiny-omni request, each once, whatever door took it', async () => {
    const before = await Scrape.of(server);
    const predictions = await Promise.all(
      [1, 2].map((seed) => post(`${server.inference}/predictions/mlp`, mlpInput(seed))),
    );
    const oip = await post(`${server.inference}/v2/models/mlp/infer`, {
      inputs: [{ name: 'input', shape: [1, 784], datatype: 'FP32', data: mlpInput(3) }],
    });
    const plain = await client.completions.create({
      model: 'tiny-lm',
      prompt: ['first prompt', 'second prompt'],
      max_tokens: 3,
      temperature: 0,
    });
    const streamed = await client.completions.create({
      model: 'tiny-lm',
      prompt: 'streamed',
      max_tokens: 3,
      temperature: 0,
      stream: true,
    });
    let chunks = 0;
    for await (const c of streamed) chunks += c.choices.length;
    const chat = await client.chat.completions.create({
      model: 'tiny-lm',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
      temperature: 0,
    });
    const embeddings = await client.embeddings.create({ model: 'tiny-embed', input: ['one', 'two'] });
    const speech = await client.chat.completions.create(
      spoken('tiny-omni', 'say it', 4, 'wav', false) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    );
    expect([...predictions.map((p) => p.status), oip.status]).to.deep.equal([200, 200, 200]);
    expect([plain.choices.length, chunks > 0, chat.choices.length, embeddings.data.length]).to.deep.equal([
      2,
      true,
      1,
      2,
    ]);
    expect(speech.choices[0]!.message.audio?.data.length).to.be.above(0);
    const after = await Scrape.of(server);
    const counts = MODELS.map((m) => delta(before, after, INFER, { model_name: m, model_version: 'default' }));
    expect(counts).to.deep.equal([3, 3, 1, 1]);
    // Every model's latency counter moved: a real duration for each door.
    for (const m of MODELS) expect(delta(before, after, LATENCY, { model_name: m }), m).to.be.above(0);
  });

  it('should not count a request refused before it reaches the model (an unknown model, a prompt too long)', async () => {
    const before = await Scrape.of(server);
    const unknown = await post(`${server.inference}/v1/completions`, { model: 'nope', prompt: 'x', max_tokens: 1 });
    const tooLong = await post(`${server.inference}/v1/completions`, {
      model: 'tiny-lm',
      prompt: 'x',
      max_tokens: 1_000_000,
    });
    expect([unknown.status, tooLong.status]).to.deep.equal([404, 400]);
    const after = await Scrape.of(server);
    expect(delta(before, after, INFER, { model_name: 'tiny-lm' })).to.equal(0);
  });
});
