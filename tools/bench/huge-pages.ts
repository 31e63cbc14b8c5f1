/**
 * `npm run bench:huge-pages` — the engine's decode step on the tiny LM (fast layout, 1 thread,
 * contexts up to 256) with glibc's malloc asking for transparent huge pages
 * (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, what the frontend puts in a worker's environment)
 * against without, at batch 32 and at batch 1. Each side runs in a fresh child process (the
 * tunable is read once, at process start), alternating which goes first over ROUNDS rounds; the
 * figure is the median step time. onnxruntime's arena and V8's array buffers (the K/V rows)
 * both come from malloc, so both land on huge pages where the kernel allows
 * (/sys/kernel/mm/transparent_hugepage/enabled: `always` or `madvise`). Each line also carries the
 * child's AnonHugePages (/proc/self/smaps_rollup) in kB, so a run on a kernel that gave none says so.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine, readModelDir } from '../../backend/engine/load.js';
import { TINY_LM_MODEL } from '../models/demo-models.js';
import { engineDecode, prompts } from './engine-decode.js';
import { smoke } from './smoke.js';

const PROMPT = 192;
const GEN = smoke(64, 24);
const ROUNDS = smoke(3, 1);
const TUNABLE = 'glibc.malloc.hugetlb=1';

interface Steps {
  readonly b32Ms: number;
  readonly b1Ms: number;
  readonly hugeKb: number;
}

/** kB of anonymous memory on transparent huge pages in this process. */
function anonHugeKb(): number {
  try {
    const m = /AnonHugePages:\s+(\d+) kB/.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'));
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

async function child(dir: string): Promise<void> {
  const m = await readModelDir(dir);
  const e = await loadEngine({
    dir,
    modelFile: m.modelFile,
    engine: m.engine,
    overrides: { numBlocks: 1024, threads: 1, enablePrefixCaching: false },
  });
  const ps = prompts(32, PROMPT, 7);
  await engineDecode(e, ps.slice(0, 4), 4, GEN); // warm-up
  const b32 = await engineDecode(e, ps, 32, GEN);
  const b1 = await engineDecode(e, ps.slice(0, 2), 1, GEN);
  const steps: Steps = { b32Ms: b32.stepMs, b1Ms: b1.stepMs, hugeKb: anonHugeKb() };
  await e.runner.close();
  process.send!(steps);
}

function run(dir: string, huge: boolean): Promise<Steps> {
  const env = { ...process.env };
  const others = (env.GLIBC_TUNABLES ?? '')
    .split(':')
    .filter((t) => t !== '' && !t.startsWith('glibc.malloc.hugetlb='));
  env.GLIBC_TUNABLES = (huge ? [...others, TUNABLE] : others).join(':');
  const c = fork(import.meta.filename, ['child', dir], { env });
  return new Promise((resolve, reject) => {
    c.once('message', (m) => resolve(m as Steps));
    c.once('exit', (code) => reject(new Error(`decode child exited (code ${String(code)}) without a result`)));
  });
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'tsserve-bench-huge-'));
  try {
    const dir = join(root, 'tiny-lm');
    await TINY_LM_MODEL.write(dir);
    const on: Steps[] = [];
    const off: Steps[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const huge of r % 2 === 0 ? [true, false] : [false, true]) (huge ? on : off).push(await run(dir, huge));
    }
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const r3 = (x: number): number => Math.round(x * 1000) / 1000;
    const line = (bench: string, k: 'b32Ms' | 'b1Ms'): void => {
      const o = med(on.map((s) => s[k]));
      const b = med(off.map((s) => s[k]));
      process.stdout.write(
        JSON.stringify({
          bench,
          ours: r3(o),
          baseline: r3(b),
          unit: 'ms per decode step',
          ratio: r3(o / b),
          anon_huge_kb_on: med(on.map((s) => s.hugeKb)),
          anon_huge_kb_off: med(off.map((s) => s.hugeKb)),
        }) + '\n',
      );
    };
    line('decode_step_32_huge_pages_vs_off', 'b32Ms');
    line('decode_step_1_huge_pages_vs_off', 'b1Ms');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'child') await child(process.argv[3]!);
else if (process.argv[1] === import.meta.filename) await main();
