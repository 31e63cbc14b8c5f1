/**
 * `pipeline_overhead` and the pipeline's `metrics_on_vs_off`: spoken requests (tiny-omni,
 * 32 new tokens each, ignore_eos, WAV answers) through a REAL `tsserve start` — thinker and
 * code2wav in their own workers, chunks of 4 tokens streamed between them — against the same
 * two stages called back to back in one process, at the same concurrency. The in-process
 * baseline does the work the server does for each request: the same prompt token ids (the chat
 * template applied, checked against the server's `usage.prompt_tokens`), the engine's offline
 * LLM, the vocoder's ONNX session on every 4-token chunk, the chunks joined and WAV-encoded.
 *
 * Method: both servers (stats on, --disable-log-stats) and the in-process engine are started
 * once and warmed up; then ROUNDS rounds each run the three setups back to back (the order
 * rotating per round) on a fresh set of REQUESTS prompts shared by the three. A figure is the
 * median over the rounds of the setup's requests/s; a ratio is the median of the per-round
 * ratios (the two setups of a ratio ran seconds apart, so a busy machine's slow spell hits
 * both). Goals: pipeline / in-process ≥ 0.9; stats on / --disable-log-stats ≥ 0.98. Three JSON
 * lines: `{"bench":"pipeline_overhead",…}` and `{"bench":"pipeline_metrics_on_vs_off",…}` at 8
 * clients (BENCH_CONCURRENCY), and `{"bench":"pipeline_overhead_saturated",…}`: both sides again
 * with as many clients as the thinker's max_num_seqs (32, BENCH_SATURATED), the engine kept full,
 * on rounds of their own prompts, 1024 a round (BENCH_SATURATED_REQUESTS) so fill and drain stay
 * a small share. BENCH_ROUNDS and BENCH_REQUESTS override the defaults; BENCH_VERBOSE=1 prints every round's
 * figures to stderr. Measured figures and where the time goes: docs/pipelines.md, Benchmark.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LLM } from '../../backend/engine/llm.js';
import { createSession, tensorI64 } from '../../backend/onnx/ort.js';
import { ChatTemplate } from '../../frontend/generation/chat-template.js';
import { wavFile } from '../../frontend/openai/wav.js';
import { BYTE_CHAT_TEMPLATE, TINY_LM_MODEL, TINY_OMNI_MODEL, TINY_VOCODER_MODEL } from '../models/demo-models.js';
import { VOCODER_SAMPLE_RATE } from '../models/tiny-vocoder.js';
import { spawnServer } from './spawn-server.js';
import type { SpawnedServer } from './spawn-server.js';
import { smoke } from './smoke.js';

const envInt = (name: string, dflt: number): number => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : dflt;
};
const REQUESTS = envInt('BENCH_REQUESTS', smoke(256, 8));
const ROUNDS = envInt('BENCH_ROUNDS', smoke(9, 1));
// 8 clients: the figure every earlier wave reported. The thinker's max_num_seqs (32): both sides
// saturated, the engine kept full — what "throughput" means in vLLM's serving benchmark
// (every request sent at once); the in-process side is at its peak already at 8.
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 8);
const SATURATED = envInt('BENCH_SATURATED', 32);
// Requests a saturated round: each of its clients sends 32 in a row, so the round's fill and
// drain (one request latency each, when the engine holds fewer than its clients) are a small share
// of it. With 256 (8 a client) they were about a tenth of a served round and none of an in-process
// one, whose 32 requests finish in lockstep: measured 0.89–0.94 at 256 against 0.935 at 1024.
const SATURATED_REQUESTS = envInt('BENCH_SATURATED_REQUESTS', smoke(1024, 32));
const MAX_TOKENS = 32;
const CHUNK = 4;

const content = (i: number): string => `Tell story ${i} about the sea`;

/** Runs `requests` jobs (ids `first…`) `clients` at a time; returns requests/s over the wall time. */
async function throughput(
  first: number,
  job: (i: number) => Promise<unknown>,
  clients = CONCURRENCY,
  requests = REQUESTS,
): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests) await job(first + next++);
    }),
  );
  return requests / ((performance.now() - t0) / 1000);
}

/**
 * Keep-alive connections for the client side. node:http rather than fetch: the load generator
 * shares the 2 cores with the server's three processes, and undici's fetch costs several times
 * node:http's CPU a request (measured: the same server 121–133 req/s under fetch, 145–158 under
 * node:http), which the in-process baseline never pays.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(CONCURRENCY, SATURATED) });

/** POSTs JSON; resolves to the status and the body text. */
function post(url: string, payload: unknown): Promise<{ status: number; text: string }> {
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** One spoken chat request; resolves to its prompt token count. */
async function spoken(base: string, i: number): Promise<number> {
  const res = await post(`${base}/v1/chat/completions`, {
    model: 'tiny-omni',
    messages: [{ role: 'user', content: content(i) }],
    max_tokens: MAX_TOKENS,
    temperature: 0,
    ignore_eos: true,
    modalities: ['text', 'audio'],
    audio: { voice: 'alloy', format: 'wav' },
  });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text}`);
  const body = JSON.parse(res.text) as { usage: { prompt_tokens: number } };
  return body.usage.prompt_tokens;
}

interface InProcess {
  job(i: number): Promise<number>;
  close(): Promise<void>;
}

/** Thinker then code2wav in this process; `job` resolves to the prompt token count. */
async function inProcess(dir: string): Promise<InProcess> {
  const llm = await LLM.load(join(dir, 'store', 'tiny-lm'));
  const voc = await createSession(join(dir, 'store', 'tiny-vocoder', 'model.onnx'));
  // The thinker's own template (tiny-lm's chat_template.jinja), as the server renders it.
  const template = new ChatTemplate(BYTE_CHAT_TEMPLATE);
  const chat = (text: string): string =>
    template.render({ messages: [{ role: 'user', content: text }], addGenerationPrompt: true, kwargs: {} });
  const job = async (i: number): Promise<number> => {
    const [out] = await llm.generate(chat(content(i)), {
      max_tokens: MAX_TOKENS,
      temperature: 0,
      ignore_eos: true,
    });
    const tokens = out!.outputs[0]!.tokenIds;
    const chunks: Uint8Array[] = [];
    for (let k = 0; k < tokens.length; k += CHUNK) {
      const codes = BigInt64Array.from(tokens.slice(k, k + CHUNK), (t) => BigInt(t));
      const pcm = (await voc.run({ codes: tensorI64(codes, [codes.length]) }))['pcm']!.data;
      chunks.push(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    }
    wavFile(Buffer.concat(chunks), VOCODER_SAMPLE_RATE);
    return out!.promptTokenIds.length;
  };
  return {
    job,
    close: async () => {
      await voc.release();
      await llm.close();
    },
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tsserve-bench-pipeline-'));
  const servers: SpawnedServer[] = [];
  let local: InProcess | null = null;
  try {
    for (const m of [TINY_LM_MODEL, TINY_VOCODER_MODEL, TINY_OMNI_MODEL]) {
      mkdirSync(join(dir, 'store', m.name), { recursive: true });
      await m.write(join(dir, 'store', m.name));
    }
    const start = async (name: string, extra: readonly string[]): Promise<string> => {
      mkdirSync(join(dir, name));
      const s = await spawnServer(
        [
          '--model-store',
          join(dir, 'store'),
          '--models',
          'tiny-omni=tiny-omni',
          '--log-dir',
          join(dir, name),
          '--metrics-mode',
          'prometheus',
          '--disable-system-metrics',
          ...extra,
        ],
        dir,
      );
      servers.push(s);
      return s.inference;
    };
    const onUrl = await start('on', []);
    const offUrl = await start('off', ['--disable-log-stats']);
    local = await inProcess(dir);
    const lp = local;
    // The same prompt ids on both sides: the server's prompt_tokens equal the in-process prompt's.
    const [a, b] = [await spoken(onUrl, 0), await lp.job(0)];
    if (a !== b) throw new Error(`prompt tokens differ: server ${a}, in-process ${b}`);
    const setups: readonly ((first: number) => Promise<number>)[] = [
      (first) => throughput(first, (i) => lp.job(i)),
      (first) => throughput(first, (i) => spoken(onUrl, i)),
      (first) => throughput(first, (i) => spoken(offUrl, i)),
      // The saturated pair gets prompts of its own (ids from 10^7), fresh each round.
      (first) =>
        throughput(
          10_000_000 + (first / REQUESTS) * SATURATED_REQUESTS,
          (i) => lp.job(i),
          SATURATED,
          SATURATED_REQUESTS,
        ),
      (first) =>
        throughput(
          10_000_000 + (first / REQUESTS) * SATURATED_REQUESTS,
          (i) => spoken(onUrl, i),
          SATURATED,
          SATURATED_REQUESTS,
        ),
    ];
    for (const run of setups) await run(REQUESTS * 1000); // warm-up (its own prompts)
    const rates: number[][] = setups.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < setups.length; k++) {
        const s = (round + k) % setups.length;
        rates[s]!.push(await setups[s]!((round + 1) * REQUESTS));
      }
    }
    const [baseline, on, off, baselineSat, onSat] = rates as [number[], number[], number[], number[], number[]];
    const r = (x: number): number => Math.round(x * 1000) / 1000;
    const line = (bench: string, ours: number[], base: number[]): string =>
      JSON.stringify({
        bench,
        ours: r(median(ours)),
        baseline: r(median(base)),
        unit: 'req/s',
        ratio: r(median(ours.map((x, i) => x / base[i]!))),
      });
    if (process.env.BENCH_VERBOSE !== undefined) {
      process.stderr.write(
        `rounds (req/s, ${CONCURRENCY} clients): in-process ${baseline.map(r).join(' ')} | on ${on.map(r).join(' ')} | off ${off.map(r).join(' ')}\n`,
      );
      process.stderr.write(
        `rounds (req/s, ${SATURATED} clients): in-process ${baselineSat.map(r).join(' ')} | on ${onSat.map(r).join(' ')}\n`,
      );
    }
    process.stdout.write(line('pipeline_overhead', on, baseline) + '\n');
    process.stdout.write(line('pipeline_metrics_on_vs_off', on, off) + '\n');
    process.stdout.write(line('pipeline_overhead_saturated', onSat, baselineSat) + '\n');
  } finally {
    for (const s of servers) {
      if (s.proc.pid !== undefined) {
        try {
          process.kill(-s.proc.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    agent.destroy();
    await local?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench pipeline: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
