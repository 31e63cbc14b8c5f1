/** `tsserve generate`: offline generation from a JSONL file, run as a user runs it (bin/tsserve.js). */
import { expect } from 'chai';
import { pastFirstLine } from '../support/first-line.js';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { writeModels } from '../backend/engine/real-harness.js';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../../bin/tsserve.js');

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
    writeFileSync(
      input,
      [
        '{"prompt":"Hello","max_tokens":8,"temperature":0}',
        '',
        '{"id":"s","prompt":"Hello","max_tokens":3,"temperature":0,"stop":[";"]}',
      ].join('\n'),
    );
    const r = await run(process.execPath, [
      BIN,
      'generate',
      '--model',
      model,
      '--input',
      input,
      '--output',
      output,
      '--set',
      'maxNumSeqs=4',
    ]);
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
    expect(err?.stderr).to.equal(
      `${input}:1: prompt must be a string, a list of token ids, or a non-empty list of either\n${input}:2: top_p must be a number in (0, 1], got 0\n`,
    );
  });

  it("should name the file and line of every prompt the model refuses, with the server's message, and generate nothing (exit 2)", async () => {
    const input = join(root, 'long.jsonl');
    const output = join(root, 'long.out.jsonl');
    writeFileSync(
      input,
      `{"prompt":"Hello","max_tokens":2}\n\n{"id":"long","prompt":"${'a'.repeat(20)}","max_tokens":2}\n{"prompt":"ab","max_tokens":14}\n{"prompt":"ab","stop_token_ids":[300]}\n`,
    );
    const err = await run(process.execPath, [
      BIN,
      'generate',
      '--model',
      model,
      '--input',
      input,
      '--output',
      output,
      '--max_model_len=16',
    ]).then(
      () => null,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect([err?.code, err?.stdout, existsSync(output)]).to.deep.equal([2, '', false]);
    expect(err?.stderr).to.equal(
      `${input}:3: This model's maximum context length is 16 tokens. However, your request has 21 input tokens. Please reduce the length of the input messages.\n` +
        `${input}:4: 'max_tokens' or 'max_completion_tokens' is too large: 14. This model's maximum context length is 16 tokens and your request has 3 input tokens (14 > 16 - 3).\n` +
        `${input}:5: stop_token_ids token id 300 at index 0 is outside the model's vocabulary (0..258)\n`,
    );
  });

  it('should take engine settings as vLLM-named flags and refuse a bad one with its key and value', async () => {
    const input = join(root, 'flags.jsonl');
    writeFileSync(input, '{"prompt":"Hello","max_tokens":8,"temperature":0,"stop_token_ids":[59],"min_tokens":1}\n');
    const r = await run(process.execPath, [
      BIN,
      'generate',
      '--model',
      model,
      '--input',
      input,
      '--max-num-seqs',
      '4',
      '--max_model_len=64',
      '--no-enable-prefix-caching',
      '--block_size',
      '8',
    ]);
    expect(r.stdout).to.equal(
      '{"id":0,"prompt":"Hello","choices":[{"index":0,"text":"Iz","token_ids":[73,122,59],"finish_reason":"stop","stop_reason":59}],"usage":{"prompt_tokens":6,"completion_tokens":3,"cached_tokens":0}}\n',
    );
    const err = await run(process.execPath, [
      BIN,
      'generate',
      '--model',
      model,
      '--input',
      input,
      '--max_num_seqs',
      'many',
      '--enable-chunked-prefill',
    ]).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).to.equal(2);
    expect(err?.stderr).to.equal('tsserve generate: --max_num_seqs: must be an integer >= 1, got "many"\n');
  });

  /** Runs the command; resolves to its exit code and output (a non-zero exit too). */
  const gen = (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    run(process.execPath, [BIN, 'generate', '--model', model, ...args]).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it('should apply every sampling field the server takes, as /v1/completions does (penalties, logit_bias, logprobs and echo were dropped)', async () => {
    const input = join(root, 'fields.jsonl');
    writeFileSync(
      input,
      [
        '{"id":"fp","prompt":"Hello","max_tokens":12,"temperature":0,"frequency_penalty":2}',
        '{"id":"bias","prompt":"Hello","max_tokens":12,"temperature":0,"logit_bias":{"122":-100}}',
        '{"id":"echo","prompt":"Hello","max_tokens":4,"temperature":0,"echo":true}',
        '{"id":"lp","prompt":"Hello","max_tokens":2,"temperature":0,"logprobs":1}',
        '{"id":"null","prompt":"Hello","max_tokens":2,"temperature":0,"top_p":null,"seed":null,"user":"u"}',
        '{"id":"seed","prompt":"The","max_tokens":5,"seed":3,"n":2}',
        // A body copied from a request to the server: its model is --model's, and it does not stream.
        '{"id":"copied","model":"tiny-lm","stream":false,"prompt":"Hello","max_tokens":2,"temperature":0}',
      ].join('\n'),
    );
    const r = await gen('--input', input);
    // The texts are /v1/completions' answers for the same bodies on the same model (tiny-lm).
    const got = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; choices: { text: string; logprobs?: unknown }[] });
    expect(got.map((o) => [o.id, ...o.choices.map((c) => c.text)])).to.deep.equal([
      ['fp', 'Iz;idbajftmh'],
      ['bias', 'Idrmidrmidrb'],
      ['echo', 'HelloIz;i'],
      ['lp', 'Iz'],
      ['null', 'Iz'],
      ['seed', 'f.K*r', 'z/C/X'],
      ['copied', 'Iz'],
    ]);
    expect(got[3]!.choices[0]!.logprobs).to.deep.equal({
      tokens: ['I', 'z'],
      token_logprobs: [-1.1726448030643952, -0.8152089336103371],
      top_logprobs: [{ I: -1.1726448030643952 }, { z: -0.8152089336103371 }],
      text_offset: [0, 1],
    });
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
  });

  it('should refuse what the server refuses with its message, and what has no meaning offline, each at its line (unknown fields were ignored)', async () => {
    const input = join(root, 'refused.jsonl');
    writeFileSync(
      input,
      [
        '{"prompt":"a","temperature":3}',
        '{"prompt":"a","n":17}',
        '{"prompt":"a","bogus":1,"best_of":2}',
        '{"prompt":""}',
        '{"prompt":"a","stream":true}',
        '{"prompt":"a","model":"other"}',
        '{"prompt":["a","b"]}',
        '[1]',
        '{"prompt":"a","presence_penalty":5}',
      ].join('\n'),
    );
    const r = await gen('--input', input);
    expect([r.code, r.stdout]).to.deep.equal([2, '']);
    expect(r.stderr.split('\n')).to.deep.equal([
      `${input}:1: temperature must be a number between 0 and 2, got 3`,
      `${input}:2: n must be an integer between 1 and 16, got 17`,
      `${input}:3: Unsupported parameters: 'bogus', 'best_of' are not supported by this server.`,
      `${input}:4: prompt must not be empty`,
      `${input}:5: stream: not taken by tsserve generate (every answer is written whole)`,
      `${input}:6: model: "other" is not the model of --model (tiny-lm); leave it out`,
      `${input}:7: prompt: one prompt per line (a string or a list of token ids), got a list of 2`,
      `${input}:8: must be a JSON object`,
      `${input}:9: presence_penalty must be a number between -2 and 2, got 5`,
      '',
    ]);
  });

  it('should read a file saved with a BOM and CRLF line ends, and refuse a line that is not UTF-8 by its line (the BOM was "not JSON", bad bytes became U+FFFD)', async () => {
    const input = join(root, 'bom.jsonl');
    writeFileSync(
      input,
      Buffer.concat([
        Buffer.from(
          '\ufeff{"prompt":"Hello","max_tokens":2,"temperature":0}\r\n\r\n{"prompt":[72,105],"max_tokens":1,"temperature":0}\r\n',
        ),
      ]),
    );
    const r = await gen('--input', input);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.equal(
      '{"id":0,"prompt":"Hello","choices":[{"index":0,"text":"Iz","token_ids":[73,122],"finish_reason":"length"}],"usage":{"prompt_tokens":6,"completion_tokens":2,"cached_tokens":0}}\n' +
        '{"id":1,"prompt":[72,105],"choices":[{"index":0,"text":"i","token_ids":[105],"finish_reason":"length"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"cached_tokens":0}}\n',
    );
    const bad = join(root, 'latin1.jsonl');
    writeFileSync(
      bad,
      Buffer.concat([Buffer.from('{"prompt":"ok"}\n{"prompt":"caf'), Buffer.from([0xe9]), Buffer.from('"}\n')]),
    );
    expect(await gen('--input', bad)).to.deep.equal({ code: 2, stdout: '', stderr: `${bad}:2: not valid UTF-8\n` });
  });

  it('should default max_tokens to 16 capped to what is left of max_model_len, as /v1/completions does', async () => {
    const input = join(root, 'default.jsonl');
    writeFileSync(input, '{"prompt":"Hello","temperature":0}\n{"prompt":"Hello there","temperature":0}\n');
    const r = await gen('--input', input, '--max-model-len', '16');
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { usage: { completion_tokens: number } }).usage.completion_tokens),
    ).to.deep.equal([10, 4]);
  });

  it('should refuse an --output that is a directory before loading the model (it failed with EISDIR after generating everything)', async () => {
    const input = join(root, 'one.jsonl');
    writeFileSync(input, '{"prompt":"Hello","max_tokens":1}\n');
    const dir = join(root, 'outdir');
    mkdirSync(dir, { recursive: true });
    expect(await gen('--input', input, '--output', dir)).to.deep.equal({
      code: 2,
      stdout: '',
      stderr: `tsserve generate: --output: ${dir} is a directory\n`,
    });
  });

  it('should answer a prompt the engine refuses at add with an error line naming its line, answer the others, and exit 1 (one refusal gave no output at all)', async () => {
    const input = join(root, 'fit.jsonl');
    writeFileSync(
      input,
      `{"prompt":"Hi","max_tokens":2,"temperature":0}\n{"id":"big","prompt":"${'a'.repeat(100)}","max_tokens":2}\n`,
    );
    expect(await gen('--input', input, '--num-gpu-blocks-override', '4', '--block-size', '16')).to.deep.equal({
      code: 1,
      stdout:
        '{"id":0,"prompt":"Hi","choices":[{"index":0,"text":"b5","token_ids":[98,53],"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"cached_tokens":0}}\n' +
        `{"id":"big","error":{"message":"${input}:2: 103 tokens need 7 KV blocks; the pool has 4"}}\n`,
      stderr: 'tsserve generate: 1 of 2 prompts failed (see their lines in the output)\n',
    });
  });

  it('should read standard input for --input -, naming it <stdin> in its messages (it looked for a file named -)', async () => {
    const feed = (text: string): Promise<{ code: number | null; stdout: string; stderr: string }> =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [BIN, 'generate', '--model', model, '--input', '-'], {
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
        });
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
        });
        child.on('close', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(text);
      });
    expect(await feed('{"prompt":"Hi","max_tokens":1,"temperature":0}\n')).to.deep.equal({
      code: 0,
      stdout:
        '{"id":0,"prompt":"Hi","choices":[{"index":0,"text":"b","token_ids":[98],"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"cached_tokens":0}}\n',
      stderr: '',
    });
    expect(await feed('\n{"prompt":"Hi","n":0}\n')).to.deep.equal({
      code: 2,
      stdout: '',
      stderr: '<stdin>:2: n must be an integer between 1 and 16, got 0\n',
    });
  });

  it('should refuse an --output that is the --input file, leaving the prompts as they were (they were replaced by the answers)', async () => {
    const input = join(root, 'same.jsonl');
    const prompts = '{"prompt":"Hello","max_tokens":1}\n';
    writeFileSync(input, prompts);
    const link = join(root, 'same-link.jsonl');
    symlinkSync(input, link);
    for (const output of [input, link]) {
      expect(await gen('--input', input, '--output', output)).to.deep.equal({
        code: 2,
        stdout: '',
        stderr: `tsserve generate: --output ${output} is the --input file; answers would replace the prompts\n`,
      });
    }
    expect(readFileSync(input, 'utf8')).to.equal(prompts);
  });

  it('should name --output and exit 1 when a write fails (a full device)', async () => {
    const input = join(root, 'full.jsonl');
    writeFileSync(input, '{"prompt":"Hello","max_tokens":1}\n');
    expect(await gen('--input', input, '--output', '/dev/full')).to.deep.equal({
      code: 1,
      stdout: '',
      stderr: 'tsserve generate: cannot write --output /dev/full: ENOSPC: no space left on device, write\n',
    });
  });

  it('should write nothing and exit 0 for an empty input file', async () => {
    const input = join(root, 'empty.jsonl');
    writeFileSync(input, '\n\n');
    expect(await gen('--input', input)).to.deep.equal({ code: 0, stdout: '', stderr: '' });
  });

  it('should write each answer as soon as it and those before it are done, and on SIGINT stop with exit 130 after whole lines only', async () => {
    const input = join(root, 'sigint.jsonl');
    const long = '{"prompt":"Hello","max_tokens":1000,"ignore_eos":true}';
    writeFileSync(
      input,
      ['{"id":"first","prompt":"Hello","max_tokens":1,"temperature":0}', long, long, long].join('\n'),
    );
    const run = await pastFirstLine([BIN, 'generate', '--model', model, '--input', input]);
    run.child.kill('SIGINT');
    expect([await run.exited, run.stdout(), run.stderr()]).to.deep.equal([
      130,
      '{"id":"first","prompt":"Hello","choices":[{"index":0,"text":"I","token_ids":[73],"finish_reason":"length"}],"usage":{"prompt_tokens":6,"completion_tokens":1,"cached_tokens":0}}\n',
      'tsserve generate: interrupted; 1 of 4 answers written\n',
    ]);
  });
});
