/**
 * An embedding model's tokenizer, loaded from its directory (read off the event loop, bounded,
 * inside the model directory): by the primary's EmbeddingModel at start, and by a front
 * process's proxy of it (frontend/cluster/remote-embedding.ts), which tokenizes the requests it
 * reads as the primary would.
 */
import { DEFAULT_TOKENIZER_BYTES, excerpt, readModelText } from '../../schema/files/model-file.js';
import { HfTokenizer } from '../../schema/text/hf-tokenizer.js';

/** A loaded tokenizer and one past its largest id, or why it failed to load. */
export type LoadedEmbeddingTokenizer =
  { readonly tokenizer: HfTokenizer; readonly vocabSize: number } | { readonly error: string };

/** Loads `dir/file` (and `tokenizer_config.json` when present) for model `name`. */
export async function loadEmbeddingTokenizer(
  name: string,
  dir: string,
  file: string,
): Promise<LoadedEmbeddingTokenizer> {
  try {
    const json = JSON.parse(await readModelText(dir, file, DEFAULT_TOKENIZER_BYTES)) as object;
    let cfg: object = {};
    try {
      cfg = JSON.parse(await readModelText(dir, 'tokenizer_config.json')) as object;
    } catch {
      // tokenizer_config.json is optional: the tokenizer.json alone describes the encoding.
    }
    return { tokenizer: new HfTokenizer(json, cfg), vocabSize: vocabSizeOf(json) };
  } catch (e) {
    return {
      error: `model ${name}: its tokenizer failed to load: ${excerpt(e instanceof Error ? e.message : String(e), 200)}`,
    };
  }
}

/** One past the largest id of a tokenizer.json's model vocabulary (an object or Unigram's list) and added tokens. */
function vocabSizeOf(json: object): number {
  const j = json as { model?: { vocab?: unknown }; added_tokens?: { id?: unknown }[] };
  const vocab = j.model?.vocab;
  let n = Array.isArray(vocab) ? vocab.length : 0;
  if (typeof vocab === 'object' && vocab !== null && !Array.isArray(vocab))
    for (const id of Object.values(vocab)) if (typeof id === 'number' && id + 1 > n) n = id + 1;
  for (const t of j.added_tokens ?? []) if (typeof t.id === 'number' && t.id + 1 > n) n = t.id + 1;
  return n;
}
