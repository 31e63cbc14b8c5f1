/**
 * A generation model's vocabulary view loaded from its directory at model start: the real
 * tokenizer when the directory holds `tokenizer.json` (the engine block's vocabulary must cover
 * its ids), else the byte-level view; and its chat template (the operator's `--chat-template`,
 * else the directory's), compiled once. Every file is read off the event loop, bounded, inside
 * the model's directory (schema/text/tokenizer-files.ts).
 */
import type { ModelConfig } from '../../schema/worker-protocol.js';
import { ModelTokenizer } from '../../schema/text/model-tokenizer.js';
import { readTokenizerFiles } from '../../schema/text/tokenizer-files.js';
import { compileChatTemplate } from './chat-template.js';
import type { Response } from 'express';
import { OpenAIError, sendOpenAIError } from '../http/openai-errors.js';
import type { ModelVocab } from './model-vocab.js';
import { modelVocab, tokenizerVocab } from './model-vocab.js';

/** What the vocabulary is loaded from: a model's name (for messages), directory and `engine:` block. */
export type VocabSource = Pick<ModelConfig, 'name' | 'dir' | 'engine'>;

/** Loads the vocabulary view of `config`'s model; `chatTemplate` (--chat-template's text) wins over the directory's. */
export async function loadModelVocab(config: VocabSource, chatTemplate?: string): Promise<ModelVocab> {
  const files = await readTokenizerFiles(config.dir);
  const source = chatTemplate ?? files.chatTemplate;
  const where = `${config.name}: ${chatTemplate !== undefined ? '--chat-template' : 'the chat template'}`;
  if (files.tokenizerJson === null) return modelVocab(config.engine, compileChatTemplate(source, {}, where));
  const tk = new ModelTokenizer({ ...files, tokenizerJson: files.tokenizerJson });
  const v = tokenizerVocab(
    config.engine,
    tk,
    compileChatTemplate(
      source,
      {
        ...(tk.bosToken !== undefined ? { bos_token: tk.bosToken } : {}),
        ...(tk.eosToken !== undefined ? { eos_token: tk.eosToken } : {}),
      },
      where,
    ),
  );
  const block = config.engine?.vocabSize ?? config.engine?.vocab_size;
  if (typeof block === 'number' && block < tk.size) {
    throw new Error(
      `${config.name}: tokenizer.json has ids up to ${tk.size - 1}, past the model's vocabulary of ${block} (engine vocabSize)`,
    );
  }
  return v;
}

/** A vocabulary whose every use is a 503 saying why (still loading, or failed to load). */
function unavailableVocab(base: ModelVocab, why: () => string): ModelVocab {
  const refuse = (): never => {
    throw new OpenAIError(503, why());
  };
  return Object.freeze({
    ...base,
    encode: refuse,
    count: refuse,
    decode: refuse,
    chatTemplate: { render: refuse },
  });
}

/**
 * A model's vocabulary loaded in the background where there is no start to wait on (a front
 * process of `--api-server-count` learns of models from the primary's table): until it is
 * loaded, tokenizing is a 503 naming the model, never the byte-level view of a model that has a
 * real tokenizer. A new directory for the name loads again.
 */
export class BackgroundVocab {
  /** `chatTemplate`: --chat-template's text, which wins over the directory's (as loadModelVocab takes it). */
  constructor(private readonly chatTemplate?: string) {}

  private dir = '';
  private value: ModelVocab | undefined;
  private problem: string | undefined;
  private loading: Promise<void> = Promise.resolve();

  /** The vocabulary of `config` (loading it on first sight of its directory). */
  of(config: VocabSource): ModelVocab {
    this.start(config);
    return (
      this.value ??
      unavailableVocab(modelVocab(config.engine), () =>
        this.problem === undefined
          ? `model ${config.name}: its tokenizer is still loading in this process; retry`
          : `model ${config.name}: its tokenizer failed to load: ${this.problem}`,
      )
    );
  }

  /** Undefined once `config`'s vocabulary is loaded (or failed); else a promise that settles when it is. */
  ready(config: VocabSource): Promise<void> | undefined {
    this.start(config);
    return this.value !== undefined || this.problem !== undefined ? undefined : this.loading;
  }

  private start(config: VocabSource): void {
    if (config.dir === this.dir) return;
    this.dir = config.dir;
    this.value = undefined;
    this.problem = undefined;
    const dir = config.dir;
    this.loading = loadModelVocab(config, this.chatTemplate).then(
      (v) => {
        if (this.dir === dir) this.value = v;
      },
      (err: unknown) => {
        if (this.dir === dir) this.problem = err instanceof Error ? err.message : String(err);
      },
    );
  }
}

/**
 * Runs `go` once `model`'s vocabulary is loaded (at once when it is, or when the model loads
 * none): a request that arrives while a model's tokenizer loads waits for it rather than being
 * tokenized by another. An error thrown by `go` after the wait is a 500 in OpenAI's shape.
 */
export function whenVocabReady(
  model: { readonly vocabLoaded?: () => Promise<void> | undefined },
  res: Response,
  go: () => void,
): void {
  const loading = model.vocabLoaded?.();
  if (loading === undefined) return go();
  loading.then(go).catch((err: unknown) => {
    if (err instanceof OpenAIError) return sendOpenAIError(res, err);
    sendOpenAIError(res, new OpenAIError(500, 'internal error while tokenizing the request'));
  });
}
