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
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';

const FLAGS: readonly FlagDef[] = [
  { flag: 'model', kind: 'string' }, { flag: 'input', kind: 'string' }, { flag: 'output', kind: 'string' }, { flag: 'set', kind: 'string' },
];

const USAGE = `Usage: tsserve generate --model DIR --input FILE.jsonl [--output FILE.jsonl] [--set KEY=VALUE ...]

Runs every prompt of FILE.jsonl through the generation engine of the model in DIR (a
directory with model-config.yaml and an engine: block) and prints one JSON line per prompt:
  {"id":..., "prompt":..., "choices":[{"index":0,"text":...,"token_ids":[...],"finish_reason":...}],
   "usage":{"prompt_tokens":...,"completion_tokens":...,"cached_tokens":...}}

Input lines: {"prompt": "text", "max_tokens": 16, "temperature": 1, "top_p": 1, "top_k": -1,
  "seed": 0, "n": 1, "stop": ["..."], "ignore_eos": false, "id": "optional"}
--set overrides one engine setting (e.g. --set maxNumSeqs=8 --set enablePrefixCaching=false).
`;

const PARAM_KEYS = ['max_tokens', 'temperature', 'top_p', 'top_k', 'seed', 'n', 'stop', 'ignore_eos'] as const;

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
