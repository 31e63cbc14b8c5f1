#!/usr/bin/env node
// Thin launcher: the CLI is compiled from tools/cli/ into dist/ by `npm run build`.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const entry = join(import.meta.dirname, '..', 'dist', 'tools', 'cli', 'main.js');
if (!existsSync(entry)) {
  process.stderr.write('tsserve: not built yet; run `npm run build` (npm start and npm test build first)\n');
  process.exit(2);
}
const { main } = await import(pathToFileURL(entry).href);
main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`tsserve: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
