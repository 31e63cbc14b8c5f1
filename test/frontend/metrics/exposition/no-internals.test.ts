import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repo root (this file runs from dist/test/frontend/metrics/exposition). */
const ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(rel));
    else if (/\.(ts|js|mjs|cjs)$/.test(e.name)) out.push(rel);
  }
  return out;
}

/** Ways of reaching into a library's internals: prom-client's series map, deep imports, `_private` fields. */
const INTERNALS: readonly RegExp[] = [
  /\bhashMap\b/,
  /['"]prom-client\/lib/,
  /['"](hot-shots|onnxruntime-node|pino|js-yaml|express)\/(lib|dist|src)\//,
  /\b(registry|metric|counter|gauge|histogram|client)\._[a-zA-Z]\w*/i,
  /\]\s*as\s+unknown\s+as\s+\{\s*_/,
];

describe('Library internals', () => {
  it('should not be reached anywhere in the source tree (no hashMap, no deep imports, no _private fields)', () => {
    const hits: string[] = [];
    for (const file of ['frontend', 'backend', 'schema', 'tools', 'bin']
      .filter((d) => fs.existsSync(path.join(ROOT, d)))
      .flatMap(sources)) {
      fs.readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const re of INTERNALS) if (re.test(line)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(hits).to.deep.equal([]);
  });
});
