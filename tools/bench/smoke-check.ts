/**
 * CI's judge of one bench's smoke run (`node dist/tools/bench/smoke-check.js < stdout`): echoes
 * every line, and exits 1 unless at least one line is a figure in the benchmarks' shape
 * (`{"bench","ours","baseline","unit","ratio"}`) and every line that opens with `{` is one. The
 * values themselves are not judged: a smoke run's few iterations mean nothing.
 */
import { createInterface } from 'node:readline';

/** Why `line` is not a figure in the benchmarks' shape, or null when it is one. */
export function figureProblem(line: string): string | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not a JSON object';
  const o = v as Record<string, unknown>;
  if (typeof o.bench !== 'string' || o.bench === '') return 'no "bench" name';
  if (typeof o.unit !== 'string') return `${o.bench}: no "unit"`;
  for (const k of ['ours', 'baseline', 'ratio'])
    if (!(k in o) || (o[k] !== null && typeof o[k] !== 'number')) return `${o.bench}: "${k}" is not a number`;
  return null;
}

async function main(): Promise<void> {
  let figures = 0;
  let bad = 0;
  for await (const line of createInterface({ input: process.stdin })) {
    process.stdout.write(line + '\n');
    if (!line.startsWith('{')) continue;
    const problem = figureProblem(line);
    if (problem === null) figures++;
    else {
      bad++;
      process.stdout.write(`smoke-check: ${problem}\n`);
    }
  }
  if (figures === 0) process.stdout.write('smoke-check: the bench printed no figure\n');
  process.exitCode = figures > 0 && bad === 0 ? 0 : 1;
}

if (process.argv[1] === import.meta.filename) void main();
