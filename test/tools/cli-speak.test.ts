/** `tsserve speak`: offline spoken answers through the pipeline's orchestrator, real workers, WAVs decoded with wavefile. */
import { expect } from 'chai';
import { pastFirstLine } from '../support/first-line.js';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, generateStore, removeStores, tempDir } from '../e2e/harness.js';
import { decodeWav } from '../e2e/pipeline-helpers.js';

describe('tsserve speak', function () {
  this.timeout(120_000);
  let dir: string;

  before(() => {
    dir = tempDir('speak');
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it('should write one WAV per prompt, in order, with the frames it reports', () => {
    const store = generateStore(['tiny-lm', 'tiny-vocoder', 'tiny-omni']);
    const input = path.join(dir, 'in.jsonl');
    fs.writeFileSync(
      input,
      '{"prompt":"Hi","max_tokens":6,"temperature":0}\n{"prompt":"Bye","max_tokens":3,"id":"b"}\n',
    );
    const out = path.join(dir, 'out');
    const r = spawnSync(
      process.execPath,
      [CLI, 'speak', '--model-store', store, '--model', 'tiny-omni', '--input', input, '--output-dir', out],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).to.equal(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: unknown; file: string; frames: number; finish_reason: string });
    expect(lines.map((l) => [l.id, path.basename(l.file)])).to.deep.equal([
      [0, '0.wav'],
      ['b', '1.wav'],
    ]);
    for (const l of lines) {
      const wav = decodeWav(fs.readFileSync(l.file));
      expect([wav.sampleRate, wav.frames]).to.deep.equal([24000, l.frames]);
      expect(l.frames % 960).to.equal(0);
    }
    expect(lines[0]!.frames).to.be.at.most(6 * 960);
  });

  it('should list every problem of its input and exit 2', () => {
    const input = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(input, '{"prompt":""}\nnot json\n');
    const r = spawnSync(process.execPath, [CLI, 'speak', '--model', 'x', '--input', input], { encoding: 'utf8' });
    expect(r.status).to.equal(2);
    expect(r.stderr.split('\n').slice(0, 3)).to.deep.equal([
      'tsserve speak: --model-store is required',
      'tsserve speak: --output-dir is required',
      `tsserve speak: ${input}:1: prompt must not be empty`,
    ]);
  });

  it('should refuse a missing store, a file as the output dir and a model it cannot serve in one line each, with no stack and no scratch dir left', () => {
    const store = generateStore(['tiny-lm', 'tiny-vocoder', 'tiny-omni']);
    const input = path.join(dir, 'one.jsonl');
    fs.writeFileSync(input, '{"prompt":"Hi","max_tokens":2}\n');
    const scratch = (): string[] =>
      fs
        .readdirSync(os.tmpdir())
        .filter((f) => f.startsWith('tsserve-speak-'))
        .sort();
    const before = scratch();
    const speak = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, 'speak', '--input', input, ...args], { encoding: 'utf8' });
    const noStore = speak(
      '--model-store',
      path.join(dir, 'nope'),
      '--model',
      'tiny-omni',
      '--output-dir',
      path.join(dir, 'o'),
    );
    expect([noStore.status, noStore.stderr.split('\n')[0]]).to.deep.equal([
      2,
      `tsserve speak: --model-store ${path.join(dir, 'nope')}: no such directory`,
    ]);
    const fileOut = speak('--model-store', store, '--model', 'tiny-omni', '--output-dir', input);
    expect([fileOut.status, fileOut.stderr.split('\n')[0]]).to.deep.equal([
      2,
      `tsserve speak: --output-dir: ${input} exists and is not a directory`,
    ]);
    const unknown = speak('--model-store', store, '--model', 'nosuch', '--output-dir', path.join(dir, 'o'));
    expect([unknown.status, unknown.stderr]).to.deep.equal([
      1,
      `tsserve speak: model directory 'nosuch' not found in ${store}\n`,
    ]);
    const stage = speak('--model-store', store, '--model', 'tiny-vocoder', '--output-dir', path.join(dir, 'o'));
    expect([stage.status, stage.stderr]).to.deep.equal([
      1,
      'tsserve speak: model tiny-vocoder has handler vocoder: it serves as the code2wav stage of a pipeline model (handler pipeline), not alone\n',
    ]);
    expect(scratch()).to.deep.equal(before);
  });

  const SPEAK_ARGS = (store: string, input: string, out: string): string[] => [
    CLI,
    'speak',
    '--model-store',
    store,
    '--model',
    'tiny-omni',
    '--input',
    input,
    '--output-dir',
    out,
  ];

  it('should refuse every line the server\'s spoken answer refuses, with its message and line (a null line was a TypeError, "hot" and 5 were taken as temperatures, top_p ignored)', () => {
    const input = path.join(dir, 'refused.jsonl');
    fs.writeFileSync(
      input,
      [
        'null',
        '{"prompt":"Hi","temperature":"hot"}',
        '{"prompt":"Hi","temperature":5}',
        '{"prompt":"Hi","seed":-1}',
        '{"prompt":"Hi","n":2}',
        '{"prompt":"Hi","logprobs":1}',
        '{"prompt":"Hi","echo":true}',
        '{"prompt":"Hi","voice":"x"}',
        '{"prompt":"Hi","top_p":0.5,"temperature":null}',
      ].join('\n'),
    );
    const r = spawnSync(process.execPath, SPEAK_ARGS(path.join(dir, 'nostore-needed'), input, path.join(dir, 'o')), {
      encoding: 'utf8',
    });
    expect([r.status, r.stdout]).to.deep.equal([2, '']);
    expect(r.stderr.split('\n\n')[0]!.split('\n')).to.deep.equal([
      `tsserve speak: ${input}:1: must be a JSON object`,
      `tsserve speak: ${input}:2: temperature must be a number between 0 and 2, got "hot"`,
      `tsserve speak: ${input}:3: temperature must be a number between 0 and 2, got 5`,
      `tsserve speak: ${input}:4: seed must be an integer between 0 and 9007199254740991 (2^53 - 1, the largest a JSON number carries exactly), got -1`,
      `tsserve speak: ${input}:5: n must be 1 for a spoken answer`,
      `tsserve speak: ${input}:6: logprobs is not available from tiny-omni: a pipeline model returns no token logprobs`,
      `tsserve speak: ${input}:7: echo: not taken by tsserve speak (the transcript is the answer alone)`,
      `tsserve speak: ${input}:8: Unsupported parameter: 'voice' is not supported by this server.`,
      `tsserve speak: --model-store ${path.join(dir, 'nostore-needed')}: no such directory`,
    ]);
  });

  it("should refuse a max_tokens past the thinker's max_model_len before speaking any line (exit 2, nothing written)", () => {
    const store = generateStore(['tiny-lm', 'tiny-vocoder', 'tiny-omni']);
    const input = path.join(dir, 'long.jsonl');
    fs.writeFileSync(input, '{"prompt":"Hi","max_tokens":2}\n{"prompt":"Hi","max_tokens":2000}\n');
    const out = path.join(dir, 'long-out');
    const r = spawnSync(process.execPath, SPEAK_ARGS(store, input, out), { encoding: 'utf8' });
    expect([r.status, r.stdout, r.stderr, fs.readdirSync(out)]).to.deep.equal([
      2,
      '',
      `tsserve speak: ${input}:2: 'max_tokens' or 'max_completion_tokens' is too large: 2000. This model's maximum context length is 1024 tokens and your request has 3 input tokens (2000 > 1024 - 3).\n`,
      [],
    ]);
  });

  it("should name --output-dir when it cannot be created, before starting anything (it printed mkdir's bare error after the server's start, exit 1)", () => {
    const input = path.join(dir, 'one.jsonl');
    fs.writeFileSync(input, '{"prompt":"Hi","max_tokens":2}\n');
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, '');
    const r = spawnSync(process.execPath, SPEAK_ARGS(path.join(dir), input, path.join(file, 'sub')), {
      encoding: 'utf8',
    });
    expect([r.status, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      `tsserve speak: --output-dir: cannot write WAV files in ${path.join(file, 'sub')}: ENOTDIR: not a directory, mkdir '${path.join(file, 'sub')}'\n`,
    ]);
  });

  it('should write a 24 kHz mono 16-bit WAV of 960 frames per token for a non-ASCII prompt', () => {
    const store = generateStore(['tiny-lm', 'tiny-vocoder', 'tiny-omni']);
    const input = path.join(dir, 'utf8.jsonl');
    fs.writeFileSync(input, '\ufeff{"prompt":"Grüße 日本","max_tokens":3,"temperature":0,"id":"ü"}\r\n');
    const out = path.join(dir, 'utf8-out');
    const r = spawnSync(process.execPath, SPEAK_ARGS(store, input, out), { encoding: 'utf8' });
    const file = path.join(out, '0.wav');
    expect([r.status, r.stderr, r.stdout]).to.deep.equal([
      0,
      '',
      `${JSON.stringify({ id: 'ü', file, finish_reason: 'length', frames: 2880, transcript: 'Icq' })}\n`,
    ]);
    const wav = fs.readFileSync(file);
    const dataBytes = 2880 * 2;
    expect([
      wav.length,
      wav.toString('ascii', 0, 4),
      wav.readUInt32LE(4),
      wav.toString('ascii', 8, 16),
      wav.readUInt32LE(16),
      wav.readUInt16LE(20),
      wav.readUInt16LE(22),
      wav.readUInt32LE(24),
      wav.readUInt32LE(28),
      wav.readUInt16LE(32),
      wav.readUInt16LE(34),
      wav.toString('ascii', 36, 40),
      wav.readUInt32LE(40),
    ]).to.deep.equal([
      44 + dataBytes,
      'RIFF',
      36 + dataBytes,
      'WAVEfmt ',
      16,
      1,
      1,
      24000,
      48000,
      2,
      16,
      'data',
      dataBytes,
    ]);
  });

  it('should read standard input for --input -, naming it <stdin> in its messages (it looked for a file named -)', () => {
    const store = generateStore(['tiny-lm', 'tiny-vocoder', 'tiny-omni']);
    const out = path.join(dir, 'stdin-out');
    const ok = spawnSync(process.execPath, SPEAK_ARGS(store, '-', out), {
      encoding: 'utf8',
      input: '{"prompt":"Hi","max_tokens":6,"temperature":0}\n',
    });
    expect([ok.status, ok.stderr, ok.stdout]).to.deep.equal([
      0,
      '',
      `${JSON.stringify({ id: 0, file: path.join(out, '0.wav'), finish_reason: 'length', frames: 5760, transcript: 'b5bb%d' })}\n`,
    ]);
    const bad = spawnSync(process.execPath, SPEAK_ARGS(store, '-', out), {
      encoding: 'utf8',
      input: '{"prompt":"Hi","n":2}\n',
    });
    expect([bad.status, bad.stderr.split('\n')[0]]).to.deep.equal([
      2,
      'tsserve speak: <stdin>:1: n must be 1 for a spoken answer',
    ]);
  });

  it('should on SIGINT abort what is in flight, stop its workers, remove its scratch directory and exit 130 after whole lines (its workers ran on as orphans)', async () => {
    const store = generateStore(['tiny-lm', 'tiny-vocoder', 'tiny-omni']);
    const input = path.join(dir, 'sigint.jsonl');
    const long = '{"prompt":"Hi","max_tokens":1000,"ignore_eos":true}';
    fs.writeFileSync(
      input,
      ['{"prompt":"Hi","max_tokens":1,"temperature":0,"id":"first"}', long, long, long].join('\n'),
    );
    const out = path.join(dir, 'sigint-out');
    const scratch = (): string[] =>
      fs
        .readdirSync(os.tmpdir())
        .filter((f) => f.startsWith('tsserve-speak-'))
        .sort();
    const before = scratch();
    const run = await pastFirstLine(SPEAK_ARGS(store, input, out));
    const workers = spawnSync('ps', ['-o', 'pid=', '--ppid', String(run.child.pid)], { encoding: 'utf8' })
      .stdout.trim()
      .split(/\s+/)
      .map(Number);
    run.child.kill('SIGINT');
    const code = await run.exited;
    const alive = workers.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect([code, run.stdout(), run.stderr(), workers.length, alive, scratch(), fs.readdirSync(out)]).to.deep.equal([
      130,
      `${JSON.stringify({ id: 'first', file: path.join(out, '0.wav'), finish_reason: 'length', frames: 960, transcript: 'b' })}\n`,
      'tsserve speak: interrupted; 1 of 4 answers written\n',
      2,
      [],
      before,
      ['0.wav'],
    ]);
  });
});
