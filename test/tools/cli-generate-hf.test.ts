/** `tsserve generate --model DIR` on a Hugging Face export with no model-config.yaml. */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeHfDir } from '../../tools/models/hf-dir.js';
import { greedyFile } from '../../tools/models/hf-greedy.js';

const CLI = path.resolve(import.meta.dirname, '..', '..', '..', 'bin', 'tsserve.js');

describe('tsserve generate on a Hugging Face export', () => {
  let root = '';
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-gen-hf-'));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it("should give each prompt the direct onnxruntime greedy loop's token ids (greedy and 6 tokens by generation_config.json)", async () => {
    const dir = path.join(root, 'llama-merged');
    const { onnxFile } = writeHfDir(dir, {
      merged: true,
      generationConfig: { eos_token_id: 256, temperature: 0, max_new_tokens: 6 },
    });
    const prompts = [
      [5, 6, 7],
      [100, 101, 102, 103, 104, 105, 106],
    ];
    const input = path.join(root, 'in.jsonl');
    fs.writeFileSync(
      input,
      prompts.map((p) => JSON.stringify({ prompt: p, max_tokens: 6, temperature: 0, ignore_eos: true })).join('\n') +
        '\n',
    );
    const r = spawnSync(process.execPath, [CLI, 'generate', '--model', dir, '--input', input], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect([r.status, r.stderr]).to.deep.equal([0, '']);
    const got = r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { choices: { token_ids: number[] }[] }).choices[0]!.token_ids);
    const want: number[][] = [];
    for (const p of prompts) want.push((await greedyFile(onnxFile, 2, [p], 6)).tokens[0]!);
    expect(got).to.deep.equal(want);
  });

  it('should list every problem of a broken export, naming file and key', () => {
    const dir = path.join(root, 'broken');
    writeHfDir(dir, {});
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ num_hidden_layers: 2 }));
    const input = path.join(root, 'one.jsonl');
    fs.writeFileSync(input, '{"prompt":[1]}\n');
    const r = spawnSync(process.execPath, [CLI, 'generate', '--model', dir, '--input', input], { encoding: 'utf8' });
    expect([r.status, r.stderr]).to.deep.equal([
      1,
      [
        'tsserve generate: config.json: vocab_size: required (a positive integer)',
        'tsserve generate: config.json: num_attention_heads: required (a positive integer)',
        'tsserve generate: config.json: max_position_embeddings: required (a positive integer)',
        '',
      ].join('\n'),
    ]);
  });
});
