/**
 * Generation through the HTTP server (run after bench:generate): a real `tsserve start` serving
 * tiny-lm, 32 streaming `/v1/completions` requests at once vs the same 32 one at a time
 * (192-token prompts, 64 new tokens: contexts up to 256, as in bench:generate).
 * Figure: aggregate decode tokens/s (completion tokens after each stream's first token, over
 * the wall time from the first first-token to the last token) — what continuous batching buys
 * end to end, HTTP, SSE and IPC included. Goal ratio ≥ 3. One JSON line:
 * `{"bench":"decode_tok_s_32_vs_1_http","ours":…,"baseline":…,"unit":"tok/s","ratio":…}`.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { TINY_LM_MODEL } from '../models/demo-models.js';
import { spawnServer } from './spawn-server.js';
import { smoke } from './smoke.js';

const STREAMS = 32;
const MAX_TOKENS = smoke(64, 8);
/** Streams run one at a time for the baseline (its tokens/s does not depend on how many). */
const SEQUENTIAL = smoke(STREAMS, 4);
/** Prompt bytes: with BOS, 192 prompt tokens, so contexts reach 256 like bench:generate's. */
const PROMPT_BYTES = 191;

/** A distinct printable ASCII prompt of exactly PROMPT_BYTES bytes (one token per byte). */
function promptFor(i: number): string {
  return `Bench stream ${i}: ${'once upon a time, '.repeat(12)}`.slice(0, PROMPT_BYTES);
}

interface StreamRun {
  /** performance.now() of the first token and of the last chunk. */
  readonly firstMs: number;
  readonly lastMs: number;
  readonly tokens: number;
}

/** One streaming completion; counts the chunks that carry text (one token each on tiny-lm). */
async function stream(base: string, i: number): Promise<StreamRun> {
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'tiny-lm',
      prompt: promptFor(i),
      max_tokens: MAX_TOKENS,
      ignore_eos: true,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  let firstMs = 0;
  let lastMs = 0;
  let tokens = 0;
  let buf = '';
  const dec = new TextDecoder();
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(part, { stream: true });
    let at: number;
    while ((at = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, at);
      buf = buf.slice(at + 2);
      if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
      const msg = JSON.parse(ev.slice(6)) as { usage?: { completion_tokens: number } };
      if (msg.usage !== undefined) {
        tokens = msg.usage.completion_tokens;
        continue;
      }
      const now = performance.now();
      if (firstMs === 0) firstMs = now;
      lastMs = now;
    }
  }
  return { firstMs, lastMs, tokens };
}

/** Decode tokens/s of a set of runs: tokens after each first token over the decode wall span. */
function decodeRate(runs: readonly StreamRun[], sequential: boolean): number {
  const decodeTokens = runs.reduce((a, r) => a + r.tokens - 1, 0);
  const seconds = sequential
    ? runs.reduce((a, r) => a + (r.lastMs - r.firstMs), 0) / 1000
    : (Math.max(...runs.map((r) => r.lastMs)) - Math.min(...runs.map((r) => r.firstMs))) / 1000;
  return decodeTokens / seconds;
}

async function startServer(dir: string): Promise<{ proc: ChildProcess; base: string }> {
  const s = await spawnServer(
    [
      '--model-store',
      join(dir, 'store'),
      '--log-dir',
      join(dir, 'logs'),
      '--metrics-mode',
      'prometheus',
      '--disable-system-metrics',
    ],
    dir,
  );
  return { proc: s.proc, base: s.inference };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tsserve-bench-http-'));
  let proc: ChildProcess | null = null;
  try {
    const modelDir = join(dir, 'store', TINY_LM_MODEL.name);
    mkdirSync(modelDir, { recursive: true });
    mkdirSync(join(dir, 'logs'));
    await TINY_LM_MODEL.write(modelDir);
    const s = await startServer(dir);
    proc = s.proc;
    // Warm-up: one lone stream and one full batch (runner rows grown, JIT warm).
    await stream(s.base, -1);
    await Promise.all(Array.from({ length: STREAMS }, (_v, i) => stream(s.base, 1000 + i)));
    const seq: StreamRun[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) seq.push(await stream(s.base, i));
    const conc = await Promise.all(Array.from({ length: STREAMS }, (_v, i) => stream(s.base, i)));
    const ours = decodeRate(conc, false);
    const baseline = decodeRate(seq, true);
    const r = (x: number): number => Math.round(x * 1000) / 1000;
    process.stdout.write(
      JSON.stringify({
        bench: 'decode_tok_s_32_vs_1_http',
        ours: r(ours),
        baseline: r(baseline),
        unit: 'tok/s',
        ratio: r(ours / baseline),
      }) + '\n',
    );
  } finally {
    if (proc?.pid !== undefined) {
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench generate-http: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
