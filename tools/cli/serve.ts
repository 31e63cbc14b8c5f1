/**
 * `tsserve serve DIR [options]`: serves one model directory as `vllm serve DIR` does: the store is
 * DIR's parent and the model DIR's name (a Hugging Face export needs no model-config.yaml). The
 * operator names DIR at start-up; registration over HTTP still loads only from inside that store.
 * Every `tsserve start` option applies (the OpenAI endpoints and metrics are any start's), but
 * --model-store and --models, which DIR sets; `--port N` / `--host H` are short for
 * `--inference-address http://H:N`, `--served-model-name NAME` serves it under another name.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MODEL_NAME_RE } from '../../frontend/store/model-store.js';

const USAGE = `Usage: tsserve serve DIR [options]

Serves the model directory DIR (a Hugging Face export with config.json, tokenizer.json and an
ONNX file, or any directory with a model-config.yaml) as vllm serve DIR does: the model store
is DIR's parent, the model is named after DIR.

Options (and every option of tsserve start but --model-store and --models):
  --port N                 inference port (default 8080): --inference-address http://HOST:N
  --host H                 inference host (default 127.0.0.1)
  --served-model-name NAME the model's name in the API (default: DIR's name)
  -h, --help               this text
`;

/** The value of `--flag V` / `--flag=V` at argv[i], and how many entries it took. */
function valueAt(argv: readonly string[], i: number, flag: string): { value: string | undefined; used: number } | null {
  const a = argv[i]!;
  if (a === `--${flag}`) return { value: argv[i + 1], used: 2 };
  if (a.startsWith(`--${flag}=`)) return { value: a.slice(flag.length + 3), used: 1 };
  return null;
}

/** Runs `tsserve serve`; resolves to the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h') {
    process.stdout.write(USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  const fail = (msg: string): number => {
    process.stderr.write(`tsserve serve: ${msg}\n`);
    return 2;
  };
  const dirArg = argv[0]!;
  if (dirArg.startsWith('-'))
    return fail(`the model directory comes first: tsserve serve DIR [options] (got ${dirArg})`);
  let real: string;
  try {
    real = fs.realpathSync(path.resolve(dirArg));
  } catch {
    return fail(`model directory ${dirArg} does not exist`);
  }
  if (!fs.statSync(real).isDirectory()) return fail(`${dirArg} is not a directory`);
  let name = path.basename(real);
  let host: string | undefined;
  let port: string | undefined;
  const rest: string[] = [];
  for (let i = 1; i < argv.length;) {
    const a = argv[i]!;
    if (a === '--model-store' || a.startsWith('--model-store=') || a === '--models' || a.startsWith('--models='))
      return fail(
        `${a.replace(/=.*/, '')}: serve DIR serves DIR alone (its parent is the store); use tsserve start for a store`,
      );
    const p = valueAt(argv, i, 'port') ?? valueAt(argv, i, 'host') ?? valueAt(argv, i, 'served-model-name');
    if (p === null) {
      rest.push(a);
      i++;
      continue;
    }
    if (p.value === undefined || p.value === '') return fail(`${a.replace(/=.*/, '')}: needs a value`);
    if (a.startsWith('--port')) {
      if (!/^\d{1,5}$/.test(p.value) || Number(p.value) > 65535) return fail(`--port: '${p.value}' is not a port`);
      port = p.value;
    } else if (a.startsWith('--host')) host = p.value;
    else name = p.value;
    i += p.used;
  }
  if (!MODEL_NAME_RE.test(name))
    return fail(`'${name}' is not a model name (letters, digits, '_', '.', '-'); give one with --served-model-name`);
  const short = port !== undefined || host !== undefined;
  if (short && rest.some((a) => a.startsWith('--inference-address')))
    return fail('--port/--host and --inference-address both set the inference listener; give one');
  const inference = short ? ['--inference-address', `http://${host ?? '127.0.0.1'}:${port ?? '8080'}`] : [];
  const start = await import('./start.js');
  return start.run([
    '--model-store',
    path.dirname(real),
    '--models',
    `${name}=${path.basename(real)}`,
    ...inference,
    ...rest,
  ]);
}
