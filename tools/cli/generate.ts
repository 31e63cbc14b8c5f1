/**
 * `tsserve generate --model DIR --input prompts.jsonl [--output out.jsonl] [--set KEY=VALUE ...]`:
 * offline generation through the same engine the server runs (vLLM's offline `LLM`). Every
 * input line is `{"prompt": "...", "max_tokens": 16, ...}` (OpenAI-style sampling fields,
 * optional "id"); every prompt gives one output line, in input order.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { LLM } from '../../backend/engine/llm.js';
import type { CompletionOutput } from '../../backend/engine/llm.js';
import { decodeToGenWorkerMessage } from '../../schema/engine-ipc.js';
import { ENGINE_ARGS, engineArgOfFlag, parseEngineArgText, validateEngineArgs } from '../../schema/engine-args.js';
import type { GenSamplingParams } from '../../schema/engine-ipc.js';

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
    jobs.push({ id: o.id ?? jobs.length, prompt: o.prompt as string, params: params as GenSamplingParams });
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

function flagName(a: string): string {
  const eq = a.indexOf('=');
  return (eq < 0 ? a : a.slice(0, eq)).replace(/^--(no-)?/, '');
}

/**
 * Takes `--name V`, `--name=V`, a bare boolean `--enable-prefix-caching` or
 * `--no-enable-prefix-caching` into `overrides` under vLLM's spelling; false when `a` is not an
 * engine flag. Values are checked with the model-config rules after the loop.
 */
function engineFlag(a: string, next: string | undefined, overrides: Record<string, unknown>): boolean {
  if (!a.startsWith('--')) return false;
  const def = engineArgOfFlag(flagName(a));
  if (def === undefined) return false;
  const eq = a.indexOf('=');
  if (a.startsWith('--no-')) {
    if (def.type !== 'bool') return false;
    overrides[def.snake] = false;
  } else if (eq >= 0) overrides[def.snake] = parseEngineArgText(def, a.slice(eq + 1));
  else if (def.type === 'bool') overrides[def.snake] = true;
  else overrides[def.snake] = next === undefined ? '' : parseEngineArgText(def, next);
  return true;
}

// --- end of engine flags ---

/** Runs `tsserve generate`; resolves to the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  let model: string | undefined;
  let input: string | undefined;
  let output: string | undefined;
  const overrides: Record<string, unknown> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = (): string | undefined => argv[++i];
    if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE);
      return 0;
    } else if (a === '--model') model = next();
    else if (a === '--input') input = next();
    else if (a === '--output') output = next();
    else if (a === '--set') {
      const kv = next() ?? '';
      const eq = kv.indexOf('=');
      if (eq <= 0) {
        process.stderr.write(`tsserve generate: --set needs KEY=VALUE, got '${kv}'\n`);
        return 2;
      }
      overrides[kv.slice(0, eq)] = parseValue(kv.slice(eq + 1));
    } else if (engineFlag(a, argv[i + 1], overrides)) {
      // An engine setting given as a flag; it took its value when the flag needs one.
      if (!a.includes('=') && engineArgOfFlag(flagName(a))?.type !== 'bool' && !a.startsWith('--no-')) i++;
    } else {
      process.stderr.write(`tsserve generate: unknown argument '${a}'\n\n${USAGE}`);
      return 2;
    }
  }
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
    process.stderr.write(`tsserve generate: ${(e as Error).message}\n`);
    return 1;
  } finally {
    await llm.close();
  }
}
