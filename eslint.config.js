// ESLint flat config: typescript-eslint's type-checked rules on every .ts file, JS recommended on
// the few .js files, and the house boundaries (CONTRIBUTING.md, "Boundaries") as lint rules, so CI fails
// when one is crossed instead of relying on a reviewer's memory.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Each outside library and the only files (globs) allowed to import it. */
const LIBRARIES = [
  {
    name: 'prom-client',
    homes: ['frontend/metrics/sinks/prometheus.ts', 'frontend/metrics/exposition/process-metrics.ts'],
  },
  { name: 'hot-shots', homes: ['frontend/metrics/sinks/statsd.ts'] },
  { name: '@opentelemetry/sdk-metrics', homes: ['frontend/metrics/sinks/otlp.ts'] },
  { name: '@opentelemetry/exporter-metrics-otlp-proto', homes: ['frontend/metrics/sinks/otlp.ts'] },
  { name: '@opentelemetry/resources', homes: ['frontend/metrics/sinks/otlp.ts'] },
  { name: '@opentelemetry/core', homes: ['frontend/metrics/sinks/otlp.ts'] },
  { name: '@opentelemetry/api', homes: ['frontend/metrics/sinks/otlp.ts'] },
  { name: 'onnxruntime-node', homes: ['backend/onnx/ort.ts'] },
  { name: '@huggingface/tokenizers', homes: ['schema/text/hf-tokenizer.ts'] },
  { name: '@huggingface/jinja', homes: ['schema/text/chat-jinja.ts'] },
  { name: 'sharp', homes: ['frontend/image/sharp-image.ts'] },
  { name: 'pino', homes: ['frontend/log/logger.ts'] },
  { name: 'pino-pretty', homes: ['frontend/log/logger.ts'] },
  { name: 'sonic-boom', homes: ['frontend/log/rotating-file.ts'] },
  { name: 'js-yaml', homes: ['schema/config/yaml-source.ts'] },
  { name: 'ajv', homes: ['schema/config/schema-check.ts'] },
  { name: '@grafana/schema', homes: ['tools/dashboards/grafana.ts'] },
  // The HTTP layer; elsewhere in frontend/ a handler signature may still name express's types.
  { name: 'express', homes: ['frontend/http/**', 'frontend/openai/**', 'frontend/server/**'], typesIn: 'frontend' },
];

/** Longest source file (frontend/, backend/, schema/, tools/, examples/), every line counted. */
const SOURCE_MAX_LINES = 400;
/** Longest test file (test/), every line counted: twice a source file's bound. */
const TEST_MAX_LINES = 800;

/** The top-level folders each source folder must not import (they meet only in schema/). */
const FORBIDDEN_DIRS = {
  schema: {
    dirs: ['frontend', 'backend'],
    why: 'schema/ holds what both sides share and imports neither frontend/ nor backend/',
  },
  frontend: {
    dirs: ['backend'],
    why: 'frontend/ never imports backend/: they meet only in schema/ (workers are started by file path)',
  },
  backend: {
    dirs: ['frontend'],
    why: 'backend/ never imports frontend/: they meet only in schema/ (IPC message types live there)',
  },
};

/**
 * The frontend's folders, lowest layer first. A folder imports only from lower layers: never from
 * its own layer's other folders (they meet below) nor from any above. `models/` holds the domain
 * (served models, model kinds, the model manager) that the HTTP, OpenAI, pipeline and cluster
 * folders depend on; `kinds/` composes a model with its routes; `server/` the listeners, and
 * `frontend/main.ts` (createServer) everything.
 */
const FRONTEND_LAYERS = [
  ['log'],
  ['batching', 'store', 'metrics', 'system', 'image'],
  ['workers', 'status'],
  ['models'],
  ['http'],
  ['generation', 'embeddings'],
  ['pipeline'],
  ['openai'],
  ['openapi', 'kinds'],
  ['cluster'],
  ['server'],
];

/** Per frontend folder, the frontend folders it must not import (its layer's peers and every layer above). */
const FRONTEND_FORBIDDEN = Object.fromEntries(
  FRONTEND_LAYERS.flatMap((layer, i) =>
    layer.map((dir) => [dir, [...layer.filter((d) => d !== dir), ...FRONTEND_LAYERS.slice(i + 1).flat()]]),
  ),
);

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A library's package name or any of its subpaths (`pkg`, `pkg/x`), never `pkg-other`. */
function libraryPattern(lib, dir) {
  const where = lib.homes.map((h) => h.replace(/\/\*\*$/, '/')).join(', ');
  const types = lib.typesIn === dir ? ` (elsewhere in ${dir}/, \`import type\` from it is fine)` : '';
  return {
    regex: `^${escape(lib.name)}(/|$)`,
    caseSensitive: true,
    allowTypeImports: lib.typesIn === dir,
    message: `${lib.name} lives behind its adapter: import it only in ${where}${types} (CONTRIBUTING.md: one outside library per adapter file).`,
  };
}

// Relative specifiers only (`../../backend/x.js`): a path that climbs to the repo root and enters
// the forbidden folder. Folders below the top are not named frontend/ or backend/, so counting
// the `../` is not needed.
function dirPattern(dir) {
  const rule = FORBIDDEN_DIRS[dir];
  return {
    regex: `^(\\.\\./)+(${rule.dirs.join('|')})(/|$)`,
    caseSensitive: true,
    message: `${rule.why}.`,
  };
}

// From a file anywhere below frontend/<folder>/, a relative path that climbs and enters a folder
// it must not import. No folder below a frontend folder shares a frontend folder's name, and the
// repo root has none of those names either, so counting the `../` is not needed.
function layerPattern(dir) {
  const banned = FRONTEND_FORBIDDEN[dir];
  return {
    regex: `^(\\.\\./)+(${banned.join('|')})(/|$)`,
    caseSensitive: true,
    message: `frontend/${dir}/ must not import frontend/${banned.join('/, frontend/')}/: the frontend's folders point one way (FRONTEND_LAYERS in eslint.config.js).`,
  };
}

/** The direction pattern of the frontend folder that holds `file` (a path or glob), if any. */
function layerPatternsOf(file) {
  const m = /^frontend\/([^/]+)\//.exec(file);
  return m !== null && m[1] in FRONTEND_FORBIDDEN && FRONTEND_FORBIDDEN[m[1]].length > 0 ? [layerPattern(m[1])] : [];
}

/** No reaching into a package's internals: `prom-client/lib/...`, `x/dist/...`. */
const INTERNALS = {
  regex: '^(?![./]|node:)(@[^/]+/)?[^/]+/(.+/)?(lib|dist)(/|$)',
  caseSensitive: true,
  message:
    'Import a package by its public entry point, not its lib/ or dist/ internals: they change without notice between versions.',
};

/** Is `file` (a glob of one adapter) covered by `home` (a file or a `dir/**` glob)? */
const covers = (home, file) => home === file || (home.endsWith('/**') && file.startsWith(home.slice(0, -2)));

/** Both rules for a file of `dir` that may import the `allowed` libraries (and not what `layers` forbid). */
function restrictedImports(dir, allowed, layers = []) {
  const patterns = [
    dirPattern(dir),
    ...layers,
    INTERNALS,
    ...LIBRARIES.filter((lib) => !allowed.includes(lib.name)).map((lib) => libraryPattern(lib, dir)),
  ];
  return {
    '@typescript-eslint/no-restricted-imports': ['error', { patterns }],
    // no-restricted-imports does not see `import('x')`; the same patterns as selectors (a `/`
    // written \u002f, as esquery ends a regex at the first `/`).
    'no-restricted-syntax': [
      'error',
      ...patterns.map((p) => ({
        selector: `ImportExpression[source.value=/${p.regex.replaceAll('/', '\\u002f')}/]`,
        message: `import(): ${p.message}`,
      })),
    ],
  };
}

/**
 * One config object per source folder, then one per adapter in it. Options of a rule are replaced,
 * not merged, by a later matching object, so each object carries the folder's complete list.
 */
function boundaryConfigs() {
  const out = [];
  for (const dir of Object.keys(FORBIDDEN_DIRS)) {
    out.push({
      name: `house/boundaries/${dir}`,
      files: [`${dir}/**/*.ts`],
      rules: restrictedImports(dir, []),
    });
    if (dir === 'frontend')
      for (const sub of Object.keys(FRONTEND_FORBIDDEN)) {
        const layers = layerPatternsOf(`frontend/${sub}/`);
        if (layers.length > 0)
          out.push({
            name: `house/layers/frontend/${sub}`,
            files: [`frontend/${sub}/**/*.ts`],
            rules: restrictedImports(dir, [], layers),
          });
      }
    const homes = [...new Set(LIBRARIES.flatMap((lib) => lib.homes))].filter((h) => h.startsWith(`${dir}/`));
    for (const home of homes) {
      const allowed = LIBRARIES.filter((lib) => lib.homes.some((h) => covers(h, home))).map((lib) => lib.name);
      out.push({
        name: `house/boundaries/${home}`,
        files: [home.endsWith('/**') ? `${home}/*.ts` : home],
        rules: restrictedImports(dir, allowed, layerPatternsOf(home)),
      });
    }
  }
  return out;
}

/**
 * Silencing stays visible and narrow: one line at a time, naming the rules, saying why after
 * ` -- `; a rule wrong for a whole file or folder is configured here instead. (An unnamed
 * `eslint-disable` silences this rule too, from where it stands; test/boundaries.test.ts scans
 * the tree for that one form.)
 */
const narrowSilencing = {
  meta: {
    type: 'problem',
    docs: { description: 'eslint-disable comments cover one line, name their rules and give a reason' },
    schema: [],
    messages: {
      reason:
        'An eslint-disable comment names the rules it disables and says why after " -- " (e.g. `// eslint-disable-next-line rule -- reason`).',
      range:
        'Disable one line at a time (`// eslint-disable-next-line rule -- reason`), not a range; a rule wrong for a whole file belongs in eslint.config.js.',
      inline: 'Configure rules in eslint.config.js, not in an inline `/* eslint ... */` comment.',
    },
  },
  create(context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          const text = comment.value.trim();
          if (/^eslint\s/.test(text)) {
            context.report({ loc: comment.loc, messageId: 'inline' });
            continue;
          }
          const m = /^eslint-(disable-next-line|disable-line|disable)\b(.*)$/s.exec(text);
          if (m === null) continue;
          if (m[1] === 'disable') {
            context.report({ loc: comment.loc, messageId: 'range' });
            continue;
          }
          const [rules, reason] = m[2].split(/\s--\s/);
          if (reason === undefined || reason.trim() === '' || rules.trim() === '') {
            context.report({ loc: comment.loc, messageId: 'reason' });
          }
        }
      },
    };
  },
};

export default defineConfig(
  globalIgnores(['dist/', 'coverage/', 'node_modules/', 'model-store/', 'logs/']),
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { house: { rules: { 'narrow-silencing': narrowSilencing } } },
    rules: { 'house/narrow-silencing': 'error' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'module', globals: globals.node },
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: globals.node,
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      // Off: the house writes `xs[i]!` / `xs[i] as string` on indexed reads, the discipline of
      // noUncheckedIndexedAccess (not yet on in tsconfig: 124 sites would fail). Under today's
      // flags the rule calls 352 of those assertions unnecessary; removing them would be churn
      // across 61 files that the flag would bring back.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // Off: an `async` method without `await` is how the house implements a Promise-returning
      // interface (Sink.close, a handler's inference, a fake runner): `async` turns a throw into
      // a rejection, which a plain function returning Promise.resolve() would not.
      '@typescript-eslint/require-await': 'off',
      // `{}` is `unknown` after a null check; `String(v)` of such a value in a validation message
      // is deliberate (the rule already skips `unknown` itself). Real object types still fail.
      '@typescript-eslint/no-base-to-string': [
        'error',
        { ignoredTypeNames: ['Error', 'RegExp', 'URL', 'URLSearchParams', '{}'] },
      ],
      // tsc's noUnusedParameters convention: a leading `_` marks a parameter kept for its position
      // (express needs four for an error handler) or a loop variable only there to drain.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      // prom-client's private series map: what it keeps there is not its API and changes freely.
      'no-restricted-properties': [
        'error',
        {
          property: 'hashMap',
          message: "hashMap is prom-client's private series map, not its API: go through the metric's public methods.",
        },
      ],
    },
  },
  {
    // Tests, tools and examples may import any library directly, but not a package's internals.
    files: ['test/**/*.ts', 'tools/**/*.ts', 'examples/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [INTERNALS] }] },
  },
  {
    // One concept per file (CONTRIBUTING.md): a source file past 400 lines holds more than one.
    // Every line counts, blank and comment lines too, so a split is never won by squeezing.
    name: 'house/max-lines/sources',
    files: ['frontend/**/*.ts', 'backend/**/*.ts', 'schema/**/*.ts', 'tools/**/*.ts', 'examples/**/*.ts'],
    rules: { 'max-lines': ['error', { max: SOURCE_MAX_LINES, skipBlankLines: false, skipComments: false }] },
  },
  {
    // Tests are split by what they test, not by length: an end-to-end file shares one server
    // start among its cases. A looser bound still stops one from growing without end.
    name: 'house/max-lines/tests',
    files: ['test/**/*.ts'],
    rules: { 'max-lines': ['error', { max: TEST_MAX_LINES, skipBlankLines: false, skipComments: false }] },
  },
  boundaryConfigs(),
);
