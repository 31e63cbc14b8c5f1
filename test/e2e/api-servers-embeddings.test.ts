/**
 * `/v1/embeddings` through the front processes (`--api-server-count 2`) on the real server with
 * the `tiny-embed` demo encoder: a front tokenizes with the model's own tokenizer and relays each
 * input to the primary's workers; the answer equals (1e-5) a direct onnxruntime-node run of the
 * same graph on the library's token ids, usage counts the exact tokens, and the route's families
 * (recorded in the front, shipped to the primary) count each request exactly once.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from '@huggingface/tokenizers';
import { delta, openaiClient, Scrape } from './generation-helpers.js';
import { generateStore, removeStores, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

interface LibTokenizer {
  encode(text: string): { ids: number[] };
}

describe('/v1/embeddings through the front processes (--api-server-count 2, tiny-embed)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  let session: ort.InferenceSession;
  let tokenizer: LibTokenizer;

  before(async () => {
    const store = generateStore(['tiny-embed']);
    const dir = path.join(store, 'tiny-embed');
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8')) as object;
    tokenizer = new (Tokenizer as unknown as new (j: object, c: object) => LibTokenizer)(json, {});
    session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'));
    server = await startTsserve({
      store,
      args: ['--api-server-count', '2', '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
  });

  after(async () => {
    await server?.stop('SIGTERM');
    await session?.release();
    removeStores();
  });

  /** Direct onnxruntime on one input's ids ([1, T]), mean over its tokens, L2-normalized (tiny-embed's pooling). */
  async function reference(ids: readonly number[]): Promise<number[]> {
    const t = ids.length;
    const i64 = (f: (k: number) => number): ort.Tensor =>
      new ort.Tensor(
        'int64',
        BigInt64Array.from({ length: t }, (_, k) => BigInt(f(k))),
        [1, t],
      );
    const out = await session.run({
      input_ids: i64((k) => ids[k]!),
      attention_mask: i64(() => 1),
      token_type_ids: i64(() => 0),
    });
    const h = out['last_hidden_state']!;
    const size = h.dims[2]!;
    const data = h.data as Float32Array;
    const mean = Array.from({ length: size }, (_, j) => {
      let s = 0;
      for (let k = 0; k < t; k++) s += data[k * size + j]!;
      return s / t;
    });
    const norm = Math.sqrt(mean.reduce((a, v) => a + v * v, 0));
    return mean.map((v) => v / norm);
  }

  const TEXTS = ['Hello world', 'The cat sat on the red house!'];

  it('should answer through a front as the direct run pooled and normalized, with the exact usage, counted once in each family', async () => {
    const before = await Scrape.of(server);
    const client = openaiClient(server);
    const r = await client.embeddings.create({ model: 'tiny-embed', input: TEXTS, encoding_format: 'float' });
    const ids = TEXTS.map((t) => tokenizer.encode(t).ids);
    for (let i = 0; i < TEXTS.length; i++) {
      const want = await reference(ids[i]!);
      expect(r.data[i]!.embedding.length).to.equal(want.length);
      r.data[i]!.embedding.forEach((v, j) => expect(v, `input ${i} element ${j}`).to.be.closeTo(want[j]!, 1e-5));
    }
    const tokens = ids.reduce((n, x) => n + x.length, 0);
    expect(r.usage).to.deep.equal({ prompt_tokens: tokens, total_tokens: tokens });
    const ids2 = await client.embeddings.create({ model: 'tiny-embed', input: [2, 3], encoding_format: 'float' });
    expect(ids2.usage.prompt_tokens).to.equal(2);
    // The fronts ship their datapoints to the primary on their flush: wait for both requests' latency.
    const m = { model_name: 'tiny-embed' };
    const after = await until(
      async () => {
        const s = await Scrape.of(server);
        return delta(before, s, 'ts_embedding_request_latency_seconds_count', m) >= 2 ? s : null;
      },
      { message: "the fronts' embedding datapoints at the primary" },
    );
    expect({
      requests: delta(before, after, 'ts_embedding_requests_total', m),
      tokens: delta(before, after, 'ts_embedding_prompt_tokens_total', m),
      latencies: delta(before, after, 'ts_embedding_request_latency_seconds_count', m),
      inference: delta(before, after, 'ts_inference_requests_total', { ...m, model_version: 'default' }),
    }).to.deep.equal({ requests: 2, tokens: tokens + 2, latencies: 2, inference: 2 });
  });

  it('should list the model on /v1/models of a front, refuse completions naming its route, and a bad input with the exact OpenAI error', async () => {
    const models = (await (await fetch(`${server.inference}/v1/models`)).json()) as { data: object[] };
    expect(models.data.map((m) => ({ ...m, created: 0 }))).to.deep.equal([
      {
        id: 'tiny-embed',
        object: 'model',
        created: 0,
        owned_by: 'tsserve',
        root: 'tiny-embed',
        parent: null,
        max_model_len: 128,
      },
    ]);
    const post = async (route: string, body: object): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${server.inference}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as unknown };
    };
    const bad = (message: string): object => ({
      error: { message, type: 'invalid_request_error', param: 'model', code: null },
    });
    expect(await post('/v1/completions', { model: 'tiny-embed', prompt: 'hi' })).to.deep.equal({
      status: 400,
      body: bad('The model `tiny-embed` answers /v1/embeddings only.'),
    });
    expect(await post('/v1/embeddings', { model: 'tiny-embed', input: '' })).to.deep.equal({
      status: 400,
      body: {
        error: {
          message:
            "'input' must be a non-empty string, a list of non-empty strings, a list of token ids, or a list of such lists",
          type: 'invalid_request_error',
          param: 'input',
          code: null,
        },
      },
    });
  });
});
