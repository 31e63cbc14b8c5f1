/**
 * The house boundaries (CONTRIBUTING.md, "Boundaries") are lint rules in eslint.config.js; `npm run lint`
 * holds the tree to them in CI. These tests show each rule really fires: ESLint, with the repo's
 * own config, lints a snippet placed (virtually) where it would cross a boundary, and we assert
 * the exact messages. Type-aware rules are switched off here (the snippets are not in the
 * tsconfig program, and no boundary rule needs types).
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }],
});

/** Lints `code` as if it were the file `rel`; one `line:rule: message` string per problem. */
async function lint(rel: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, rel) });
  return (result?.messages ?? []).map((m) => `${m.line}:${m.ruleId ?? 'parse'}: ${m.message}`);
}

/** Every .ts and .js file under the given folders or files (relative to the repo root). */
function sourceFiles(entries: readonly string[]): string[] {
  const out: string[] = [];
  for (const rel of entries) {
    const abs = path.join(ROOT, rel);
    if (!fs.existsSync(abs)) continue;
    if (!fs.statSync(abs).isDirectory()) out.push(rel);
    else
      out.push(
        ...sourceFiles(fs.readdirSync(abs).map((name) => path.join(rel, name))).filter((f) => /\.[jt]s$/.test(f)),
      );
  }
  return out;
}

const R = '@typescript-eslint/no-restricted-imports';
const restricted = (lib: string, why: string): string =>
  `${R}: '${lib}' import is restricted from being used by a pattern. ${why}`;
const adapterWhy = (lib: string, where: string): string =>
  `${lib} lives behind its adapter: import it only in ${where} (CONTRIBUTING.md: one outside library per adapter file).`;
const adapter = (lib: string, where: string): string => restricted(lib, adapterWhy(lib, where));

describe('Boundaries', () => {
  it('should keep schema/ from importing frontend/ or backend/', async () => {
    const why = 'schema/ holds what both sides share and imports neither frontend/ nor backend/.';
    expect(
      await lint(
        'schema/config/x.ts',
        [
          "import { a } from '../../frontend/metrics/api.js';",
          "export { b } from '../../backend/metrics/units.js';",
          "import type { T } from '../types.js';",
          'export const c: T = a;',
        ].join('\n'),
      ),
    ).to.deep.equal([
      `1:${restricted('../../frontend/metrics/api.js', why)}`,
      `2:${restricted('../../backend/metrics/units.js', why)}`,
    ]);
  });

  it('should keep frontend/ and backend/ from importing each other, types included', async () => {
    expect(
      await lint(
        'frontend/server/x.ts',
        "import type { W } from '../../backend/worker/worker.js';\nexport type X = W;\n",
      ),
    ).to.deep.equal([
      `1:${restricted('../../backend/worker/worker.js', 'frontend/ never imports backend/: they meet only in schema/ (workers are started by file path).')}`,
    ]);
    const why = 'backend/ never imports frontend/: they meet only in schema/ (IPC message types live there).';
    expect(
      await lint('backend/worker/x.ts', "import { f } from '../../frontend/server/server.js';\nexport const x = f;\n"),
    ).to.deep.equal([`1:${restricted('../../frontend/server/server.js', why)}`]);
    expect(
      await lint(
        'backend/worker/x.ts',
        "export const m = import('../../frontend/server/server.js');\nexport const o = import('onnxruntime-node');\n",
      ),
    ).to.deep.equal([
      `1:no-restricted-syntax: import(): ${why}`,
      `2:no-restricted-syntax: import(): ${adapterWhy('onnxruntime-node', 'backend/onnx/ort.ts')}`,
    ]);
  });

  it('should allow each outside library only in its adapter file', async () => {
    const cases: readonly (readonly [lib: string, outside: string, home: string, where: string])[] = [
      [
        'prom-client',
        'frontend/metrics/ingest.ts',
        'frontend/metrics/sinks/prometheus.ts',
        'frontend/metrics/sinks/prometheus.ts, frontend/metrics/exposition/process-metrics.ts',
      ],
      [
        'prom-client',
        'frontend/metrics/sinks/statsd.ts',
        'frontend/metrics/exposition/process-metrics.ts',
        'frontend/metrics/sinks/prometheus.ts, frontend/metrics/exposition/process-metrics.ts',
      ],
      [
        'hot-shots',
        'frontend/metrics/sinks/tslog.ts',
        'frontend/metrics/sinks/statsd.ts',
        'frontend/metrics/sinks/statsd.ts',
      ],
      ['onnxruntime-node', 'backend/handlers/onnx.ts', 'backend/onnx/ort.ts', 'backend/onnx/ort.ts'],
      ['pino', 'frontend/server/server.ts', 'frontend/log/logger.ts', 'frontend/log/logger.ts'],
      ['pino-pretty', 'frontend/log/other.ts', 'frontend/log/logger.ts', 'frontend/log/logger.ts'],
      ['sonic-boom', 'frontend/log/logger.ts', 'frontend/log/rotating-file.ts', 'frontend/log/rotating-file.ts'],
      ['js-yaml', 'frontend/store/model-config.ts', 'schema/config/yaml-source.ts', 'schema/config/yaml-source.ts'],
      ['js-yaml', 'backend/engine/load.ts', 'schema/config/yaml-source.ts', 'schema/config/yaml-source.ts'],
      ['ajv', 'schema/config/load.ts', 'schema/config/schema-check.ts', 'schema/config/schema-check.ts'],
    ];
    for (const [lib, outside, home, where] of cases) {
      const code = `import x from '${lib}';\nexport const y = x;\n`;
      expect(await lint(outside, code), `${lib} in ${outside}`).to.deep.equal([`1:${adapter(lib, where)}`]);
      expect(await lint(home, code), `${lib} in ${home}`).to.deep.equal([]);
    }
  });

  it('should flag a library subpath too, but not a package whose name merely starts the same', async () => {
    expect(
      await lint(
        'frontend/metrics/ingest.ts',
        "import x from 'pino/file';\nimport y from 'pinot';\nexport const z = [x, y];\n",
      ),
    ).to.deep.equal([`1:${restricted('pino/file', adapterWhy('pino', 'frontend/log/logger.ts'))}`]);
  });

  it('should allow express in frontend/http/, openai/ and server/, and only its types elsewhere in frontend/', async () => {
    const where = 'frontend/http/, frontend/openai/, frontend/server/';
    const value = "import express from 'express';\nexport const app = express();\n";
    const types = "import type { Router } from 'express';\nexport type R = Router;\n";
    for (const home of ['frontend/http/x.ts', 'frontend/openai/x.ts', 'frontend/server/x.ts']) {
      expect(await lint(home, value), home).to.deep.equal([]);
    }
    expect(await lint('frontend/metrics/x.ts', types)).to.deep.equal([]);
    expect(await lint('frontend/metrics/x.ts', value)).to.deep.equal([
      `1:${restricted('express', `express lives behind its adapter: import it only in ${where} (elsewhere in frontend/, \`import type\` from it is fine) (CONTRIBUTING.md: one outside library per adapter file).`)}`,
    ]);
    expect(await lint('backend/worker/x.ts', types)).to.deep.equal([`1:${adapter('express', where)}`]);
  });

  it("should let tests and tools import libraries directly but not a package's lib/ or dist/ internals", async () => {
    const why =
      'Import a package by its public entry point, not its lib/ or dist/ internals: they change without notice between versions.';
    const code =
      "import { Registry } from 'prom-client';\nimport c from 'prom-client/lib/cluster';\nimport d from '@scope/pkg/dist/x.js';\nexport const all = [Registry, c, d];\n";
    for (const file of ['test/x.test.ts', 'tools/bench/x.ts']) {
      expect(await lint(file, code), file).to.deep.equal([
        `2:${restricted('prom-client/lib/cluster', why)}`,
        `3:${restricted('@scope/pkg/dist/x.js', why)}`,
      ]);
    }
    expect(await lint('frontend/metrics/sinks/prometheus.ts', code)).to.deep.equal([
      `2:${restricted('prom-client/lib/cluster', why)}`,
      `3:${restricted('@scope/pkg/dist/x.js', why)}`,
    ]);
  });

  it('should keep each frontend folder from importing its layer peers and every layer above, types and import() included', async () => {
    const why = (dir: string, banned: readonly string[]): string =>
      `frontend/${dir}/ must not import ${banned.map((b) => `frontend/${b}/`).join(', ')}: the frontend's folders point one way (FRONTEND_LAYERS in eslint.config.js).`;
    const modelsWhy = why('models', [
      'http',
      'generation',
      'embeddings',
      'pipeline',
      'openai',
      'openapi',
      'kinds',
      'cluster',
      'server',
    ]);
    expect(
      await lint(
        'frontend/models/x.ts',
        [
          "import { sendError } from '../http/errors.js';",
          "import type { ServerConfig } from '../server/server.js';",
          "export const m = import('../cluster/front-main.js');",
          "import { Batcher } from '../batching/batcher.js';",
          "import type { WorkerPoolDeps } from '../workers/worker-pool.js';",
          'export const x: [unknown, ServerConfig?, WorkerPoolDeps?] = [sendError, undefined, undefined];',
          'export const b = Batcher;',
        ].join('\n'),
      ),
    ).to.deep.equal([
      `1:${restricted('../http/errors.js', modelsWhy)}`,
      `2:${restricted('../server/server.js', modelsWhy)}`,
      `3:no-restricted-syntax: import(): ${modelsWhy}`,
    ]);
    // From a subfolder (http/oip/) the climb is longer; http/ may import models/ but not openai/.
    const httpWhy = why('http', [
      'generation',
      'embeddings',
      'pipeline',
      'openai',
      'openapi',
      'kinds',
      'cluster',
      'server',
    ]);
    expect(
      await lint(
        'frontend/http/oip/x.ts',
        "import type { ServedModel } from '../../models/served-model.js';\nimport { openaiRouter } from '../../openai/router.js';\nexport const x: [ServedModel?, unknown?] = [undefined, openaiRouter];\n",
      ),
    ).to.deep.equal([`2:${restricted('../../openai/router.js', httpWhy)}`]);
    // Peers of one layer meet below: metrics/ and store/ do not import each other.
    expect(
      await lint(
        'frontend/metrics/x.ts',
        "import { ModelStore } from '../store/model-store.js';\nexport const s = ModelStore;\n",
      ),
    ).to.deep.equal([
      `1:${restricted('../store/model-store.js', why('metrics', ['batching', 'store', 'system', 'image', 'workers', 'status', 'models', 'http', 'generation', 'embeddings', 'pipeline', 'openai', 'openapi', 'kinds', 'cluster', 'server']))}`,
    ]);
    // An adapter file keeps its folder's direction (its own config object replaces the folder's).
    expect(
      await lint(
        'frontend/log/logger.ts',
        "import pino from 'pino';\nimport { a } from '../models/x.js';\nexport const l = [pino, a];\n",
      ),
    ).to.deep.equal([
      `2:${restricted('../models/x.js', why('log', ['batching', 'store', 'metrics', 'system', 'image', 'workers', 'status', 'models', 'http', 'generation', 'embeddings', 'pipeline', 'openai', 'openapi', 'kinds', 'cluster', 'server']))}`,
    ]);
    // The top (server/, cluster/ below it, frontend/main.ts) imports anything below.
    const top =
      "import { a } from '../openai/router.js';\nimport { b } from '../kinds/default-kinds.js';\nexport const x = [a, b];\n";
    expect(await lint('frontend/server/x.ts', top)).to.deep.equal([]);
    expect(await lint('frontend/cluster/x.ts', top)).to.deep.equal([]);
    expect(
      await lint(
        'frontend/x.ts',
        "import { s } from './server/server.js';\nimport { k } from './kinds/default-kinds.js';\nexport const x = [s, k];\n",
      ),
    ).to.deep.equal([]);
    expect(
      await lint('frontend/cluster/x.ts', "import { s } from '../server/server.js';\nexport const x = s;\n"),
    ).to.deep.equal([`1:${restricted('../server/server.js', why('cluster', ['server']))}`]);
  });

  it('should refuse a source file over 400 lines and a test file over 800, blank and comment lines counted', async () => {
    // Half blank or comment lines: a bound that skipped them would pass every one of these files.
    const file = (n: number): string =>
      Array.from({ length: n }, (_, i) =>
        i % 2 === 0 ? `export const v${i} = ${i};` : i % 4 === 1 ? '' : '// why',
      ).join('\n');
    expect([
      await lint('frontend/log/x.ts', file(400)),
      await lint('backend/engine/x.ts', file(401)),
      await lint('schema/x.ts', file(401)),
      await lint('tools/bench/x.ts', file(401)),
      await lint('examples/x.ts', file(401)),
      await lint('test/frontend/x.test.ts', file(800)),
      await lint('test/frontend/x.test.ts', file(801)),
    ]).to.deep.equal([
      [],
      ['401:max-lines: File has too many lines (401). Maximum allowed is 400.'],
      ['401:max-lines: File has too many lines (401). Maximum allowed is 400.'],
      ['401:max-lines: File has too many lines (401). Maximum allowed is 400.'],
      ['401:max-lines: File has too many lines (401). Maximum allowed is 400.'],
      [],
      ['801:max-lines: File has too many lines (801). Maximum allowed is 800.'],
    ]);
  });

  it("should forbid prom-client's private hashMap anywhere", async () => {
    expect(
      await lint(
        'frontend/metrics/sinks/prometheus.ts',
        'export const f = (m: { hashMap: object }): object => m.hashMap;\n',
      ),
    ).to.deep.equal([
      "1:no-restricted-properties: 'hashMap' is restricted from being used. hashMap is prom-client's private series map, not its API: go through the metric's public methods.",
    ]);
  });

  it('should require an eslint-disable comment to cover one line, name its rules and give a reason', async () => {
    const rule = 'house/narrow-silencing';
    expect(
      await lint(
        'frontend/metrics/x.ts',
        [
          '// eslint-disable-next-line no-restricted-properties',
          'export const a = (m: { hashMap: object }): object => m.hashMap;',
          '// eslint-disable-next-line no-restricted-properties -- a fixture for this test',
          'export const b = (m: { hashMap: object }): object => m.hashMap;',
          '/* eslint-disable no-restricted-properties -- a whole range */',
          'export const c = (m: { hashMap: object }): object => m.hashMap;',
          '/* eslint no-console: off */',
        ].join('\n'),
      ),
    ).to.deep.equal([
      `1:${rule}: An eslint-disable comment names the rules it disables and says why after " -- " (e.g. \`// eslint-disable-next-line rule -- reason\`).`,
      `5:${rule}: Disable one line at a time (\`// eslint-disable-next-line rule -- reason\`), not a range; a rule wrong for a whole file belongs in eslint.config.js.`,
      `7:${rule}: Configure rules in eslint.config.js, not in an inline \`/* eslint ... */\` comment.`,
    ]);
  });

  it('should find no unnamed eslint-disable in the tree (it would silence the rule above too)', () => {
    const unnamed = /eslint-disable(-line|-next-line)?\s*(\*\/|--|$)/m;
    const found = sourceFiles([
      'schema',
      'frontend',
      'backend',
      'test',
      'tools',
      'examples',
      'bin',
      'eslint.config.js',
    ]).filter((rel) => unnamed.test(fs.readFileSync(path.join(ROOT, rel), 'utf8')));
    expect(found).to.deep.equal([]);
  });
});
