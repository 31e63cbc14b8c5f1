/** `tsserve speak`: offline spoken answers through the pipeline's orchestrator, real workers, WAVs decoded with wavefile. */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, generateStore, removeStores, tempDir } from '../e2e/harness.js';
import { decodeWav } from '../e2e/pipeline-helpers.js';

describe('tsserve speak', function () {
  this.timeout(120_000);
  let dir: string;

  before(() => { dir = tempDir('speak'); });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it('should write one WAV per prompt, in order, with the frames it reports', () => {
    const store = generateStore(['tiny-lm', 'tiny-vocoder', 'tiny-omni']);
    const input = path.join(dir, 'in.jsonl');
    fs.writeFileSync(input, '{"prompt":"Hi","max_tokens":6,"temperature":0}\n{"prompt":"Bye","max_tokens":3,"id":"b"}\n');
    const out = path.join(dir, 'out');
    const r = spawnSync(process.execPath, [CLI, 'speak', '--model-store', store, '--model', 'tiny-omni', '--input', input, '--output-dir', out], { encoding: 'utf8' });
    expect(r.status, r.stderr).to.equal(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: unknown; file: string; frames: number; finish_reason: string });
    expect(lines.map((l) => [l.id, path.basename(l.file)])).to.deep.equal([[0, '0.wav'], ['b', '1.wav']]);
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
      `tsserve speak: ${input}:1: "prompt" must be a non-empty string`,
    ]);
  });

  it('should refuse a missing store, a file as the output dir and a model it cannot serve in one line each, with no stack and no scratch dir left', () => {
    const store = generateStore(['tiny-lm', 'tiny-vocoder', 'tiny-omni']);
    const input = path.join(dir, 'one.jsonl');
    fs.writeFileSync(input, '{"prompt":"Hi","max_tokens":2}\n');
    const scratch = (): string[] => fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('tsserve-speak-')).sort();
    const before = scratch();
    const speak = (...args: string[]) => spawnSync(process.execPath, [CLI, 'speak', '--input', input, ...args], { encoding: 'utf8' });
    const noStore = speak('--model-store', path.join(dir, 'nope'), '--model', 'tiny-omni', '--output-dir', path.join(dir, 'o'));
    expect([noStore.status, noStore.stderr.split('\n')[0]]).to.deep.equal([2, `tsserve speak: --model-store ${path.join(dir, 'nope')}: no such directory`]);
    const fileOut = speak('--model-store', store, '--model', 'tiny-omni', '--output-dir', input);
    expect([fileOut.status, fileOut.stderr.split('\n')[0]]).to.deep.equal([2, `tsserve speak: --output-dir: ${input} exists and is not a directory`]);
    const unknown = speak('--model-store', store, '--model', 'nosuch', '--output-dir', path.join(dir, 'o'));
    expect([unknown.status, unknown.stderr]).to.deep.equal([1, `tsserve speak: model directory 'nosuch' not found in ${store}\n`]);
    const stage = speak('--model-store', store, '--model', 'tiny-vocoder', '--output-dir', path.join(dir, 'o'));
    expect([stage.status, stage.stderr]).to.deep.equal([1, 'tsserve speak: model tiny-vocoder has handler vocoder: it serves as the code2wav stage of a pipeline model (handler pipeline), not alone\n']);
    expect(scratch()).to.deep.equal(before);
  });
});
