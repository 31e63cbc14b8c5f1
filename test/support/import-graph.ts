/**
 * The import graph of the repo's TypeScript sources (every relative `import`, `import type`,
 * `export … from` and `import('…')`, read with the repo's `typescript` package) and its cycles.
 */
import * as fs from 'fs';
import * as path from 'path';
import ts from 'typescript';

/** Files (relative to `root`, `/`-separated) and the files each imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** The graph of every `.ts` file under `dirs` of `root` (declaration files and `node_modules` aside). */
export function importGraph(root: string, dirs: readonly string[]): ImportGraph {
  const files: string[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory() && e.name !== 'node_modules') walk(r);
      else if (e.isFile() && r.endsWith('.ts') && !r.endsWith('.d.ts')) files.push(r);
    }
  };
  for (const d of dirs) if (fs.existsSync(path.join(root, d))) walk(d);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const info = ts.preProcessFile(fs.readFileSync(path.join(root, f), 'utf8'), true, true);
    const deps = new Set<string>();
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), fileName.replace(/\.js$/, '.ts')));
      if (fs.existsSync(path.join(root, target))) deps.add(target);
    }
    graph.set(f, [...deps].sort());
  }
  return graph;
}

/**
 * The strongly connected components of more than one file (or a file importing itself), each
 * sorted, in sorted order: every import cycle is inside one of them (Tarjan's algorithm).
 */
export function importCycles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
