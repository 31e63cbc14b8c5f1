/**
 * The Dockerfile, checked without Docker (there is none on the test machine): what it copies
 * exists and is not in .dockerignore, its CMD parses with tsserve start's own parser, the code
 * the image runs needs no devDependency (npm prune --omit=dev), and the final stage's files,
 * assembled in a temp dir as the image lays them out, serve a prediction with the image's CMD.
 */
import { expect } from 'chai';
import { spawn, spawnSync } from 'child_process';
import { builtinModules } from 'module';
import * as fs from 'fs';
import * as path from 'path';
import { parseStartOptions } from '../../frontend/server/start-options.js';
import { freePort, mlpInput, ROOT, tempDir } from '../e2e/harness.js';
import { until } from '../support/until.js';

/** One instruction of the Dockerfile (continuation lines joined), with its stage index. */
interface Instruction { readonly stage: number; readonly op: string; readonly args: string }

function instructions(): Instruction[] {
  const text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const out: Instruction[] = [];
  let stage = -1;
  for (const line of text.split('\n')) {
    const m = /^([A-Z]+)\s+(.*)$/.exec(line.trim());
    if (m === null || line.trim().startsWith('#')) continue;
    if (m[1] === 'FROM') stage++;
    out.push({ stage, op: m[1]!, args: m[2]!.trim() });
  }
  return out;
}

/** A COPY's options, sources and destination. */
function copyParts(args: string): { from: string | null; sources: string[]; dest: string } {
  const words = args.split(/\s+/);
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length) ?? null;
  const rest = words.filter((w) => !w.startsWith('--'));
  return { from, sources: rest.slice(0, -1), dest: rest[rest.length - 1]! };
}

/** The JSON array of an exec-form instruction. */
const execForm = (ins: Instruction | undefined): string[] => JSON.parse(ins?.args ?? '[]') as string[];

/** The package names a runtime file imports, following its relative imports (compiled JS). */
function runtimeImports(entries: readonly string[]): Set<string> {
  const bare = new Set<string>();
  const seen = new Set<string>();
  const todo = [...entries];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    // Comments may quote an import (`from 'x'`); code lines never start with one.
    const src = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    for (const m of src.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)'([^']+)'/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) todo.push(path.resolve(path.dirname(file), spec));
      else bare.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return bare;
}

describe('Dockerfile', () => {
  const all = instructions();
  const final = Math.max(...all.map((i) => i.stage));

  it('should copy from the build context only files that exist and that .dockerignore lets through', () => {
    const ignored = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
    const sources = all.filter((i) => i.op === 'COPY' && copyParts(i.args).from === null).flatMap((i) => copyParts(i.args).sources);
    expect(sources).to.deep.equal(['package.json', 'package-lock.json', '.npmrc', 'tsconfig.json', 'bin', 'schema', 'frontend', 'backend', 'tools', 'examples', 'metrics.yaml', 'metrics-vllm.yaml']);
    for (const s of sources) {
      expect(fs.existsSync(path.join(ROOT, s)), s).to.equal(true);
      expect(ignored.filter((pat) => pat === s || pat === s.split('/')[0]), s).to.deep.equal([]);
    }
  });

  it("should run the final stage as a non-root user, expose the three ports, check /ping, and start with a CMD tsserve start's parser accepts", () => {
    const last = all.filter((i) => i.stage === final);
    expect(last.filter((i) => i.op === 'USER').map((i) => i.args)).to.deep.equal(['node']);
    expect(last.filter((i) => i.op === 'EXPOSE').map((i) => i.args)).to.deep.equal(['8080 8081 8082']);
    expect(last.find((i) => i.op === 'HEALTHCHECK')?.args).to.contain("fetch('http://127.0.0.1:8080/ping')");
    expect(execForm(last.find((i) => i.op === 'ENTRYPOINT'))).to.deep.equal(['node', 'bin/tsserve.js']);
    const cmd = execForm(last.find((i) => i.op === 'CMD'));
    expect(cmd[0]).to.equal('start');
    const parsed = parseStartOptions(cmd.slice(1), {});
    if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
    expect([parsed.options.modelStore, parsed.options.inferenceAddress, parsed.options.metricsAddress, parsed.options.logDir, parsed.options.shutdownTimeout])
      .to.deep.equal(['/app/model-store', 'http://0.0.0.0:8080', 'http://0.0.0.0:8082', '/var/log/tsserve', 25]);
    expect(all.find((i) => i.op === 'RUN')?.args).to.contain('npm ci --no-audit --no-fund');
  });

  it('should need no devDependency at run time (the image prunes them): every package the server and its workers import is a dependency or a Node builtin', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const entries = ['tools/cli/main.js', 'backend/worker/main.js', 'tools/models/custom/handler.js'].map((f) => path.join(ROOT, 'dist', f));
    const extra = [...runtimeImports(entries)].filter((p) => !(p in pkg.dependencies) && !builtinModules.includes(p.replace(/^node:/, '')));
    expect(extra).to.deep.equal([]);
  });

  it("should serve a prediction from the final stage's files laid out as in the image, started with the image's ENTRYPOINT and CMD", async function () {
    this.timeout(120_000);
    const app = path.join(tempDir('image'), 'app');
    fs.mkdirSync(app);
    const copies = all.filter((i) => i.stage === final && i.op === 'COPY').map((i) => copyParts(i.args));
    for (const c of copies) {
      for (const s of c.sources) {
        const rel = c.from === null ? s : path.relative('/app', s);
        const dest = c.dest.endsWith('/') || c.sources.length > 1 || c.dest === './' ? path.join(app, c.dest, path.basename(rel)) : path.join(app, c.dest);
        fs.mkdirSync(path.dirname(dest), { recursive: true });
        if (rel === 'model-store') {
          // What the build stage's `tsserve models generate /app/model-store` writes.
          const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'tsserve.js'), 'models', 'generate', dest, '--only', 'mlp'], { encoding: 'utf8' });
          expect(r.status, r.stderr).to.equal(0);
        } else if (rel === 'node_modules') {
          fs.symlinkSync(path.join(ROOT, 'node_modules'), dest); // the packages themselves; the image prunes devDependencies (test above)
        } else {
          fs.cpSync(path.join(ROOT, rel), dest, { recursive: true });
        }
      }
    }
    const entry = execForm(all.find((i) => i.stage === final && i.op === 'ENTRYPOINT'));
    const cmd = execForm(all.find((i) => i.stage === final && i.op === 'CMD'))
      .map((a) => a.replace('=/app/', `=${app}/`).replace('=/var/log/tsserve', `=${path.join(app, '..', 'logs')}`));
    fs.mkdirSync(path.join(app, '..', 'logs'));
    const [ip, mp, xp] = [await freePort(), await freePort(), await freePort()];
    // Later flags win: the image's addresses, moved to free loopback ports.
    const argv = [...entry.slice(1), ...cmd, `--inference-address=http://127.0.0.1:${ip}`, `--management-address=http://127.0.0.1:${mp}`, `--metrics-address=http://127.0.0.1:${xp}`, '--disable-system-metrics'];
    const proc = spawn(process.execPath, argv, { cwd: app, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => { out += d.toString(); });
    proc.stderr?.on('data', (d: Buffer) => { out += d.toString(); });
    try {
      await until(() => out.includes('Model server started.') || (proc.exitCode !== null ? Promise.reject(new Error(out)) : false), { message: 'Model server started.', timeoutMs: 60_000, observe: () => out });
      expect(out).to.contain(`Metrics config: ${path.join(app, 'metrics.yaml')};`);
      // --metrics-profile vllm reads its file from the same place in the image.
      const profile = spawnSync(process.execPath, [entry[1]!, 'metrics', 'validate', path.join(app, 'metrics-vllm.yaml')], { cwd: app, encoding: 'utf8' });
      expect([profile.status, profile.stdout.trim().startsWith(`${path.join(app, 'metrics-vllm.yaml')}: OK`)], profile.stderr).to.deep.equal([0, true]);
      expect(out).to.contain(`Model store: ${path.join(app, 'model-store')}; models: mlp`);
      const ping = await fetch(`http://127.0.0.1:${ip}/ping`);
      expect([ping.status, await ping.json()]).to.deep.equal([200, { status: 'Healthy' }]);
      const res = await fetch(`http://127.0.0.1:${ip}/predictions/mlp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(mlpInput(1)) });
      expect(res.status).to.equal(200);
      expect(((await res.json()) as number[]).length).to.equal(10);
    } finally {
      try { process.kill(-(proc.pid as number), 'SIGKILL'); } catch { /* gone */ }
      fs.rmSync(path.dirname(app), { recursive: true, force: true });
    }
  });
});
