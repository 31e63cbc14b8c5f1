import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { writeModels } from './real-harness.js';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../../../bin/tsserve.js');

describe('tsserve generate', function () {
  let root: string;
  let model: string;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-cli-gen-'));
    model = (await writeModels(root)).fast;
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it('should print one JSON line per prompt, in input order, to --output', async () => {
    const input = join(root, 'in.jsonl');
    const output = join(root, 'out.jsonl');
    writeFileSync(input, ['{"prompt":"Hello","max_tokens":8,"temperature":0}', '', '{"id":"s","prompt":"Hello","max_tokens":3,"temperature":0,"stop":[";"]}'].join('\n'));
    const r = await run(process.execPath, [BIN, 'generate', '--model', model, '--input', input, '--output', output, '--set', 'maxNumSeqs=4']);
    expect(r.stdout).to.equal('');
    expect(readFileSync(output, 'utf8')).to.equal(
      '{"id":0,"prompt":"Hello","choices":[{"index":0,"text":"Iz;idz;j","token_ids":[73,122,59,105,100,122,59,106],"finish_reason":"length"}],"usage":{"prompt_tokens":6,"completion_tokens":8,"cached_tokens":0}}\n' +
        '{"id":"s","prompt":"Hello","choices":[{"index":0,"text":"Iz","token_ids":[73,122,59],"finish_reason":"stop","stop_reason":";"}],"usage":{"prompt_tokens":6,"completion_tokens":3,"cached_tokens":0}}\n',
    );
  });

  it('should name the file and line of every bad input line and exit 2', async () => {
    const input = join(root, 'bad.jsonl');
    writeFileSync(input, '{"prompt":3}\n{"prompt":"x","top_p":0}\n');
    const err = await run(process.execPath, [BIN, 'generate', '--model', model, '--input', input]).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).to.equal(2);
    expect(err?.stderr).to.equal(`${input}:1: prompt: must be a string\n${input}:2: params.top_p: must be a number in (0, 1]\n`);
  });

  it('should name the file and line of a prompt the engine refuses (it said \'prompt 1\', the index among the prompts, not the line)', async () => {
    const input = join(root, 'long.jsonl');
    writeFileSync(input, `{"prompt":"Hello","max_tokens":2}\n\n{"id":"long","prompt":"${'a'.repeat(20)}","max_tokens":2}\n`);
    const err = await run(process.execPath, [BIN, 'generate', '--model', model, '--input', input, '--max_model_len=16']).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).to.equal(1);
    expect(err?.stderr).to.equal(`tsserve generate: ${input}:3: the prompt has 21 tokens; this model accepts at most 15 so one can be generated\n`);
  });

  it('should take engine settings as vLLM-named flags and refuse a bad one with its key and value', async () => {
    const input = join(root, 'flags.jsonl');
    writeFileSync(input, '{"prompt":"Hello","max_tokens":8,"temperature":0,"stop_token_ids":[59],"min_tokens":1}\n');
    const r = await run(process.execPath, [BIN, 'generate', '--model', model, '--input', input, '--max-num-seqs', '4', '--max_model_len=64', '--no-enable-prefix-caching', '--block_size', '8']);
    expect(r.stdout).to.equal('{"id":0,"prompt":"Hello","choices":[{"index":0,"text":"Iz","token_ids":[73,122,59],"finish_reason":"stop","stop_reason":59}],"usage":{"prompt_tokens":6,"completion_tokens":3,"cached_tokens":0}}\n');
    const err = await run(process.execPath, [BIN, 'generate', '--model', model, '--input', input, '--max_num_seqs', 'many', '--enable-chunked-prefill']).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).to.equal(2);
    expect(err?.stderr).to.equal('tsserve generate: --max_num_seqs: must be an integer >= 1, got "many"\n');
  });
});
