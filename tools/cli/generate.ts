/**
 * `tsserve generate --model DIR --input prompts.jsonl [--output out.jsonl] [--set KEY=VALUE ...]`:
 * offline generation through the same engine the server runs (vLLM's offline `LLM`). Every
 * input line is `{"prompt": "...", "max_tokens": 16, ...}` (OpenAI-style sampling fields,
 * optional "id"); every prompt gives one output line, in input order.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { LLM, PromptRejected } from '../../backend/engine/llm.js';
import type { CompletionOutput } from '../../backend/engine/llm.js';
import { decodeToGenWorkerMessage } from '../../schema/engine-ipc.js';
import { ENGINE_ARG_FLAGS, ENGINE_ARGS, parseEngineArgText, validateEngineArgs } from '../../schema/engine-args.js';
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';
import { loadModelConfig } from '../../frontend/store/model-config.js';

const USAGE = `Usage: tsserve generate --model DIR --input FILE.jsonl [--output FILE.jsonl] [--set KEY=VALUE ...]

Runs every prompt of FILE.jsonl through the generation engine of the model in DIR (a
directory with model-config.yaml and an engine: block) and prints one JSON line per prompt:
  {"id":..., "prompt":..., "choices":[{"index":0,"text":...,"token_ids":[...],"finish_reason":...}],
   "usage":{"prompt_tokens":...,"completion_tokens":...,"cached_tokens":...}}

Input lines: {"prompt": "text", "max_tokens": 16, "temperature": 1, "top_p": 1, "top_k": -1,
  "seed": 0, "n": 1, "stop": ["..."], "ignore_eos": false, "stop_token_ids": [..], "min_tokens": 0,
  "id": "optional"}
--set overrides one engine setting (e.g. --set maxNumSeqs=8 --set enablePrefixCaching=false).

Engine settings are also flags, under vLLM's names with '_' or '-' (or ours, camelCase):
${wrapFlags(ENGINE_ARGS.map((d) => `--${d.snake.replace(/_/g, '-')}${d.type === 'bool' ? '' : ' V'}`))}
  e.g. --max-num-seqs 64 --max_model_len 512 --no-enable-prefix-caching --eos-token-id 257,10
`;

const PARAM_KEYS = ['max_tokens', 'temperature', 'top_p', 'top_k', 'seed', 'n', 'stop', 'ignore_eos', 'stop_token_ids', 'min_tokens'] as const;

interface Job {
  readonly id: unknown;
  /** Where it was read (`FILE:LINE`), for the engine's refusal of it. */
  readonly where: string;
  readonly prompt: string;
  readonly params: GenSamplingParams;
}

function parseValue(v: string): unknown {
  if (v === 'true') return true;
  if (v === 'false') return false;
  const n = Number(v);
  return v.trim() !== '' && Number.isFinite(n) ? n : v;
}

/** Parses the JSONL input; returns jobs or one message per bad line. */
export function parseInput(text: string, file: string): { jobs: Job[]; problems: string[] } {
  const jobs: Job[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${file}:${i + 1}`;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      problems.push(`${where}: not JSON (${(e as Error).message})`);
      return;
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      problems.push(`${where}: must be a JSON object`);
      return;
    }
    const o = obj as Record<string, unknown>;
    const params: Record<string, unknown> = {};
    for (const k of PARAM_KEYS) if (o[k] !== undefined) params[k] = o[k];
    const d = decodeToGenWorkerMessage({ type: 'tsserve.gen.add', requestId: 'x', prompt: o.prompt, params });
    if (!d.ok) {
      problems.push(...d.problems.map((p) => `${where}: ${p.replace(/^prompt: .*/, 'prompt: must be a string')}`));
      return;
    }
    jobs.push({ id: o.id ?? jobs.length, where, prompt: o.prompt as string, params: params as GenSamplingParams });
  });
  return { jobs, problems };
}

/** One output line for one prompt. */
export function renderCompletion(id: unknown, c: CompletionOutput): string {
  const completion = c.outputs.reduce((n, o) => n + o.tokenIds.length, 0);
  return JSON.stringify({
    id,
    prompt: c.prompt,
    choices: c.outputs.map((o) => ({ index: o.index, text: o.text, token_ids: o.tokenIds, finish_reason: o.finishReason, ...(o.stopReason !== undefined ? { stop_reason: o.stopReason } : {}) })),
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
  { flag: 'model', kind: 'string' }, { flag: 'input', kind: 'string' }, { flag: 'output', kind: 'string' }, { flag: 'set', kind: 'string' },
  ...ENGINE_ARG_FLAGS.flatMap((f): FlagDef[] => (f.parseArgsType === 'boolean'
    ? [{ flag: f.flag, kind: 'bool' }, { flag: `no-${f.flag}`, kind: 'bool' }]
    : [{ flag: f.flag, kind: 'string' }])),
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
  let text: string;
  try {
    text = readFileSync(input, 'utf8');
  } catch (e) {
    process.stderr.write(`tsserve generate: cannot read ${input}: ${(e as Error).message}\n`);
    return 2;
  }
  const { jobs, problems } = parseInput(text, input);
  if (problems.length > 0) {
    process.stderr.write(problems.map((p) => `${p}\n`).join(''));
    return 2;
  }
  // The server's own check of model-config.yaml first, so each problem names its file:line:col
  // as a registration would (the engine's load lists them without a position).
  const checked = loadModelConfig(path.basename(path.resolve(model)), path.resolve(model));
  if (!checked.ok) {
    process.stderr.write(checked.problems.map((p) => `tsserve generate: ${p}\n`).join(''));
    return 1;
  }
  let llm: LLM;
  try {
    llm = await LLM.load(model, overrides);
  } catch (e) {
    process.stderr.write(`tsserve generate: cannot load ${model}: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    const outs = await llm.generate(
      jobs.map((j) => j.prompt),
      jobs.map((j) => j.params),
    );
    const lines = outs.map((c, i) => renderCompletion(jobs[i]!.id, c) + '\n').join('');
    if (output === undefined) process.stdout.write(lines);
    else writeFileSync(output, lines);
    return 0;
  } catch (e) {
    // A refused prompt is named by its line, as a bad line is (the index skips blank lines).
    const why = e instanceof PromptRejected ? `${jobs[e.index]?.where ?? `prompt ${e.index}`}: ${e.reason}` : (e as Error).message;
    process.stderr.write(`tsserve generate: ${why}\n`);
    return 1;
  } finally {
    await llm.close();
  }
}
