import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadModelConfig } from '../../../frontend/store/model-config.js';
import { parseTensorSettings } from '../../../frontend/store/tensor-settings.js';
import { writeMultiInputModel } from '../../../tools/models/multi-input.js';

describe('model-config tensors: block', () => {
  it('should read pad rules and the batch byte bound', () => {
    const problems: string[] = [];
    expect(
      parseTensorSettings({ pad: { x: { axis: 3 }, y: { axis: 1, value: -1 } }, maxBatchBytes: 4096 }, problems),
    ).to.deep.equal({
      pad: { x: { axis: 3, value: 0 }, y: { axis: 1, value: -1 } },
      maxBatchBytes: 4096,
    });
    expect(problems).to.deep.equal([]);
  });

  it('should name every problem by its key', () => {
    const problems: string[] = [];
    parseTensorSettings(
      {
        pad: { x: { axis: 0 }, y: { axis: 2, value: 'z' }, z: 3, w: { axis: 1, side: 'left' } },
        maxBatchBytes: 0,
        padding: {},
      },
      problems,
    );
    expect(problems).to.deep.equal([
      'tensors.padding: unknown key (pad, maxBatchBytes)',
      'tensors.maxBatchBytes: must be an integer from 1 to 1073741824 (got 0)',
      'tensors.pad.x.axis: must be an integer from 1 to 64 (axis 0 is the batch axis; got 0)',
      'tensors.pad.y.value: must be a finite number (got "z")',
      'tensors.pad.z: must be a mapping { axis, value }',
      'tensors.pad.w: unknown key (axis, value)',
    ]);
    const list: string[] = [];
    expect(parseTensorSettings([1], list)).to.equal(undefined);
    expect(list).to.deep.equal(['tensors: must be a mapping (pad, maxBatchBytes)']);
  });
});

describe('model-config tensors.pad against the graph', () => {
  it('should name a pad rule the graph cannot follow at its line and column, when the model is registered', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-pad-config-'));
    try {
      writeMultiInputModel(dir, [
        'tensors:',
        '  pad:',
        '    ids: { axis: 1, value: 0 }',
        '    scale: { axis: 1, value: 0 }',
        '    pixels: { axis: 1 }',
      ]);
      const r = loadModelConfig('multi', dir);
      const file = path.join(dir, 'model-config.yaml');
      expect(r.ok ? [] : r.problems).to.deep.equal([
        `${file}:6:20: tensors.pad.scale.axis: axis 1 of 'scale' [-1,4] is not a dynamic axis (-1)`,
        `${file}:7:13: tensors.pad.pixels: the model has no input 'pixels' (it takes ids, mask, scale)`,
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
