/**
 * Server code logs through the one logger (frontend/log): no file under frontend/, backend/ or
 * schema/ writes to the console itself. CLI output (tables, usage) lives in tools/cli/.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** Files allowed a raw write, each with the reason it cannot go through the logger. */
const ALLOWED: Readonly<Record<string, string>> = {
  'backend/worker/main.ts':
    'the worker has no logger; stderr is its last-resort channel (no IPC channel yet, or a broken one), and the frontend captures worker stderr into ts_log.log',
  'frontend/metrics/frontend-metrics.ts':
    'default log when none is passed (unit tests); tsserve start always passes the logger; the file belongs to the metrics rewrite',
  'frontend/metrics/ingest.ts':
    'default log when none is passed (unit tests); tsserve start always passes the logger; the file belongs to the metrics rewrite',
};

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...tsFiles(rel));
    else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

describe('Server output', () => {
  it('should never call console.* or process.stdout/stderr.write outside the allow-list', () => {
    const found: string[] = [];
    for (const file of ['frontend', 'backend', 'schema'].flatMap(tsFiles)) {
      const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (/\bconsole\.[a-z]+\s*\(|process\.(stdout|stderr)\.write\s*\(/.test(line)) found.push(`${file}:${i + 1}`);
      });
    }
    const unexpected = found.filter((f) => ALLOWED[f.replace(/:\d+$/, '')] === undefined);
    expect(unexpected).to.deep.equal([]);
  });
});
