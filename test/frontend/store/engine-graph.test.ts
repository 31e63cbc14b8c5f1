import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadModelConfig } from '../../../frontend/store/model-config.js';
import { GraphBuilder } from '../../../tools/models/onnx-builder.js';

const MODEL_YAML =
  '  vocab_size: 259\n  num_layers: 1\n  num_heads: 1\n  head_dim: 4\n  bos_token_id: 256\n  eos_token_id: 257\n  pad_token_id: 258\n';
const SPEC_YAML = '  speculative_config:\n    method: ngram\n    num_speculative_tokens: 3\n';

/** A graph with these inputs (an Identity of the first is its output): only the names matter here. */
function writeGraph(file: string, inputs: readonly string[]): void {
  const g = new GraphBuilder('g');
  for (const name of inputs) g.input(name, 'int64', ['B', 'T']);
  g.output('logits', 'int64', ['B', 'T'], g.op('Identity', [inputs[0]!]));
  g.write(file);
}

describe('model-config.yaml: what the graph must offer the engine settings', () => {
  let dir: string;
  let f: string;
  let onnx: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-engine-graph-'));
    f = path.join(dir, 'model-config.yaml');
    onnx = path.join(dir, 'model.onnx');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should stop speculative decoding on a fast graph without num_logits at the config check (the worker refused it at every load, retried forever)', async () => {
    writeGraph(onnx, ['input_ids', 'position_ids', 'attn_bias', 'past_key.0', 'past_value.0']);
    fs.writeFileSync(f, `handler: generate\nmodel: model.onnx\nengine:\n${MODEL_YAML}${SPEC_YAML}`);
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: [
        `${f}:12:5: engine.speculative_config: n-gram speculative decoding needs logits for several positions, and model.onnx has no num_logits input; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)`,
      ],
    });
    // With num_logits the same block loads.
    writeGraph(onnx, ['input_ids', 'position_ids', 'attn_bias', 'num_logits', 'past_key.0', 'past_value.0']);
    expect((await loadModelConfig('m', dir)).ok).to.equal(true);
  });

  it('should stop speculative decoding on a graph found to be in the usual exported layout under layout: auto', async () => {
    writeGraph(onnx, [
      'input_ids',
      'attention_mask',
      'position_ids',
      'past_key_values.0.key',
      'past_key_values.0.value',
    ]);
    fs.writeFileSync(f, `handler: generate\nmodel: model.onnx\nengine:\n  layout: auto\n${MODEL_YAML}${SPEC_YAML}`);
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: [
        `${f}:13:5: engine.speculative_config: n-gram speculative decoding needs logits for several positions, and model.onnx is in the usual exported layout (it takes attention_mask); remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)`,
      ],
    });
  });

  it('should stop a graph whose KV layout cannot be told, at its model: key', async () => {
    writeGraph(onnx, ['input_ids', 'position_ids']);
    fs.writeFileSync(f, `handler: generate\nmodel: model.onnx\nengine:\n${MODEL_YAML}`);
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: [
        `${f}:2:8: model: cannot tell the KV layout of model.onnx: it has neither attn_bias (the fast layout) nor attention_mask (the usual exported layout) among its inputs (input_ids, position_ids)`,
      ],
    });
    // Named by the block, the layout's inputs are what the graph lacks.
    fs.writeFileSync(f, `handler: generate\nmodel: model.onnx\nengine:\n  layout: fast\n${MODEL_YAML}`);
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: [
        `${f}:2:8: model: model.onnx lacks inputs of the fast layout (which engine.layout names) for num_layers 1: attn_bias, past_key.0, past_value.0`,
      ],
    });
  });

  it('should stop a num_layers the graph has no past K/V inputs for (the runner refused it at every load)', async () => {
    writeGraph(onnx, ['input_ids', 'position_ids', 'attn_bias', 'past_key.0', 'past_value.0']);
    fs.writeFileSync(
      f,
      `handler: generate\nmodel: model.onnx\nengine:\n${MODEL_YAML.replace('num_layers: 1', 'num_layers: 3')}`,
    );
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: [
        `${f}:2:8: model: model.onnx lacks inputs of the fast layout (which its inputs show) for num_layers 3: past_key.1, past_key.2, past_value.1, past_value.2`,
      ],
    });
  });
});
