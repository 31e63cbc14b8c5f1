/**
 * readTokenizerFiles: a model directory's tokenizer files read as a request is (bounded, inside
 * the directory): absent files are absent, chat_template.jinja wins over tokenizer_config's
 * template (a string, or the entry named `default` of a list), and a file that is there but not
 * JSON, or a tokenizer.json that is a link out of the directory, is a load error naming it.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readTokenizerFiles } from '../../../schema/text/tokenizer-files.js';

describe('readTokenizerFiles', () => {
  let root: string;
  let dir: string;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tokfiles-'));
    dir = path.join(root, 'model');
    fs.mkdirSync(dir);
  });

  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('should read a directory without tokenizer files as a byte-level model without a template', async () => {
    expect(await readTokenizerFiles(dir)).to.deep.equal({
      tokenizerJson: null,
      tokenizerConfig: {},
      specialTokensMap: {},
      chatTemplate: undefined,
    });
  });

  it("should take chat_template.jinja over tokenizer_config's, and a list's `default` entry", async () => {
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), '{"model":{}}');
    fs.writeFileSync(
      path.join(dir, 'tokenizer_config.json'),
      JSON.stringify({
        chat_template: [
          { name: 'tool_use', template: 'T' },
          { name: 'default', template: 'D' },
        ],
      }),
    );
    fs.writeFileSync(path.join(dir, 'special_tokens_map.json'), '{"eos_token":"</s>"}');
    const listed = await readTokenizerFiles(dir);
    expect([listed.tokenizerJson, listed.specialTokensMap, listed.chatTemplate]).to.deep.equal([
      { model: {} },
      { eos_token: '</s>' },
      'D',
    ]);
    fs.writeFileSync(path.join(dir, 'chat_template.jinja'), 'J');
    expect((await readTokenizerFiles(dir)).chatTemplate).to.equal('J');
  });

  it('should refuse a file that is not a JSON object, naming it and showing a bounded excerpt', async () => {
    fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), '[1, 2]');
    let err: unknown;
    try {
      await readTokenizerFiles(dir);
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).to.equal('tokenizer_config.json: not a JSON object');
    fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), `{"x": ${'9'.repeat(500)}`);
    try {
      await readTokenizerFiles(dir);
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).to.match(
      /^tokenizer_config\.json: not JSON \(.+\); it begins "\{\\"x\\": 9{34}"…\(466 more\)$/,
    );
  });

  it('should refuse a tokenizer.json that links out of the model directory', async () => {
    fs.writeFileSync(path.join(root, 'outside.json'), '{}');
    fs.symlinkSync(path.join(root, 'outside.json'), path.join(dir, 'tokenizer.json'));
    let err: unknown;
    try {
      await readTokenizerFiles(dir);
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).to.equal('tokenizer.json: resolves outside the model store');
  });
});
