/**
 * `tsserve` command dispatcher. Each command lives in its own module exporting
 * `run(argv): Promise<number>` (the exit code), loaded only when used so `tsserve metrics
 * validate` never pays for onnxruntime or express.
 */

interface Command {
  readonly summary: string;
  readonly load: () => Promise<{ run(argv: readonly string[]): Promise<number> }>;
}

const COMMANDS: Readonly<Record<string, Command>> = {
  start: { summary: 'serve models (inference, management and metrics APIs)', load: () => import('./start.js') },
  metrics: { summary: 'validate metrics.yaml, list the metric catalog', load: () => import('./metrics.js') },
  models: { summary: 'generate the demo model store', load: () => import('./models.js') },
  generate: { summary: 'offline generation: prompts from a JSONL file through the engine', load: () => import('./generate.js') },
};

/** Usage text listing every command. */
export function usage(): string {
  const lines = ['Usage: tsserve <command> [options]', '', 'Commands:'];
  for (const [name, cmd] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(10)} ${cmd.summary}`);
  lines.push('', 'Run `tsserve <command> --help` for the options of one command.');
  return lines.join('\n') + '\n';
}

/** Runs the CLI; resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const cmd = COMMANDS[name];
  if (cmd === undefined) {
    process.stderr.write(`tsserve: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  return (await cmd.load()).run(rest);
}
