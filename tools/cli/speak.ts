/**
 * `tsserve speak --model-store DIR --model NAME --input prompts.jsonl --output-dir OUT`:
 * offline spoken answers of a pipeline model through the same orchestrator the server runs
 * (PipelineModel.speak — no HTTP request is made; the server's listeners are bound to loopback
 * ephemeral ports only because the pipeline's workers are the server's). Every input line is a
 * `/v1/completions` body without `model` (completion-lines.ts: the server's fields, defaults and
 * messages) plus an optional "id"; each answer is written to OUT/<n>.wav and one JSON line
 * `{"id", "file", "finish_reason", "frames", "transcript"}` is printed, in order.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { defaultMetricsConfigPath, formatProblem, loadMetricsConfig } from '../../schema/config/load.js';
import { FrontendMetrics } from '../../frontend/metrics/frontend-metrics.js';
import { MetricsIngest } from '../../frontend/metrics/ingest.js';
import { parseAddress } from '../../frontend/http/address.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';
import { createServer, defaultKinds } from '../../frontend/main.js';
import { PipelineModel } from '../../frontend/pipeline/pipeline-model.js';
import type { SpeakHandle, SpeakResult } from '../../frontend/pipeline/speak.js';
import { createServerLogger } from '../../frontend/log/logger.js';
import { wavFile } from '../../frontend/openai/wav.js';
import type { ParsedRequest } from '../../frontend/openai/params.js';
import { makeDirs, notADirectory } from './dir-arg.js';
import type { InputLine, ReadyLine } from './completion-lines.js';
import { parseInput, readyLine } from './completion-lines.js';

const USAGE = `Usage: tsserve speak --model-store DIR --model NAME --input FILE.jsonl --output-dir OUT

Speaks every prompt of FILE.jsonl (- for standard input) with the pipeline model NAME (handler:
pipeline, e.g. tiny-omni) of the store DIR, through the same orchestrator as the server; writes
OUT/<n>.wav (n: the prompt's index, from 0) and prints one JSON line per prompt, in input order:
  {"id":..., "file":..., "finish_reason":..., "frames":..., "transcript":...}
Input lines: a /v1/completions body ("model" optional: NAME), one prompt per line, and an optional
  "id"; the server's fields, defaults (max_tokens 16) and checks (n 1, no logprobs, no echo), e.g.
  {"prompt": "text", "max_tokens": 16, "temperature": 1, "top_p": 1, "seed": 0, "id": "optional"}
Exit status: 0 every prompt spoken; 1 the model could not be served or a prompt failed (its line is
  {"id":..., "error":{"status":..., "message":...}}); 2 a bad flag or input line (each one listed
  with its FILE:LINE, nothing spoken).
`;

const FLAGS: readonly FlagDef[] = [
  { flag: 'model-store', kind: 'string' },
  { flag: 'model', kind: 'string' },
  { flag: 'input', kind: 'string' },
  { flag: 'output-dir', kind: 'string' },
];

/** Exit code of an interrupted run (SIGINT), the shell's 128 + 2. */
const INTERRUPTED = 130;

/** The spoken chat's own refusals (frontend/openai/audio.ts), in the server's words; echo has no transcript to lead. */
function spokenRule(model: string): (r: ParsedRequest) => string | null {
  return (r) => {
    if (r.params.n !== 1) return 'n must be 1 for a spoken answer';
    if (r.params.logprobs !== undefined)
      return `logprobs is not available from ${model}: a pipeline model returns no token logprobs`;
    if (r.echo) return 'echo: not taken by tsserve speak (the transcript is the answer alone)';
    return null;
  };
}

/** Runs `tsserve speak`; resolves to the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseFlags(argv, FLAGS, 'tsserve speak');
  if (parsed.given.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const get = (f: string): string | undefined => parsed.given.values.get(f)?.at(-1);
  const problems = [...parsed.problems];
  for (const f of ['model-store', 'model', 'input', 'output-dir'])
    if (get(f) === undefined) problems.push(`--${f} is required`);
  const input = get('input');
  let lines: InputLine[] = [];
  if (input !== undefined) {
    let bytes: Buffer | null = null;
    // `-` is standard input, as for tsserve generate.
    const stdin = input === '-';
    try {
      bytes = fs.readFileSync(stdin ? 0 : input);
    } catch (e) {
      problems.push(`${input}: ${(e as Error).message}`);
    }
    if (bytes !== null) {
      const read = parseInput(bytes, stdin ? '<stdin>' : input, {
        command: 'tsserve speak',
        model: get('model') ?? '',
        check: spokenRule(get('model') ?? 'the model'),
      });
      lines = read.lines;
      problems.push(...read.problems);
    }
  }
  const store = get('model-store');
  if (store !== undefined && !isDirectory(store)) problems.push(`--model-store ${store}: no such directory`);
  const outDir = get('output-dir');
  const notDir = outDir === undefined ? null : notADirectory('output-dir', outDir);
  if (notDir !== null) problems.push(notDir);
  if (problems.length > 0) {
    process.stderr.write(`${problems.map((p) => `tsserve speak: ${p}`).join('\n')}\n\n${USAGE}`);
    return 2;
  }
  // Made before anything starts, and named by its flag: the bare mkdir error came after the server's start.
  try {
    makeDirs(outDir!);
  } catch (e) {
    process.stderr.write(`tsserve speak: --output-dir: cannot write WAV files in ${outDir}: ${(e as Error).message}\n`);
    return 2;
  }
  const cfg = loadMetricsConfig(defaultMetricsConfigPath());
  if (!cfg.ok) {
    process.stderr.write(`${cfg.problems.map(formatProblem).join('\n')}\n`);
    return 1;
  }
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-speak-'));
  const logger = createServerLogger({ level: 'warn', logDir, console: 'off' });
  const metrics = new FrontendMetrics(cfg.config, { logDir, modes: [], log: () => undefined });
  // From here on every way out removes the scratch log directory.
  let server: Awaited<ReturnType<typeof createServer>> | null = null;
  let code = 0;
  // SIGINT aborts what is in flight and stops the workers before exiting: Node's default exit left
  // them running their last requests after their parent was gone, and the scratch directory behind.
  const handles: SpeakHandle[] = [];
  let interrupted = false;
  let onInterrupt = (): void => undefined;
  const stopped = new Promise<void>((resolve) => {
    onInterrupt = resolve;
  });
  const sigint = (): void => {
    if (interrupted) process.exit(INTERRUPTED); // a second Ctrl-C does not wait for the workers
    interrupted = true;
    for (const h of handles) h.abort();
    onInterrupt();
  };
  process.on('SIGINT', sigint);
  try {
    const loop = parseAddress('speak', 'http://127.0.0.1:0');
    const model = get('model')!;
    server = await createServer(
      {
        server: {
          inference: loop,
          management: loop,
          metrics: loop,
          modelStore: path.resolve(store!),
          models: [{ name: model, url: model }],
          logDir,
          enableTokenAuth: false,
          maxRequestSizeBytes: 1 << 20,
        },
        metrics: { config: metrics.config, configFile: defaultMetricsConfigPath(), systemIntervalSec: null },
      },
      {
        kinds: defaultKinds({ pipeline: { statsEnabled: false }, generation: { statsEnabled: false } }),
        logger: { log: logger.log },
        metrics: { port: metrics, ingest: new MetricsIngest(metrics, { log: () => undefined }) },
      },
    );
    const p = server.manager.get(model);
    if (!(p instanceof PipelineModel)) throw new Error(`model ${model} is not a pipeline (handler: pipeline)`);
    // What needs the thinker (max_model_len, its vocabulary), checked for every line before any is spoken.
    const ready: ReadyLine[] = [];
    const refused: string[] = [];
    for (const l of lines) {
      const r = readyLine(l, p.vocab);
      if (typeof r === 'string') refused.push(`tsserve speak: ${r}\n`);
      else ready.push(r);
    }
    if (refused.length > 0) {
      process.stderr.write(refused.join(''));
      return 2;
    }
    const answers = ready.map(
      ({ line: l, ids, params }, i) =>
        new Promise<string>((resolve) => {
          const failed = (error: object): void => {
            code = 1;
            resolve(JSON.stringify({ id: l.id, error }));
          };
          if (interrupted) return;
          const chunks: Uint8Array[] = [];
          const started = p.speak(
            { prompt: ids, params, arrivalMs: performance.now(), streamed: false },
            {
              onText: () => undefined,
              onAudio: (pcm) => chunks.push(pcm),
              onDone: (r: SpeakResult) => {
                const file = path.join(outDir!, `${i}.wav`);
                try {
                  fs.writeFileSync(file, wavFile(Buffer.concat(chunks), p.sampleRate));
                } catch (e) {
                  failed({ message: `cannot write ${file}: ${(e as Error).message}` });
                  return;
                }
                resolve(
                  JSON.stringify({
                    id: l.id,
                    file,
                    finish_reason: r.finishReason,
                    frames: r.frames,
                    transcript: r.transcript,
                  }),
                );
              },
              onError: (status, message) => failed({ status, message }),
            },
          );
          if ('status' in started) failed(started);
          else handles.push(started);
        }),
    );
    // Each answer's line as soon as it and those before it are done, so an interrupted run printed whole lines.
    let written = 0;
    for (const a of answers) {
      const line = await Promise.race([a, stopped.then(() => null)]);
      if (line === null) break;
      process.stdout.write(`${line}\n`);
      written++;
    }
    if (interrupted) {
      process.stderr.write(`tsserve speak: interrupted; ${written} of ${ready.length} answers written\n`);
      code = INTERRUPTED;
    }
  } catch (e) {
    process.stderr.write(`tsserve speak: ${(e as Error).message}\n`);
    code = interrupted ? INTERRUPTED : 1;
  } finally {
    await server?.stop();
    await metrics.close();
    logger.close();
    fs.rmSync(logDir, { recursive: true, force: true });
    process.removeListener('SIGINT', sigint);
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
