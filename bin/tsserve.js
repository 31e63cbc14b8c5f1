#!/usr/bin/env node
'use strict';
// Thin launcher: the CLI is compiled from tools/cli/ into dist/ by `npm run build`.
const path = require('path');
const fs = require('fs');
const entry = path.join(__dirname, '..', 'dist', 'tools', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write('tsserve: not built yet; run `npm run build` (npm start and npm test build first)\n');
  process.exit(2);
}
require(entry).main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (err) => { process.stderr.write(`tsserve: ${err && err.stack ? err.stack : err}\n`); process.exit(1); },
);
