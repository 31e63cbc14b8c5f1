/**
 * `tsserve speak --model-store DIR --model NAME --input prompts.jsonl --output-dir OUT`:
 * offline spoken answers of a pipeline model through the same orchestrator the server runs
 * (PipelineModel.speak — no HTTP request is made; the server's listeners are bound to loopback
 * ephemeral ports only because the pipeline's workers are the server's). Every input line is
 * `{"prompt": "...", "max_tokens": 16, "id": ...}`; each answer is written to OUT/<n>.wav and
 * one JSON line `{"id", "file", "finish_reason", "frames", "transcript"}` is printed, in order.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { defaultMetricsConfigPath, formatProblem, loadMetricsConfig } from '../../schema/config/load.js';
import { FrontendMetrics } from '../../frontend/metrics/frontend-metrics.js';
import { MetricsIngest } from '../../frontend/metrics/ingest.js';
import { parseAddress } from '../../frontend/server/address.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';
import { startServer } from '../../frontend/server/server.js';
import { registerGenerationFrontend } from '../../frontend/generation/generation-kind.js';
import { registerPipelineFrontend } from '../../frontend/pipeline/pipeline-kind.js';
import { PipelineModel } from '../../frontend/pipeline/pipeline-model.js';
import type { SpeakResult } from '../../frontend/pipeline/orchestrator.js';
import { createServerLogger } from '../../frontend/log/logger.js';
import { wavFile } from '../../frontend/openai/wav.js';
import { makeDirs, notADirectory } from './dir-arg.js';

const USAGE = `Usage: tsserve speak --model-store DIR --model NAME --input FILE.jsonl --output-dir OUT

Speaks every prompt of FILE.jsonl with the pipeline model NAME (handler: pipeline, e.g. tiny-omni)
of the store DIR, through the same orchestrator as the server; writes OUT/<line>.wav and prints
one JSON line per prompt: {"id":..., "file":..., "finish_reason":..., "frames":..., "transcript":...}.
Input lines: {"prompt": "text", "max_tokens": 16, "temperature": 1, "seed": 0, "id": "optional"}
`;

const FLAGS: readonly FlagDef[] = [
  { flag: 'model-store', kind: 'string' }, { flag: 'model', kind: 'string' }, { flag: 'input', kind: 'string' }, { flag: 'output-dir', kind: 'string' },
];

interface Line { readonly id: unknown; readonly prompt: string; readonly maxTokens: number; readonly temperature?: number; readonly seed?: number }

function parseLines(text: string, file: string, problems: string[]): Line[] {
  const out: Line[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(raw) as Record<string, unknown>;
    } catch (e) {
      problems.push(`${file}:${i + 1}: not JSON (${(e as Error).message})`);
      return;
    }
    if (typeof o.prompt !== 'string' || o.prompt === '') { problems.push(`${file}:${i + 1}: "prompt" must be a non-empty string`); return; }
    const mt = o.max_tokens ?? 16;
    if (typeof mt !== 'number' || !Number.isInteger(mt) || mt < 1) { problems.push(`${file}:${i + 1}: "max_tokens" must be an integer >= 1`); return; }
    out.push({
      id: o.id ?? out.length, prompt: o.prompt, maxTokens: mt,
      ...(typeof o.temperature === 'number' ? { temperature: o.temperature } : {}), ...(typeof o.seed === 'number' ? { seed: o.seed } : {}),
    });
  });
  return out;
}

/** Runs `tsserve speak`; resolves to the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseFlags(argv, FLAGS, 'tsserve speak');
  if (parsed.given.help) { process.stdout.write(USAGE); return 0; }
  const get = (f: string): string | undefined => parsed.given.values.get(f)?.at(-1);
  const problems = [...parsed.problems];
  for (const f of ['model-store', 'model', 'input', 'output-dir']) if (get(f) === undefined) problems.push(`--${f} is required`);
  const input = get('input');
  let lines: Line[] = [];
  if (input !== undefined) {
    try { lines = parseLines(fs.readFileSync(input, 'utf8'), input, problems); } catch (e) { problems.push(`${input}: ${(e as Error).message}`); }
  }
  const store = get('model-store');
  if (store !== undefined && !isDirectory(store)) problems.push(`--model-store ${store}: no such directory`);
  const outDir = get('output-dir');
  const notDir = outDir === undefined ? null : notADirectory('output-dir', outDir);
  if (notDir !== null) problems.push(notDir);
  if (problems.length > 0) { process.stderr.write(`${problems.map((p) => `tsserve speak: ${p}`).join('\n')}\n\n${USAGE}`); return 2; }
  const cfg = loadMetricsConfig(defaultMetricsConfigPath());
  if (!cfg.ok) { process.stderr.write(`${cfg.problems.map(formatProblem).join('\n')}\n`); return 1; }
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-speak-'));
  const logger = createServerLogger({ level: 'warn', logDir, console: 'off' });
  const metrics = new FrontendMetrics(cfg.config, { logDir, modes: [], log: () => undefined });
  // From here on every way out removes the scratch log directory.
  let server: Awaited<ReturnType<typeof startServer>> | null = null;
  let code = 0;
  try {
    makeDirs(outDir!);
    registerPipelineFrontend({ statsEnabled: false });
    registerGenerationFrontend({ statsEnabled: false });
    const loop = parseAddress('speak', 'http://127.0.0.1:0');
    const model = get('model')!;
    server = await startServer({
      inference: loop, management: loop, metrics: loop, modelStore: path.resolve(store!), models: [{ name: model, url: model }],
      logDir, enableTokenAuth: false, maxRequestSizeBytes: 1 << 20,
    }, { metrics, metricsConfig: metrics.config, ingest: new MetricsIngest(metrics, { log: () => undefined }), log: logger.log });
    const p = server.manager.get(model);
    if (!(p instanceof PipelineModel)) throw new Error(`model ${model} is not a pipeline (handler: pipeline)`);
    const answers = await Promise.all(lines.map((l, i) => new Promise<string>((resolve) => {
      const chunks: Uint8Array[] = [];
      const params = { max_tokens: l.maxTokens, ...(l.temperature !== undefined ? { temperature: l.temperature } : {}), ...(l.seed !== undefined ? { seed: l.seed } : {}) };
      const started = p.speak({ prompt: l.prompt, params, arrivalMs: performance.now(), streamed: false }, {
        onText: () => undefined,
        onAudio: (pcm) => chunks.push(pcm),
        onDone: (r: SpeakResult) => {
          const file = path.join(outDir!, `${i}.wav`);
          fs.writeFileSync(file, wavFile(Buffer.concat(chunks), p.sampleRate));
          resolve(JSON.stringify({ id: l.id, file, finish_reason: r.finishReason, frames: r.frames, transcript: r.transcript }));
        },
        onError: (status, message) => { code = 1; resolve(JSON.stringify({ id: l.id, error: { status, message } })); },
      });
      if ('status' in started) { code = 1; resolve(JSON.stringify({ id: l.id, error: started })); }
    })));
    for (const a of answers) process.stdout.write(`${a}\n`);
  } catch (e) {
    process.stderr.write(`tsserve speak: ${(e as Error).message}\n`);
    code = 1;
  } finally {
    await server?.stop();
    await metrics.close();
    logger.close();
    fs.rmSync(logDir, { recursive: true, force: true });
  }
  return code;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
