/**
 * `tsserve generate --model DIR --input prompts.jsonl [--output out.jsonl] [--set KEY=VALUE ...]`:
 * offline generation through the same engine the server runs (vLLM's offline `LLM`). Every
 * input line is one `/v1/completions` body without `model` (completion-lines.ts: the server's
 * fields, defaults and messages), plus an optional "id"; every prompt gives one output line, in
 * input order, written as soon as it and every line before it are done.
 */
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { LLM, PromptRejected } from '../../backend/engine/llm.js';
import type { CompletionOutput } from '../../backend/engine/llm.js';
import type { EngineConfig } from '../../backend/engine/config.js';
import { ENGINE_ARG_FLAGS, ENGINE_ARGS, parseEngineArgText, validateEngineArgs } from '../../schema/engine-args.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';
import { isHfModelDir } from '../../frontend/store/hf-model-dir.js';
import { modelDirConfig } from '../../frontend/store/model-dir-config.js';
import { withSamplingDefaults } from '../../frontend/openai/sampling-defaults.js';
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import { completionLogprobs } from '../../frontend/openai/logprobs-format.js';
import type { ModelVocab } from '../../frontend/generation/model-vocab.js';
import { modelVocab, tokenizerVocab } from '../../frontend/generation/model-vocab.js';
import { NO_CHAT_TEMPLATE } from '../../frontend/generation/chat-template.js';
import { ModelTokenizer } from '../../schema/text/model-tokenizer.js';
import type { InputLine, ReadyLine } from './completion-lines.js';
import { parseInput, readyLine } from './completion-lines.js';

const USAGE = `Usage: tsserve generate --model DIR --input FILE.jsonl [--output FILE.jsonl] [--set KEY=VALUE ...]

Runs every prompt of FILE.jsonl (- for standard input) through the generation engine of the
model in DIR (a directory with model-config.yaml and an engine: block, or a Hugging Face export
with config.json and no model-config.yaml) and prints one JSON line
per prompt, in input order, each as soon as it and the lines before it are done:
  {"id":..., "prompt":..., "choices":[{"index":0,"text":...,"token_ids":[...],"finish_reason":...}],
   "usage":{"prompt_tokens":...,"completion_tokens":...,"cached_tokens":...}}

Input lines: a /v1/completions body ("model" optional: DIR's name), one prompt (text or token
  ids) per line, plus an optional "id"; the server's fields, defaults (max_tokens 16) and checks:
  {"prompt": "text", "max_tokens": 16, "temperature": 1, "top_p": 1, "top_k": -1, "min_p": 0,
   "seed": 0, "n": 1, "stop": ["..."], "stop_token_ids": [..], "min_tokens": 0, "ignore_eos": false,
   "presence_penalty": 0, "frequency_penalty": 0, "repetition_penalty": 1, "logprobs": 2,
   "logit_bias": {"10": -100}, "echo": false, "include_stop_str_in_output": false, "id": "optional"}
Exit status: 0 every prompt done; 1 the model did not load, the output could not be written, or
  a prompt failed (its line is {"id":..., "error":{"message":...}}, or has finish_reason "error");
  2 a bad flag or input line (each one listed with its FILE:LINE, nothing generated); 130
  interrupted (SIGINT; the lines written are whole).

--set overrides one engine setting (e.g. --set maxNumSeqs=8 --set enablePrefixCaching=false).

Engine settings are also flags, under vLLM's names with '_' or '-' (or ours, camelCase):
${wrapFlags(ENGINE_ARGS.map((d) => `--${d.snake.replace(/_/g, '-')}${d.type === 'bool' ? '' : ' V'}`))}
  e.g. --max-num-seqs 64 --max_model_len 512 --no-enable-prefix-caching --eos-token-id 257,10
`;

/** A `--set` value: true/false, a number, else the text. */
function parseValue(v: string): unknown {
  if (v === 'true') return true;
  if (v === 'false') return false;
  const n = Number(v);
  return v.trim() !== '' && Number.isFinite(n) ? n : v;
}

/** Exit code of an interrupted run (SIGINT), the shell's 128 + 2. */
const INTERRUPTED = 130;

/**
 * The vocabulary view of the loaded engine (its settings after the flags), as the server builds
 * it: the model's real tokenizer when its directory has one, else the byte-level view.
 */
function engineVocab(c: EngineConfig, tokenizer: unknown): ModelVocab {
  const block = {
    maxModelLen: c.maxModelLen,
    vocabSize: c.model.vocabSize,
    bosTokenId: c.model.bosId,
    addBos: c.addBos,
    eosTokenId: [...c.eosTokenIds],
    suppressTokens: [...c.suppressTokenIds],
  };
  return tokenizer instanceof ModelTokenizer ? tokenizerVocab(block, tokenizer, NO_CHAT_TEMPLATE) : modelVocab(block);
}

/** One output line for one prompt: the server's text (echo included) and logprobs, with the token ids. */
export function renderCompletion(r: ReadyLine, c: CompletionOutput, vocab: ModelVocab): string {
  const completion = c.outputs.reduce((n, o) => n + o.tokenIds.length, 0);
  const echo = r.line.request.echo ? r.text : '';
  const logprobs = r.params.logprobs !== undefined;
  return JSON.stringify({
    id: r.line.id,
    prompt: r.line.prompt,
    choices: c.outputs.map((o) => ({
      index: o.index,
      text: echo + o.text,
      token_ids: o.tokenIds,
      ...(logprobs ? { logprobs: completionLogprobs(o.logprobs ?? [], vocab, echo.length) } : {}),
      finish_reason: o.finishReason,
      ...(o.stopReason !== undefined ? { stop_reason: o.stopReason } : {}),
    })),
    usage: { prompt_tokens: c.promptTokenIds.length, completion_tokens: completion, cached_tokens: c.numCachedTokens },
  });
}

// --- engine settings as flags (vLLM's spelling, schema/engine-args.ts) ---

/** The flag list as indented lines of at most 96 characters. */
function wrapFlags(flags: readonly string[]): string {
  const lines: string[] = [];
  let cur = ' ';
  for (const f of flags) {
    if (cur.length + 1 + f.length > 96) {
      lines.push(cur);
      cur = ' ';
    }
    cur += ` ${f}`;
  }
  return [...lines, cur].join('\n');
}

/**
 * The command's flags for util.parseArgs: ours, then every spelling of every engine setting
 * (`--max_num_seqs`, `--max-num-seqs`, `--maxNumSeqs`), booleans also as `--no-NAME`.
 */
const FLAGS: readonly FlagDef[] = [
  { flag: 'model', kind: 'string' },
  { flag: 'input', kind: 'string' },
  { flag: 'output', kind: 'string' },
  { flag: 'set', kind: 'string' },
  ...ENGINE_ARG_FLAGS.flatMap((f): FlagDef[] =>
    f.parseArgsType === 'boolean'
      ? [
          { flag: f.flag, kind: 'bool' },
          { flag: `no-${f.flag}`, kind: 'bool' },
        ]
      : [{ flag: f.flag, kind: 'string' }],
  ),
];

/** Engine settings given as flags, under vLLM's spelling; values are checked by the validator after. */
function engineOverrides(values: ReadonlyMap<string, readonly string[]>, overrides: Record<string, unknown>): void {
  for (const f of ENGINE_ARG_FLAGS) {
    const given = values.get(f.flag)?.at(-1);
    if (given !== undefined) overrides[f.def.snake] = parseEngineArgText(f.def, given);
    if (f.parseArgsType === 'boolean' && values.get(`no-${f.flag}`) !== undefined) overrides[f.def.snake] = false;
  }
}

// --- end of engine flags ---

/** Runs `tsserve generate`; resolves to the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseFlags(argv, FLAGS, 'tsserve generate');
  if (parsed.given.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (parsed.problems.length > 0) {
    process.stderr.write(`${parsed.problems.map((p) => `tsserve generate: ${p}\n`).join('')}\n${USAGE}`);
    return 2;
  }
  const last = (flag: string): string | undefined => parsed.given.values.get(flag)?.at(-1);
  const model = last('model');
  const input = last('input');
  const output = last('output');
  const overrides: Record<string, unknown> = {};
  for (const kv of parsed.given.values.get('set') ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) {
      process.stderr.write(`tsserve generate: --set needs KEY=VALUE, got '${kv}'\n`);
      return 2;
    }
    overrides[kv.slice(0, eq)] = parseValue(kv.slice(eq + 1));
  }
  engineOverrides(parsed.given.values, overrides);
  const flagged = validateEngineArgs(overrides, '');
  if (flagged.problems.length > 0) {
    process.stderr.write(flagged.problems.map((p) => `tsserve generate: --${p.message}\n`).join(''));
    return 2;
  }
  if (model === undefined || input === undefined) {
    process.stderr.write(`tsserve generate: --model and --input are required\n\n${USAGE}`);
    return 2;
  }
  let bytes: Buffer;
  // `-` is standard input, as for most commands that read a file (`… | tsserve generate --input -`).
  const stdin = input === '-';
  try {
    bytes = readFileSync(stdin ? 0 : input);
  } catch (e) {
    process.stderr.write(`tsserve generate: cannot read ${input}: ${(e as Error).message}\n`);
    return 2;
  }
  const { lines, problems } = parseInput(bytes, stdin ? '<stdin>' : input, {
    command: 'tsserve generate',
    model: path.basename(path.resolve(model)),
  });
  if (problems.length > 0) {
    process.stderr.write(problems.map((p) => `${p}\n`).join(''));
    return 2;
  }
  // Refused before the model loads: a directory here failed only after every prompt was generated.
  if (output !== undefined && isDirectory(output)) {
    process.stderr.write(`tsserve generate: --output: ${output} is a directory\n`);
    return 2;
  }
  // Writing the answers over the prompts would lose the prompts (the file is opened with truncation).
  if (output !== undefined && !stdin && sameFile(input, output)) {
    process.stderr.write(
      `tsserve generate: --output ${output} is the --input file; answers would replace the prompts\n`,
    );
    return 2;
  }
  // The server's own check of model-config.yaml first, so each problem names its file:line:col
  // as a registration would (the engine's load lists them without a position).
  // A Hugging Face export (config.json, no model-config.yaml) is read as the server reads it,
  // its parent directory standing for the store.
  const dir = path.resolve(model);
  const checked = await modelDirConfig(path.dirname(dir), path.basename(dir), dir);
  if (!checked.ok) {
    process.stderr.write(checked.problems.map((p) => `tsserve generate: ${p}\n`).join(''));
    return 1;
  }
  let llm: LLM;
  try {
    llm = isHfModelDir(dir)
      ? await LLM.fromConfig({ ...checked.config, engine: checked.config.engine ?? {} }, overrides)
      : await LLM.load(model, overrides);
  } catch (e) {
    process.stderr.write(`tsserve generate: cannot load ${model}: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    return await generateAll(llm, lines, output, checked.config.samplingDefaults);
  } finally {
    await llm.close();
  }
}

/** What became of one prompt. */
type Outcome = { readonly out: CompletionOutput } | { readonly error: string };

/**
 * Checks every line against the loaded model (the server's max_model_len and vocabulary checks),
 * then runs them all at once and writes each answer in input order as soon as it is done.
 */
async function generateAll(
  llm: LLM,
  lines: readonly InputLine[],
  output: string | undefined,
  /** A Hugging Face export's generation_config.json defaults, under each line's own (as the server does). */
  samplingDefaults?: GenSamplingParams,
): Promise<number> {
  const vocab = engineVocab(llm.engine.config, llm.engine.tokenizer);
  const ready: ReadyLine[] = [];
  const refused: string[] = [];
  for (const l of lines) {
    const r = readyLine({ ...l, request: withSamplingDefaults(l.request, samplingDefaults) }, vocab);
    if (typeof r === 'string') refused.push(r);
    else ready.push(r);
  }
  if (refused.length > 0) {
    process.stderr.write(refused.map((p) => `${p}\n`).join(''));
    return 2;
  }
  let fd = 1;
  if (output !== undefined) {
    try {
      fd = openSync(output, 'w');
    } catch (e) {
      process.stderr.write(`tsserve generate: cannot write --output ${output}: ${(e as Error).message}\n`);
      return 1;
    }
  }
  // One call per line, all started now: the engine batches them as one call's prompts, in the same order.
  const outcomes = ready.map((r) =>
    llm.generate([r.ids], [r.params]).then(
      (outs): Outcome => ({ out: outs[0]! }),
      (e: unknown): Outcome => ({
        error: `${r.line.where}: ${e instanceof PromptRejected ? e.reason : (e as Error).message}`,
      }),
    ),
  );
  let written = 0;
  const interrupted = (): void => {
    process.stderr.write(`tsserve generate: interrupted; ${written} of ${ready.length} answers written\n`);
    process.exit(INTERRUPTED);
  };
  process.once('SIGINT', interrupted);
  let failed = 0;
  try {
    for (let i = 0; i < ready.length; i++) {
      const o = await outcomes[i]!;
      const r = ready[i]!;
      let line: string;
      if ('error' in o) {
        failed++;
        line = JSON.stringify({ id: r.line.id, error: { message: o.error } });
      } else {
        if (o.out.outputs.some((s) => s.finishReason === 'error')) failed++;
        line = renderCompletion(r, o.out, vocab);
      }
      if (fd === 1) process.stdout.write(`${line}\n`);
      else writeSync(fd, `${line}\n`);
      written++;
    }
  } catch (e) {
    process.stderr.write(
      `tsserve generate: cannot write ${output === undefined ? 'the standard output' : `--output ${output}`}: ${(e as Error).message}\n`,
    );
    return 1;
  } finally {
    process.removeListener('SIGINT', interrupted);
    if (fd !== 1) closeSync(fd);
  }
  // Said on stderr too: the output file holds the failures, but the terminal showed nothing.
  if (failed > 0)
    process.stderr.write(
      `tsserve generate: ${failed} of ${ready.length} prompts failed (see their lines in the output)\n`,
    );
  return failed > 0 ? 1 : 0;
}

/** Whether two paths name one file (the same inode, through links or another spelling). */
function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
