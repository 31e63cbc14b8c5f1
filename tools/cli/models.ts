/**
 * `tsserve models generate DIR [--force] [--only a,b]`: writes the demo model store (no
 * downloads: every weight comes from a seed).
 */
import { generateStore } from '../models/store.js';
import { STORE_MODELS } from '../models/store-models.js';

function usage(): string {
  const lines = [
    'Usage: tsserve models generate [DIR] [--force] [--only NAME[,NAME...]]',
    '',
    'Writes the demo model store into DIR (default ./model-store), one directory per model',
    'with its model.onnx and model-config.yaml. Existing model directories are kept unless',
    '--force. Weights are random but fixed by a seed: two runs write identical files.',
    '',
    'Models:',
    ...STORE_MODELS.map((m) => `  ${m.name.padEnd(12)} ${m.summary}`),
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
  let dir: string | undefined;
  let force = false;
  let only: string[] | undefined;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === '--help' || a === '-h') {
      process.stdout.write(usage());
      return 0;
    } else if (a === '--force') {
      force = true;
    } else if (a === '--only' || a.startsWith('--only=')) {
      const v = a === '--only' ? rest[++i] : a.slice('--only='.length);
      if (v === undefined || v === '') {
        process.stderr.write('tsserve models generate: --only needs a comma-separated list of model names\n');
        return 2;
      }
      only = v.split(',').filter((s) => s !== '');
    } else if (a.startsWith('-')) {
      process.stderr.write(`tsserve models generate: unknown option '${a}'\n\n${usage()}`);
      return 2;
    } else if (dir === undefined) {
      dir = a;
    } else {
      process.stderr.write(`tsserve models generate: unexpected argument '${a}'\n`);
      return 2;
    }
  }
  const target = dir ?? 'model-store';
  try {
    const r = await generateStore(target, { force, only, log: (line) => process.stdout.write(`${line}\n`) });
    process.stdout.write(`model store ${target}: ${r.written.length} written, ${r.skipped.length} kept\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`tsserve models generate: ${(err as Error).message}\n`);
    return 1;
  }
}
