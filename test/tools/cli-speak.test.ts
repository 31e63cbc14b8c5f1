/** `tsserve speak`: offline spoken answers through the pipeline's orchestrator, real workers, WAVs decoded with wavefile. */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
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
      '--model-store is required',
      '--output-dir is required',
      `${input}:1: "prompt" must be a non-empty string`,
    ]);
  });
});
