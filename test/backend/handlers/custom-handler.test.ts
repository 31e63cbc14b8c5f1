import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadMetricsConfig } from '../../../schema/config.js';
import type { ResultMessage } from '../../../schema/worker-protocol.js';
import { MLP_MODEL } from '../../../tools/models/demo-models.js';
import {
  CUSTOM_MODEL,
  CUSTOM_MODEL_COMMENT,
  CUSTOM_MODEL_CONFIG,
  requiredModules,
  storeHandlerText,
} from '../../../tools/models/store-custom.js';
import { writeModelConfig } from '../../../tools/models/model-config.js';
import { ForkedWorker, modelConfig } from '../worker/forked-worker.js';

/** examples/custom-metrics/metrics.yaml, from dist/test/backend/handlers. */
const EXAMPLE_YAML = path.resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  '..',
  'examples',
  'custom-metrics',
  'metrics.yaml',
);

describe('custom demo model (tools/models/custom/handler.ts, copied as handler.mjs)', () => {
  let tmp: string;
  let dir: string;
  let worker: ForkedWorker | null = null;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-custom-'));
    dir = path.join(tmp, 'custom');
    fs.mkdirSync(dir);
    await CUSTOM_MODEL.write(dir);
  });

  afterEach(async () => {
    await worker?.kill();
    worker = null;
  });

  after(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('should write handler.mjs importing only Node built-ins, without a source-map comment', () => {
    const text = fs.readFileSync(path.join(dir, 'handler.mjs'), 'utf8');
    expect(requiredModules(text)).to.deep.equal([]);
    expect(text).to.not.include('sourceMappingURL');
    expect(text.split('\n')[0]).to.equal(
      '// Generated from tools/models/custom/handler.ts by tools/models/store-custom.ts; edit the source.',
    );
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['handler.mjs', 'model-config.yaml', 'model.onnx']);
  });

  it('should refuse to store a handler that imports a package, in any import form', () => {
    expect(() => storeHandlerText('import * as ort from "onnxruntime-node";\nimport fs from "node:fs";\n')).to.throw(
      'custom handler must be self-contained, but it imports onnxruntime-node; get it from context instead',
    );
    expect(() =>
      storeHandlerText("import 'side-effect';\nconst x = await import('lodash');\nconst y = require('yaml');\n"),
    ).to.throw(
      'custom handler must be self-contained, but it imports side-effect, lodash, yaml; get it from context instead',
    );
    expect(storeHandlerText('const fs = require("fs");\n//# sourceMappingURL=handler.js.map\n')).to.equal(
      '// Generated from tools/models/custom/handler.ts by tools/models/store-custom.ts; edit the source.\nconst fs = require("fs");\n',
    );
  });

  it('should use the very same network as mlp (same writer, same seed)', async () => {
    const mlpDir = path.join(tmp, 'mlp');
    fs.mkdirSync(mlpDir);
    await MLP_MODEL.write(mlpDir);
    expect(
      fs.readFileSync(path.join(dir, 'model.onnx')).equals(fs.readFileSync(path.join(mlpDir, 'model.onnx'))),
    ).to.equal(true);
  });

  it('should answer the batch and record every custom metric of the example with the right dims and ids', async () => {
    const loaded = loadMetricsConfig(EXAMPLE_YAML);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const w = new ForkedWorker();
    worker = w;
    w.init(modelConfig('custom', dir, 'handler.mjs'), loaded.config);
    await w.waitType('tsserve.ready');
    const body = Array.from({ length: 784 }, (_, i) => (i % 10) / 10);
    w.send({
      type: 'tsserve.batch',
      batchId: 1,
      requests: [
        { requestId: 'a', body },
        { requestId: 'b', body: body.slice().reverse() },
        { requestId: 'c', body: [1] },
      ],
    });
    const result = await w.waitType<ResultMessage>('tsserve.result');
    expect(result.responses[2]).to.deep.equal({
      ok: false,
      status: 400,
      message: 'expected a JSON array of 784 numbers',
    });
    for (const r of result.responses.slice(0, 2)) {
      const b = (r as { ok: true; body: { class: number; probabilities: number[] } }).body;
      expect(b.probabilities).to.have.length(10);
      expect(b.probabilities.reduce((x, y) => x + y, 0)).to.be.closeTo(1, 1e-5);
      expect(b.class).to.equal(b.probabilities.indexOf(Math.max(...b.probabilities)));
    }
    await w.waitFor(() => w.points.some((p) => p.metric === 'PredictionTime'));
    expect(w.stderr.join('')).to.equal('');
    expect(w.messages.filter((m) => (m as { type?: unknown }).type === 'tsserve.log')).to.deep.equal([]); // no drop warnings: every metric fits its declaration
    expect(w.points.map((p) => [p.metric, p.dims.join('|'), p.requestId])).to.deep.equal([
      ['InitializeCallCount', 'custom|Model', null],
      ['InferenceRequestCount', '', 'a,b,c'],
      ['PreprocessCallCount', 'custom', 'a,b,c'],
      ['RequestBatchSize', 'custom', 'a,b,c'],
      ['SizeOfImage', 'custom|Model', 'a'],
      ['SizeOfImage', 'custom|Model', 'b'],
      ['HandlerMethodTime', 'preprocess|custom|Model', 'a,b,c'],
      ['HandlerMethodTime', 'inference|custom|Model', 'a,b,c'],
      ['ExamplePercentMetric', 'custom|Model', 'a'],
      ['ExamplePercentMetric', 'custom|Model', 'b'],
      ['PostprocessCallCount', 'custom|Model', 'a,b,c'],
      ['HandlerMethodTime', 'postprocess|custom|Model', 'a,b,c'],
      ['HandlerTime', 'custom|Model', 'a,b,c'],
      ['PredictionTime', 'custom|Model', 'a,b,c'],
    ]);
    const value = (metric: string): number[] => w.points.filter((p) => p.metric === metric).map((p) => p.value);
    expect(value('InitializeCallCount')).to.deep.equal([1]);
    expect(value('InferenceRequestCount')).to.deep.equal([3]);
    expect(value('PreprocessCallCount')).to.deep.equal([1]);
    expect(value('RequestBatchSize')).to.deep.equal([3]);
    expect(value('SizeOfImage')).to.deep.equal([3.0625, 3.0625]);
    expect(value('PostprocessCallCount')).to.deep.equal([1]);
    const top = result.responses.slice(0, 2).map((r) => {
      const b = (r as { ok: true; body: { probabilities: number[] } }).body;
      return 100 * Math.max(...b.probabilities);
    });
    expect(value('ExamplePercentMetric')).to.deep.equal(top);
  });
});

describe('examples/custom-metrics/model-config.yaml', () => {
  it('should be exactly what the store writes for the custom model', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-custom-cfg-'));
    try {
      writeModelConfig(tmp, CUSTOM_MODEL_CONFIG, CUSTOM_MODEL_COMMENT);
      const example = path.resolve(
        import.meta.dirname,
        '..',
        '..',
        '..',
        '..',
        'examples',
        'custom-metrics',
        'model-config.yaml',
      );
      expect(fs.readFileSync(example, 'utf8')).to.equal(fs.readFileSync(path.join(tmp, 'model-config.yaml'), 'utf8'));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
