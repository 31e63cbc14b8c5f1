/**
 * Helpers of the pipeline e2e tests: a store holding tiny-omni (and variants with other replica
 * counts) next to its stage models, a real server over it for one describe block, WAV decoding
 * with the wavefile package, and the chat body of a spoken request.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import type OpenAI from 'openai';
import wavefile from 'wavefile';
import { openaiClient } from './generation-helpers.js';
import { generateStore, removeStores, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

/** The server of one describe block and its official client (set once `before` has run). */
export interface ServedOmni {
  readonly server: Tsserve;
  readonly client: OpenAI;
}

/**
 * Registers the describe block's hooks: before, an omni store (`variants`, then `prepare` on its
 * path) served by a real `tsserve start <args>`; after, the server stopped with SIGTERM and its
 * files removed. Read `server` and `client` inside the tests.
 */
export function servedOmni(
  tag: string,
  args: readonly string[],
  opts: { readonly variants?: PipelineVariants; readonly prepare?: (store: string) => void } = {},
): ServedOmni {
  let dir: string | undefined;
  let server: Tsserve | undefined;
  let client: OpenAI | undefined;
  before(async () => {
    dir = tempDir(tag);
    const store = omniStore(path.join(dir, 'store'), opts.variants ?? {});
    opts.prepare?.(store);
    server = await startTsserve({ store, args });
    client = openaiClient(server);
  });
  after(async () => {
    await server?.stop('SIGTERM');
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });
  return {
    get server(): Tsserve {
      if (server === undefined) throw new Error('servedOmni: read in a test, after before()');
      return server;
    },
    get client(): OpenAI {
      if (client === undefined) throw new Error('servedOmni: read in a test, after before()');
      return client;
    },
  };
}

/** The pipeline models of the store and their thinker/code2wav replica counts. */
export type PipelineVariants = Readonly<
  Record<string, { readonly thinker: number; readonly code2wav: number; readonly chunkTokens?: number }>
>;

/** Copies the generated tiny-lm, tiny-vocoder and tiny-omni into `dir`, plus one pipeline per variant. */
export function omniStore(dir: string, variants: PipelineVariants): string {
  const src = generateStore(['tiny-lm', 'tiny-vocoder', 'tiny-omni']);
  fs.cpSync(src, dir, { recursive: true });
  const cfg = yaml.load(fs.readFileSync(path.join(dir, 'tiny-omni', 'model-config.yaml'), 'utf8')) as Record<
    string,
    unknown
  >;
  for (const [name, v] of Object.entries(variants)) {
    fs.mkdirSync(path.join(dir, name), { recursive: true });
    const pipeline = {
      chunkTokens: v.chunkTokens ?? 4,
      stages: [
        { name: 'thinker', model: 'tiny-lm', replicas: v.thinker },
        { name: 'code2wav', model: 'tiny-vocoder', replicas: v.code2wav },
      ],
    };
    fs.writeFileSync(path.join(dir, name, 'model-config.yaml'), yaml.dump({ ...cfg, pipeline }));
  }
  return dir;
}

/** A decoded WAV: its format and its samples. */
export interface DecodedWav {
  readonly sampleRate: number;
  readonly channels: number;
  readonly bitsPerSample: number;
  readonly frames: number;
  readonly samples: Float64Array;
}

/** Decodes a WAV file with the wavefile package. */
export function decodeWav(bytes: Uint8Array): DecodedWav {
  const w = new wavefile.WaveFile(bytes);
  const fmt = w.fmt as { sampleRate: number; numChannels: number; bitsPerSample: number };
  const samples = w.getSamples(false, Float64Array) as unknown as Float64Array;
  return {
    sampleRate: fmt.sampleRate,
    channels: fmt.numChannels,
    bitsPerSample: fmt.bitsPerSample,
    frames: samples.length / fmt.numChannels,
    samples,
  };
}

/** A spoken chat body of `model`: greedy, ignore_eos (the client's types do not know vLLM's ignore_eos). */
export function spoken(
  model: string,
  content: string,
  maxTokens: number,
  format: 'wav' | 'pcm16',
  stream: boolean,
): OpenAI.Chat.ChatCompletionCreateParams {
  return {
    model,
    messages: [{ role: 'user', content }],
    max_tokens: maxTokens,
    temperature: 0,
    stream,
    modalities: ['text', 'audio'],
    audio: { voice: 'alloy', format },
    ...({ ignore_eos: true } as object),
  } as OpenAI.Chat.ChatCompletionCreateParams;
}
