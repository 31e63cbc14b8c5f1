/**
 * The committed Grafana dashboards type-check against Grafana's own schema (`@grafana/schema`'s
 * `Dashboard`): each JSON file becomes the initializer of a `Dashboard`-typed constant in a
 * virtual TypeScript file, so its string literals are checked against Grafana's unions and any
 * property Grafana's model does not have is an excess-property error.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const GRAFANA_DIR = path.join(ROOT, 'tools', 'grafana');

/** The compiler's messages for `source`, a TypeScript file placed (virtually) in tools/grafana. */
function typeErrors(name: string, source: string): string[] {
  const file = path.join(GRAFANA_DIR, `${name}.check.ts`);
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, onError) =>
    f === file ? ts.createSourceFile(f, source, lang) : read(f, lang, onError);
  const exists = host.fileExists.bind(host);
  host.fileExists = (f) => f === file || exists(f);
  const program = ts.createProgram([file], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]}`);
}

const asDashboard = (json: string): string =>
  `import type { Dashboard } from '@grafana/schema';\nexport const d: Dashboard = ${json};\n`;

describe("the committed Grafana dashboards (Grafana's schema)", function () {
  this.timeout(120_000);

  const files = fs.readdirSync(GRAFANA_DIR).filter((f) => f.endsWith('.json'));

  it('should be the three generated dashboards', () => {
    expect(files.sort()).to.deep.equal(['tsserve-generation.json', 'tsserve-pipelines.json', 'tsserve-serving.json']);
  });

  for (const f of ['tsserve-generation.json', 'tsserve-pipelines.json', 'tsserve-serving.json']) {
    it(`should type-check ${f} as @grafana/schema's Dashboard with 0 errors`, () => {
      expect(typeErrors(f, asDashboard(fs.readFileSync(path.join(GRAFANA_DIR, f), 'utf8')))).to.deep.equal([]);
    });
  }

  it("should fail a variable whose current value is {} (the generator's old output) with the compiler's message", () => {
    const bad = JSON.stringify({
      schemaVersion: 41,
      templating: { list: [{ name: 'instance', type: 'query', current: {} }] },
    });
    expect(typeErrors('bad-variable', asDashboard(bad))).to.deep.equal([
      "Type '{}' is missing the following properties from type 'VariableOption': text, value",
    ]);
  });
});
