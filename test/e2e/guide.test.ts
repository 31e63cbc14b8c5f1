/**
 * docs/guide.md, followed literally: every fenced block marked `<!-- guide-test: … -->` is
 * applied or run as written, against the real server, so the guide cannot drift from what the
 * server does. Marks: `append FILE SECTION.LIST` (the block's lines go at the end of that list
 * of the repo's metrics.yaml, as a user pastes them), `file PATH` (written as is), `run` (a
 * shell block, every command must succeed), `run-until` (the same, retried until it succeeds: a
 * log line lands a moment after the answer), `start` (`npm start`: the test starts the server,
 * on free ports), `promql` (each line's expression through a real Prometheus's HTTP API). In the
 * commands only the default addresses (127.0.0.1:8080/8081/8082) and `npx tsserve` are replaced.
 */
import { expect } from 'chai';
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { CLI, freePort, generateStore, haveBinary, ROOT, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

/** One marked block of the guide. */
interface Block {
  readonly mark: string;
  readonly arg: string;
  readonly body: string;
  readonly line: number;
}

/** The marked fenced blocks of a markdown text, in order. */
function markedBlocks(md: string): Block[] {
  const lines = md.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^<!-- guide-test: (\S+)\s*(.*?) -->$/.exec(lines[i]!);
    if (m === null) continue;
    if (!/^```\w*$/.test(lines[i + 1] ?? ''))
      throw new Error(`docs/guide.md:${i + 1}: a guide-test mark must sit right above a fenced block`);
    const end = lines.findIndex((l, j) => j > i + 1 && l === '```');
    out.push({ mark: m[1]!, arg: m[2]!, body: lines.slice(i + 2, end).join('\n') + '\n', line: i + 3 });
    i = end;
  }
  return out;
}

/** `text` (a metrics.yaml) with `snippet` appended to the list `section.list` (e.g. model_metrics.counter). */
function appendToList(text: string, where: string, snippet: string): string {
  const [section, list] = where.split('.');
  const lines = text.split('\n');
  const top = lines.findIndex((l) => l === `${section}:`);
  const key = lines.findIndex((l, i) => i > top && l === `  ${list}:`);
  if (top < 0 || key < 0 || lines.slice(top + 1, key).some((l) => /^\S/.test(l)))
    throw new Error(`no list ${where} in metrics.yaml`);
  let end = key + 1;
  while (
    end < lines.length &&
    (lines[end]!.trim() === '' || lines[end]!.trimStart().startsWith('#') || /^ {3,}/.test(lines[end]!))
  )
    end++;
  while (end > key + 1 && lines[end - 1]!.trim() === '') end--; // before the blank lines that close the list
  return [...lines.slice(0, end), ...snippet.replace(/\n$/, '').split('\n'), ...lines.slice(end)].join('\n');
}

describe('docs/guide.md followed literally (real server)', function () {
  this.timeout(120_000);
  const blocks = markedBlocks(fs.readFileSync(path.join(ROOT, 'docs', 'guide.md'), 'utf8'));
  let sandbox = '';
  let server: Tsserve | undefined;
  /** stdout of every run block, by its line in the guide. */
  const outputs = new Map<number, string>();

  /**
   * Runs one shell block in the sandbox with the server's addresses, as in one terminal: the
   * variables earlier blocks assigned (`id=$(…)`) are kept in `.guide-env`. Returns exit code and output.
   */
  const sh = (body: string): { code: number | null; stdout: string; stderr: string } => {
    const script = body
      .replaceAll('npx tsserve', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`)
      .replaceAll('http://127.0.0.1:8080', server!.inference)
      .replaceAll('http://127.0.0.1:8081', server!.management)
      .replaceAll('http://127.0.0.1:8082', server!.metrics);
    const assigned = [...body.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]!);
    const keep = assigned.length > 0 ? `\ndeclare -p ${assigned.join(' ')} >> .guide-env` : '';
    const r = spawnSync('bash', ['-c', `touch .guide-env; source .guide-env\nset -e -o pipefail\n${script}${keep}`], {
      cwd: sandbox,
      encoding: 'utf8',
      timeout: 30_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  before(async () => {
    sandbox = tempDir('guide');
    // What the user has after the README's quickstart: the repo's metrics.yaml and the model
    // store `npm start` generated (here only its mlp), and a logs directory.
    fs.copyFileSync(path.join(ROOT, 'metrics.yaml'), path.join(sandbox, 'metrics.yaml'));
    fs.cpSync(generateStore(['mlp']), path.join(sandbox, 'model-store'), { recursive: true });
    fs.mkdirSync(path.join(sandbox, 'logs'));
    for (const b of blocks) {
      if (b.mark === 'append') {
        const [file, where] = b.arg.split(' ');
        const p = path.join(sandbox, file!);
        fs.writeFileSync(p, appendToList(fs.readFileSync(p, 'utf8'), where!, b.body));
      } else if (b.mark === 'file') {
        fs.mkdirSync(path.dirname(path.join(sandbox, b.arg)), { recursive: true });
        fs.writeFileSync(path.join(sandbox, b.arg), b.body);
      } else if (b.mark === 'start') {
        expect(b.body.split('\n')[0]!.split('#')[0]!.trim(), `guide line ${b.line}`).to.equal('npm start');
        // npm start = the default metrics.yaml (the edited one), ./model-store and ./logs.
        server = await startTsserve({
          store: path.join(sandbox, 'model-store'),
          logDir: path.join(sandbox, 'logs'),
          args: ['--metrics-config', path.join(sandbox, 'metrics.yaml'), '--disable-system-metrics'],
        });
      } else if (b.mark === 'run' || b.mark === 'run-until') {
        if (server === undefined) {
          // Blocks before `start` need no server (metrics validate).
          server = {
            inference: 'http://127.0.0.1:8080',
            management: 'http://127.0.0.1:8081',
            metrics: 'http://127.0.0.1:8082',
          } as Tsserve;
        }
        const r =
          b.mark === 'run'
            ? sh(b.body)
            : await until(
                () => {
                  const x = sh(b.body);
                  return x.code === 0 ? x : null;
                },
                { message: `guide line ${b.line} to succeed`, observe: () => sh(b.body) },
              );
        expect(r.code, `guide line ${b.line}:\n${b.body}\n${r.stderr}`).to.equal(0);
        outputs.set(b.line, r.stdout);
        if (server.proc === undefined) server = undefined;
      }
    }
  });

  after(() => {
    server?.kill();
    fs.rmSync(sandbox, { recursive: true, force: true });
  });

  it('should hold the marked blocks the test relies on, in this order', () => {
    expect(blocks.map((b) => `${b.mark} ${b.arg}`.trim())).to.deep.equal([
      'append metrics.yaml model_metrics.counter',
      'append metrics.yaml model_metrics.histogram',
      'run',
      'file model-store/my-model/handler.mjs',
      'file model-store/my-model/model-config.yaml',
      'start',
      'run',
      'run-until',
      'run',
      'run-until',
      'run',
      'promql',
    ]);
  });

  it("should validate the repo's metrics.yaml with the two snippets pasted where the guide says", () => {
    const validate = blocks[2]!;
    // Two metrics more than the repo's own file declares.
    const repo = spawnSync(process.execPath, [CLI, 'metrics', 'validate', path.join(ROOT, 'metrics.yaml')], {
      encoding: 'utf8',
    });
    const n = Number(/OK \((\d+) metrics\)/.exec(repo.stdout)?.[1]);
    expect(outputs.get(validate.line)).to.equal(`metrics.yaml: OK (${n + 2} metrics)\n`);
  });

  it("should answer the guide's request with the answer it shows, and show TokensSeen in the log and on /metrics", () => {
    const [answer, look] = [blocks[6]!, blocks[7]!];
    expect(outputs.get(answer.line)).to.equal('{"label":"short","confidence":0.6666666666666666}');
    const out = outputs.get(look.line)!;
    const [logLine, ...exposition] = out.split('\n');
    expect(logLine).to.match(
      /^\S+ - TokensSeen\.count:6\.0\|#ModelName:my-model,Level:Model\|#hostname:[^,]+,requestID:[0-9a-f-]{36},timestamp:\d+$/,
    );
    const H = /#hostname:([^,]+),/.exec(logLine!)![1]!;
    const bucket = (le: string, n: number): string =>
      `ConfidencePercent_bucket{le="${le}",ModelName="my-model",Level="Model",Hostname="${H}"} ${n}`;
    expect(exposition.join('\n')).to.equal(
      [
        '# HELP TokensSeen Input tokens the handler saw. (unit: count)',
        '# TYPE TokensSeen counter',
        `TokensSeen{ModelName="my-model",Level="Model",Hostname="${H}"} 6`,
        '',
        '# HELP ConfidencePercent Confidence of each answer. (unit: percent)',
        '# TYPE ConfidencePercent histogram',
        bucket('50', 0),
        bucket('75', 1),
        bucket('90', 1),
        bucket('95', 1),
        bucket('99', 1),
        bucket('100', 1),
        bucket('+Inf', 1),
        `ConfidencePercent_sum{ModelName="my-model",Level="Model",Hostname="${H}"} 66.66666666666666`,
        `ConfidencePercent_count{ModelName="my-model",Level="Model",Hostname="${H}"} 1`,
        '',
      ].join('\n'),
    );
  });

  it("should follow one request from its x-request-id to its handler's log lines, and print the guide's aggregations", () => {
    const [follow, agg] = [blocks[9]!, blocks[10]!];
    expect(outputs.get(follow.line)).to.match(
      / - HandlerTime\.ms:[0-9.]+\|#ModelName:mlp,Level:Model\|#hostname:[^,]+,requestID:[0-9a-f-]{36},timestamp:\d+\n/,
    );
    const lines = outputs.get(agg.line)!.split('\n');
    // One request to each model so far (awk prints its map in no fixed order).
    expect(lines.filter((l) => !l.endsWith(' ms') && l !== '').sort()).to.deep.equal(['mlp 1', 'my-model 1']);
    expect(lines.find((l) => l.endsWith(' ms'))).to.match(/^[0-9.e-]+ ms$/);
  });

  it('should have a real Prometheus answer every PromQL line of the guide, each naming only series the server exposes', async function () {
    if (!haveBinary('prometheus')) {
      console.warn(
        'SKIPPED: prometheus not found — install the Debian package `prometheus` (apt-get install -y prometheus)',
      );
      this.skip();
    }
    const exprs = blocks
      .filter((b) => b.mark === 'promql')
      .flatMap((b) => b.body.split('\n'))
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter((l) => l !== '');
    expect(exprs.length).to.equal(6);
    const promDir = path.join(sandbox, 'prom');
    fs.mkdirSync(promDir);
    const port = await freePort();
    fs.writeFileSync(
      path.join(promDir, 'prometheus.yml'),
      fs
        .readFileSync(path.join(ROOT, 'tools', 'prometheus', 'prometheus.yml'), 'utf8')
        .replace('scrape_interval: 15s', 'scrape_interval: 1s')
        .replace("'127.0.0.1:8082'", `'${server!.metrics.replace('http://', '')}'`),
    );
    const prom = spawn(
      'prometheus',
      [
        `--config.file=${path.join(promDir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(promDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore', detached: true },
    );
    const api = async (
      p: string,
    ): Promise<{ status: string; error?: string; data: { result?: unknown[] } & unknown[] }> =>
      (await (await fetch(`http://127.0.0.1:${port}${p}`)).json()) as {
        status: string;
        error?: string;
        data: { result?: unknown[] } & unknown[];
      };
    try {
      // Two scrapes after the traffic, so every rate() has two points.
      const names = await until(
        async () => {
          try {
            const n = (await api('/api/v1/label/__name__/values')).data as unknown as string[];
            const r = await api(
              `/api/v1/query?query=${encodeURIComponent('count_over_time(ConfidencePercent_count[1m])')}`,
            );
            return n.includes('ConfidencePercent_bucket') &&
              Number((r.data.result?.[0] as { value: [number, string] } | undefined)?.value[1]) >= 2
              ? n
              : null;
          } catch {
            return null;
          }
        },
        { message: 'Prometheus to scrape the server twice', timeoutMs: 60_000 },
      );
      const exposed = await (
        await fetch(`${server!.metrics}/metrics`, {
          headers: { accept: 'application/openmetrics-text; version=1.0.0' },
        })
      ).text();
      for (const e of exprs) {
        const r = await api(`/api/v1/query?query=${encodeURIComponent(e)}`);
        expect([r.status, r.error], e).to.deep.equal(['success', undefined]);
        // Every metric name it reads is stored, or is the `_total` sample name of a counter the
        // exposition declares with no series yet (OpenMetrics: family `x`, samples `x_total`).
        for (const name of e.match(/\b[A-Za-z_][A-Za-z0-9_]*(?=\[|\{)/g) ?? []) {
          if (['rate', 'sum', 'increase', 'by', 'histogram_quantile'].includes(name)) continue;
          const declared =
            name.endsWith('_total') && exposed.includes(`# TYPE ${name.slice(0, -'_total'.length)} counter\n`);
          expect(names.includes(name) || declared, `${e}: ${name}`).to.equal(true);
        }
        if (!e.includes('tsserve_datapoints_dropped_total'))
          expect((r.data.result ?? []).length, e).to.be.greaterThan(0);
      }
    } finally {
      try {
        process.kill(-(prom.pid as number), 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  });
});
