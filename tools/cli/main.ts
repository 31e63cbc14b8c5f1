/**
 * `tsserve` command dispatcher. Each command lives in its own module exporting
 * `run(argv): Promise<number>` (the exit code), loaded only when used so `tsserve metrics
 * validate` never pays for onnxruntime or express.
 */
import { readFileSync } from 'fs';
import * as path from 'path';
import { nearest, unknownOption } from '../../frontend/server/flags.js';

interface Command {
  readonly summary: string;
  readonly load: () => Promise<{ run(argv: readonly string[]): Promise<number> }>;
}

const COMMANDS: Readonly<Record<string, Command>> = {
  start: { summary: 'serve models (inference, management and metrics APIs)', load: () => import('./start.js') },
  serve: {
    summary: 'serve one model directory (a Hugging Face export needs no model-config.yaml), as vllm serve DIR',
    load: () => import('./serve.js'),
  },
  metrics: {
    summary: 'validate metrics.yaml, list the metric catalog, tail the metric logs, write handler types',
    load: () => import('./metrics.js'),
  },
  models: { summary: 'generate the demo model store', load: () => import('./models.js') },
  generate: {
    summary: 'offline generation: prompts from a JSONL file through the engine',
    load: () => import('./generate.js'),
  },
  speak: {
    summary: 'offline spoken answers of a pipeline model (WAV files) through its orchestrator',
    load: () => import('./speak.js'),
  },
};

/** Usage text listing every command. */
export function usage(): string {
  const lines = ['Usage: tsserve <command> [options]', '', 'Commands:'];
  for (const [name, cmd] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(10)} ${cmd.summary}`);
  lines.push(
    '',
    'Options:',
    `  ${'-h, --help'.padEnd(16)} this text`,
    `  ${'-v, --version'.padEnd(16)} print the version`,
  );
  lines.push('', 'Run `tsserve <command> --help` for the options of one command.');
  return lines.join('\n') + '\n';
}

/** The package version (package.json at the repo root; this file runs from dist/tools/cli). */
export function version(): string {
  const pkg = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** Runs the CLI; resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (name.startsWith('-')) {
    process.stderr.write(
      `tsserve: ${unknownOption(name.replace(/=.*/, ''), [{ flag: 'version', kind: 'bool' }], 'tsserve')}\n`,
    );
    return 2;
  }
  // A reader that stops early (`tsserve metrics list | head`) closes the pipe: the rest of the
  // output has nowhere to go, so the command ends quietly instead of dying on an unhandled EPIPE
  // with a stack. `start` keeps serving: its log goes to ts_log.log as well.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    if (name !== 'start') process.exit(0);
  });
  const cmd = COMMANDS[name];
  if (cmd === undefined) {
    const near = nearest(name, Object.keys(COMMANDS));
    process.stderr.write(
      `tsserve: unknown command '${name}'${near !== null ? `; did you mean '${near}'?` : ''}\n\n${usage()}`,
    );
    return 2;
  }
  return (await cmd.load()).run(rest);
}
