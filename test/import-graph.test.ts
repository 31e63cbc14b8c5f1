/**
 * No import cycles anywhere in the tree, `import type` included (CONTRIBUTING.md, "Boundaries"):
 * a cycle means two files are one concept split in two, or a shape that belongs in a third file
 * both can import. The walker reads the sources, so a cycle fails before anything is built.
 */
import { expect } from 'chai';
import * as path from 'path';
import { importCycles, importGraph } from './support/import-graph.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DIRS = ['schema', 'frontend', 'backend', 'tools', 'test', 'examples'];

describe('import graph', () => {
  it('should find no import cycle among the sources of schema/, frontend/, backend/, tools/, test/ and examples/', () => {
    const graph = importGraph(ROOT, DIRS);
    // The walk saw the tree (an empty graph has no cycles either).
    expect(graph.get('backend/metrics/worker-metrics.ts')).to.include('schema/flush/flusher.ts');
    expect(importCycles(graph)).to.deep.equal([]);
  });

  it('should report every file of a cycle, a type-only one included, and a file importing itself', () => {
    const graph = new Map<string, string[]>([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(importCycles(graph)).to.deep.equal([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
  });
});
