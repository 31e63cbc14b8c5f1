/**
 * `POST /v1/embeddings` against the REAL server with the `tiny-embed` demo encoder, through the
 * official `openai` client: each embedding equals (1e-5) a direct onnxruntime-node run of the
 * same graph on the library's own token ids, mean-pooled and L2-normalized here; usage counts the
 * exact tokens; base64 decodes to the same floats; concurrent requests (batched and padded in one
 * run) equal single ones; bad inputs get OpenAI-shaped 4xx with exact messages and the worker
 * that answers next is the same process; the model is listed by /v1/models and refused by the
 * other routes with a message naming /v1/embeddings; its three families count exactly.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from '@huggingface/tokenizers';
import { tinyEmbedVocab } from '../../tools/models/tiny-embed.js';
import { delta, openaiClient, Scrape } from './generation-helpers.js';
import { generateStore, removeStores, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

interface LibTokenizer {
  encode(text: string): { ids: number[] };
}

describe('/v1/embeddings with tiny-embed (real tsserve start, real onnxruntime, openai client)', function () {
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
    server = await startTsserve({ store, args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'] });
  });

  after(async () => {
    await server?.stop('SIGTERM');
    await session?.release();
    removeStores();
  });

  /** Direct onnxruntime on one input's ids ([1, T]), mean over its tokens, L2-normalized. */
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

  function expectClose(got: readonly number[], want: readonly number[]): void {
    expect(got.length).to.equal(want.length);
    got.forEach((v, j) => expect(v, `element ${j}`).to.be.closeTo(want[j]!, 1e-5));
  }

  async function post(body: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${server.inference}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as unknown };
  }

  async function workerPid(): Promise<number> {
    const [d] = (await (await fetch(`${server.management}/models/tiny-embed`)).json()) as [
      { workers: { pid: number }[] },
    ];
    return d.workers[0]!.pid;
  }

  const TEXTS = ['Hello world', 'The cat sat on the red house!', 'Embedding servers serve vectors fast.'];

  it('should answer each string input with the direct run pooled and normalized, and usage with the exact token count', async () => {
    const r = await openaiClient(server).embeddings.create({
      model: 'tiny-embed',
      input: TEXTS,
      encoding_format: 'float',
    });
    const ids = TEXTS.map((t) => tokenizer.encode(t).ids);
    expect(r.model).to.equal('tiny-embed');
    expect(r.object).to.equal('list');
    expect(r.data.map((d) => d.index)).to.deep.equal([0, 1, 2]);
    for (let i = 0; i < TEXTS.length; i++) expectClose(r.data[i]!.embedding, await reference(ids[i]!));
    const tokens = ids.reduce((n, x) => n + x.length, 0);
    expect(r.usage).to.deep.equal({ prompt_tokens: tokens, total_tokens: tokens });
  });

  it('should send base64 (the client default) that decodes to the very floats of encoding_format float', async () => {
    const client = openaiClient(server);
    const asFloat = await client.embeddings.create({ model: 'tiny-embed', input: TEXTS[1]!, encoding_format: 'float' });
    const asDefault = await client.embeddings.create({ model: 'tiny-embed', input: TEXTS[1]! });
    expect(asDefault.data[0]!.embedding).to.deep.equal(asFloat.data[0]!.embedding);
  });

  it('should take token ids as they are: a list of ids is one input, a list of lists several', async () => {
    const a = [2, 131, 132, 3];
    const b = [2, 163, 94, 5, 3];
    const one = await openaiClient(server).embeddings.create({
      model: 'tiny-embed',
      input: a,
      encoding_format: 'float',
    });
    expectClose(one.data[0]!.embedding, await reference(a));
    expect(one.usage.prompt_tokens).to.equal(4);
    const two = await openaiClient(server).embeddings.create({
      model: 'tiny-embed',
      input: [a, b],
      encoding_format: 'float',
    });
    expectClose(two.data[1]!.embedding, await reference(b));
    expect(two.usage.prompt_tokens).to.equal(9);
  });

  it('should answer concurrent inputs of different lengths (batched and padded together) as the direct single runs', async () => {
    const texts = ['a', 'the dog', 'one two three four five six', 'search the document for the query text', 'tree'];
    const client = openaiClient(server);
    const all = await Promise.all(
      texts.map((t) => client.embeddings.create({ model: 'tiny-embed', input: t, encoding_format: 'float' })),
    );
    for (let i = 0; i < texts.length; i++)
      expectClose(all[i]!.data[0]!.embedding, await reference(tokenizer.encode(texts[i]!).ids));
  });

  it('should count each answered request, its exact tokens and its latency in the ts_embedding families, and in ts_inference_requests_total', async () => {
    const before = await Scrape.of(server);
    await openaiClient(server).embeddings.create({ model: 'tiny-embed', input: TEXTS, encoding_format: 'float' });
    await openaiClient(server).embeddings.create({ model: 'tiny-embed', input: [2, 3], encoding_format: 'float' });
    const after = await Scrape.of(server);
    const m = { model_name: 'tiny-embed' };
    expect(delta(before, after, 'ts_embedding_requests_total', m)).to.equal(2);
    const tokens = TEXTS.reduce((n, t) => n + tokenizer.encode(t).ids.length, 0) + 2;
    expect(delta(before, after, 'ts_embedding_prompt_tokens_total', m)).to.equal(tokens);
    expect(delta(before, after, 'ts_embedding_request_latency_seconds_count', m)).to.equal(2);
    // TorchServe's family counts them as the model's inference requests (no version named: "default").
    expect(delta(before, after, 'ts_inference_requests_total', { ...m, model_version: 'default' })).to.equal(2);
  });

  it('should refuse bad inputs with exact OpenAI errors before any reaches the worker', async () => {
    const pid = await workerPid();
    const before = await Scrape.of(server);
    const long = 'a '.repeat(200);
    const longCount = tokenizer.encode(long).ids.length;
    const bad = (message: string, param: string | null, code: string | null = null): object => ({
      error: { message, type: 'invalid_request_error', param, code },
    });
    const inputMsg =
      "'input' must be a non-empty string, a list of non-empty strings, a list of token ids, or a list of such lists";
    const cases: [unknown, number, object][] = [
      [{ model: 'tiny-embed', input: '' }, 400, bad(inputMsg, 'input')],
      [{ model: 'tiny-embed' }, 400, bad(inputMsg, 'input')],
      [{ model: 'tiny-embed', input: ['ok', 7] }, 400, bad(inputMsg, 'input')],
      [
        { model: 'tiny-embed', input: 'x', dimensions: 32 },
        400,
        bad(
          'Model "tiny-embed" does not support matryoshka representation, changing output dimensions will lead to poor results.',
          'dimensions',
        ),
      ],
      [
        { model: 'tiny-embed', input: long },
        400,
        bad(
          `This model's maximum context length is 128 tokens. However, you requested ${longCount} tokens in the input for embedding generation. Please reduce the length of the input.`,
          'input',
        ),
      ],
      [
        { model: 'tiny-embed', input: [2, 99999, 3] },
        400,
        bad(`input[1] is "99999": token ids are integers in 0..${tinyEmbedVocab().length - 1}`, 'input'),
      ],
      [
        { model: 'tiny-embed', input: 'x', encoding_format: 'fp16' },
        400,
        bad("'encoding_format' must be 'float' or 'base64', got \"fp16\"", 'encoding_format'),
      ],
      [
        { model: 'tiny-embed', input: 'x', truncate: true },
        400,
        bad("Unsupported parameter: 'truncate' is not supported by this server.", 'truncate', 'unsupported_parameter'),
      ],
      [
        { model: 'nope', input: 'x' },
        404,
        {
          error: {
            message: 'The model `nope` does not exist.',
            type: 'not_found_error',
            param: 'model',
            code: 'model_not_found',
          },
        },
      ],
    ];
    for (const [body, status, answer] of cases)
      expect(await post(body), JSON.stringify(body)).to.deep.equal({ status, body: answer });
    const after = await Scrape.of(server);
    expect(delta(before, after, 'ts_embedding_requests_total', { model_name: 'tiny-embed' })).to.equal(0);
    expect(delta(before, after, 'ts_inference_requests_total', { model_name: 'tiny-embed' })).to.equal(0);
    expect((await post({ model: 'tiny-embed', input: 'still here' })).status).to.equal(200);
    expect(await workerPid()).to.equal(pid);
  });

  it('should be listed by /v1/models and refused by completions and /predictions with the route it answers', async () => {
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
    const c = await fetch(`${server.inference}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny-embed', prompt: 'hi' }),
    });
    expect({ status: c.status, body: (await c.json()) as unknown }).to.deep.equal({
      status: 400,
      body: {
        error: {
          message: 'The model `tiny-embed` answers /v1/embeddings only.',
          type: 'invalid_request_error',
          param: 'model',
          code: null,
        },
      },
    });
    const p = await fetch(`${server.inference}/predictions/tiny-embed`, { method: 'POST', body: '[1]' });
    expect({ status: p.status, body: (await p.json()) as unknown }).to.deep.equal({
      status: 400,
      body: {
        code: 400,
        type: 'BadRequestException',
        message:
          "model tiny-embed does not serve /predictions (kind embedding); it answers on OpenAI's /v1 routes (GET /v1/models lists it)",
      },
    });
  });
});

describe('/v1/embeddings with Matryoshka dimensions and with a broken tokenizer.json (real tsserve start)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  let session: ort.InferenceSession;
  let tokenizer: LibTokenizer;

  before(async () => {
    const demo = path.join(generateStore(['tiny-embed']), 'tiny-embed');
    const store = path.join(tempDir('embed-variants'), 'store');
    for (const name of ['broken', 'mrl']) fs.cpSync(demo, path.join(store, name), { recursive: true });
    fs.writeFileSync(path.join(store, 'broken', 'tokenizer.json'), '{"model": ');
    fs.writeFileSync(
      path.join(store, 'mrl', 'model-config.yaml'),
      'handler: embedding\nmodel: model.onnx\nhandlerOptions:\n  pooling: cls\n  maxModelLen: 128\n  dimensions: [16, 32]\n',
    );
    const json = JSON.parse(fs.readFileSync(path.join(demo, 'tokenizer.json'), 'utf8')) as object;
    tokenizer = new (Tokenizer as unknown as new (j: object, c: object) => LibTokenizer)(json, {});
    session = await ort.InferenceSession.create(path.join(demo, 'model.onnx'));
    server = await startTsserve({ store, args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'] });
  });

  after(async () => {
    await server?.stop('SIGTERM');
    await session?.release();
    removeStores();
  });

  async function post(body: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${server.inference}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as unknown };
  }

  it('should keep the first `dimensions` values of the CLS vector and normalize them, for a size the model-config lists', async () => {
    const ids = tokenizer.encode('the red house').ids;
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
    const cls = Array.from((out['last_hidden_state']!.data as Float32Array).subarray(0, 32));
    const norm = Math.sqrt(cls.reduce((a, v) => a + v * v, 0));
    const r = await openaiClient(server).embeddings.create({
      model: 'mrl',
      input: 'the red house',
      dimensions: 32,
      encoding_format: 'float',
    });
    const got = r.data[0]!.embedding;
    expect(got.length).to.equal(32);
    got.forEach((v, j) => expect(v, `element ${j}`).to.be.closeTo(cls[j]! / norm, 1e-5));
    expect(await post({ model: 'mrl', input: 'x', dimensions: 20 })).to.deep.equal({
      status: 400,
      body: {
        error: {
          message: `'dimensions' must be one of 16, 32 for model "mrl", got "20"`,
          type: 'invalid_request_error',
          param: 'dimensions',
          code: null,
        },
      },
    });
  });

  it('should answer 503 naming the tokenizer and its parse error (bounded, escaped), and log it once', async () => {
    const r = (await post({ model: 'broken', input: 'hello' })) as {
      status: number;
      body: { error: { message: string; type: string } };
    };
    expect([r.status, r.body.error.type]).to.deep.equal([503, 'service_unavailable_error']);
    expect(r.body.error.message).to.equal(
      `model broken: its tokenizer failed to load: ${JSON.stringify('Unexpected end of JSON input')}`,
    );
    expect(
      server
        .output()
        .split('\n')
        .filter((l) => l.includes('its tokenizer failed to load')).length,
    ).to.equal(1);
  });
});
