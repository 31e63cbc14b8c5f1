/**
 * `tsserve models generate DIR [--force] [--only a,b]`: writes the demo model store (no
 * downloads: every weight comes from a seed).
 */
import { existsSync, statSync } from 'node:fs';
import { generateStore } from '../models/store.js';
import { STORE_MODELS } from '../models/store-models.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';

const FLAGS: readonly FlagDef[] = [
  { flag: 'force', kind: 'bool' },
  { flag: 'only', kind: 'string' },
];

/** `head`, a space, then `text` broken at spaces into lines of at most 100 columns, the rest indented under the text. */
function wrapped(head: string, text: string): string[] {
  const lines: string[] = [];
  let cur = head;
  for (const word of text.split(' ')) {
    if (cur.length > head.length && cur.length + 1 + word.length > 100) {
      lines.push(cur);
      cur = ' '.repeat(head.length);
    }
    cur += ` ${word}`;
  }
  return [...lines, cur];
}

function usage(): string {
  const lines = [
    'Usage: tsserve models generate [DIR] [--force] [--only NAME[,NAME...]]',
    '',
    'Writes the demo model store into DIR (default ./model-store), one directory per model',
    'with its model.onnx and model-config.yaml. Existing model directories are kept unless',
    '--force, which rewrites one only when it holds nothing but the files the model writes (a',
    'directory with files of yours is kept, named, and the exit status is 1). Other directories',
    'of DIR are never touched. Weights are random but fixed by a seed: two runs write identical',
    'files.',
    '',
    'Models:',
    ...STORE_MODELS.flatMap((m) => wrapped(`  ${m.name.padEnd(12)}`, m.summary)),
  ];
  return lines.join('\n') + '\n';
}

/** Runs `tsserve models ...`; resolves to the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(usage());
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'generate') {
    process.stderr.write(`tsserve models: unknown subcommand '${sub}'\n\n${usage()}`);
    return 2;
  }
  const parsed = parseFlags(rest, FLAGS, 'tsserve models generate', 1);
  if (parsed.given.help) {
    process.stdout.write(usage());
    return 0;
  }
  if (parsed.problems.length > 0) {
    process.stderr.write(parsed.problems.map((p) => `tsserve models generate: ${p}\n`).join(''));
    return 2;
  }
  const dir = parsed.given.positionals[0];
  const force = parsed.given.values.has('force');
  const onlyValue = parsed.given.values.get('only');
  let only: string[] | undefined;
  if (onlyValue !== undefined) {
    only = onlyValue.flatMap((v) => v.split(',')).filter((s) => s !== '');
    if (only.length === 0) {
      process.stderr.write('tsserve models generate: --only needs a comma-separated list of model names\n');
      return 2;
    }
    // A bad flag value, as an empty one is: exit 2 before anything is written (it was 1, a failed run's code).
    const unknown = only.filter((n) => !STORE_MODELS.some((m) => m.name === n));
    if (unknown.length > 0) {
      process.stderr.write(
        `tsserve models generate: --only: unknown model(s): ${unknown.join(', ')} (known: ${STORE_MODELS.map((m) => m.name).join(', ')})\n`,
      );
      return 2;
    }
  }
  const target = dir ?? 'model-store';
  // Refused up front: it failed on a scandir or mkdir inside it with a bare ENOTDIR.
  if (existsSync(target) && !statSync(target).isDirectory()) {
    process.stderr.write(`tsserve models generate: ${target} exists and is not a directory\n`);
    return 2;
  }
  try {
    const r = await generateStore(target, { force, only, log: (line) => process.stdout.write(`${line}\n`) });
    const refused =
      r.refused.length > 0 ? `, ${r.refused.length} not rewritten (${r.refused.join(', ')}: files of yours)` : '';
    process.stdout.write(`model store ${target}: ${r.written.length} written, ${r.skipped.length} kept${refused}\n`);
    return r.refused.length > 0 ? 1 : 0;
  } catch (err) {
    process.stderr.write(`tsserve models generate: ${(err as Error).message}\n`);
    return 1;
  }
}
