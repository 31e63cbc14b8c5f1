/**
 * The house rules a reviewer would otherwise have to remember (STYLE.md, "Boundaries"):
 * schema/ imports nothing from frontend/ or backend/; frontend/ and backend/ never import each
 * other; each outside library lives behind one adapter file.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** Every .ts file under `dir` (relative to the repo root), recursively. */
function tsFiles(dir: string): string[] {
  const abs = path.join(ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(rel));
    else if (entry.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/** Module specifiers a file imports or requires. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const specs: string[] = [];
  const re = /(?:import\s[^'"]*?from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)['"]([^'"]+)['"]/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) specs.push(m[1] as string);
  return specs;
}

/** Top-level folder an import lands in, resolved from the importing file. */
function targetTop(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const resolved = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec));
  return resolved.split(path.sep)[0] ?? null;
}

function violations(dirs: readonly string[], forbiddenTops: readonly string[]): string[] {
  const bad: string[] = [];
  for (const dir of dirs) {
    for (const file of tsFiles(dir)) {
      for (const spec of importsOf(file)) {
        const top = targetTop(file, spec);
        if (top !== null && forbiddenTops.includes(top)) bad.push(`${file} imports ${spec}`);
      }
    }
  }
  return bad;
}

describe('Boundaries', () => {
  it('should keep schema/ free of frontend/ and backend/ imports', () => {
    expect(violations(['schema'], ['frontend', 'backend'])).to.deep.equal([]);
  });

  it('should keep frontend/ and backend/ from importing each other', () => {
    expect(violations(['frontend'], ['backend'])).to.deep.equal([]);
    expect(violations(['backend'], ['frontend'])).to.deep.equal([]);
  });

  it('should import each outside library from one adapter folder only', () => {
    const adapters: Readonly<Record<string, RegExp>> = {
      'prom-client': /^frontend\/metrics\/(sinks\/prometheus|exposition\/process-metrics)\.ts$/,
      'hot-shots': /^frontend\/metrics\/sinks\/statsd/,
      'onnxruntime-node': /^backend\/onnx\//,
    };
    const bad: string[] = [];
    for (const file of [...tsFiles('schema'), ...tsFiles('frontend'), ...tsFiles('backend')]) {
      for (const spec of importsOf(file)) {
        const allowed = adapters[spec];
        if (allowed !== undefined && !allowed.test(file.split(path.sep).join('/'))) bad.push(`${file} imports ${spec}`);
      }
    }
    expect(bad).to.deep.equal([]);
  });
});
