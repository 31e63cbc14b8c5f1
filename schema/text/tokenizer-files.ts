/**
 * The tokenizer files of a Hugging Face model directory, read as a request is
 * (schema/files/model-file.ts: inside the directory after links, regular, bounded, off the event
 * loop): `tokenizer.json` (bound DEFAULT_TOKENIZER_BYTES), `tokenizer_config.json`,
 * `special_tokens_map.json` and `chat_template.jinja` when present. A file that is there but
 * unreadable or not JSON is a load error naming it; an absent optional file is `{}`.
 */
import { DEFAULT_TOKENIZER_BYTES, ModelFileError, excerpt, readModelText } from '../files/model-file.js';

/** What a directory's tokenizer files hold, parsed. */
export interface TokenizerFiles {
  /** The parsed tokenizer.json, or null when the directory has none (a byte-level model). */
  readonly tokenizerJson: Readonly<Record<string, unknown>> | null;
  readonly tokenizerConfig: Readonly<Record<string, unknown>>;
  readonly specialTokensMap: Readonly<Record<string, unknown>>;
  /** The chat template: `chat_template.jinja`, else tokenizer_config's `chat_template` (a string, or the one named `default`). */
  readonly chatTemplate: string | undefined;
}

async function optionalText(dir: string, file: string, maxBytes?: number): Promise<string | undefined> {
  try {
    return await readModelText(dir, file, maxBytes);
  } catch (err) {
    if (err instanceof ModelFileError && err.problem === 'missing') return undefined;
    throw err;
  }
}

function parseObject(file: string, text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message}); it begins ${excerpt(text, 40)}`, { cause: err });
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${file}: not a JSON object`);
  return v as Record<string, unknown>;
}

/** tokenizer_config's `chat_template`: a string, or a list of `{name, template}` of which `default` is used. */
function templateOf(config: Readonly<Record<string, unknown>>): string | undefined {
  const t = config.chat_template;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = t.find((x: unknown) => (x as { name?: unknown } | null)?.name === 'default') as
      { template?: unknown } | undefined;
    if (typeof named?.template === 'string') return named.template;
  }
  return undefined;
}

/** Reads the tokenizer files of model directory `dir` (its files must resolve inside it). */
export async function readTokenizerFiles(dir: string): Promise<TokenizerFiles> {
  const [json, config, map, jinja] = await Promise.all([
    optionalText(dir, 'tokenizer.json', DEFAULT_TOKENIZER_BYTES),
    optionalText(dir, 'tokenizer_config.json'),
    optionalText(dir, 'special_tokens_map.json'),
    optionalText(dir, 'chat_template.jinja'),
  ]);
  const tokenizerConfig = config === undefined ? {} : parseObject('tokenizer_config.json', config);
  return {
    tokenizerJson: json === undefined ? null : parseObject('tokenizer.json', json),
    tokenizerConfig,
    specialTokensMap: map === undefined ? {} : parseObject('special_tokens_map.json', map),
    chatTemplate: jinja ?? templateOf(tokenizerConfig),
  };
}
