import { expect } from 'chai';
import { parseImageClassifierOptions } from '../../../schema/image/classifier-options.js';

describe('parseImageClassifierOptions (handlerOptions of handler image_classifier)', () => {
  it("should default to TorchServe's image_classifier: resize 256, crop 224, ImageNet mean/std, NCHW, softmax, top 5", () => {
    expect(parseImageClassifierOptions(undefined)).to.deep.equal({
      fit: 'resize_crop',
      resize: 256,
      height: 224,
      width: 224,
      mean: [0.485, 0.456, 0.406],
      std: [0.229, 0.224, 0.225],
      layout: 'NCHW',
      channels: 'RGB',
      softmax: true,
      topk: 5,
      labels: 'index_to_name.json',
      maxImageBytes: 16 * 1024 * 1024,
      maxPixels: 40_000_000,
      decodeTimeoutSec: 5,
    });
  });

  it('should take size [height, width] as a stretch, one mean and std for every channel', () => {
    const o = parseImageClassifierOptions({ size: [48, 192], mean: 0.5, std: 0.5, layout: 'NHWC' });
    expect([o.fit, o.height, o.width, o.mean, o.std, o.layout]).to.deep.equal([
      'stretch',
      48,
      192,
      [0.5, 0.5, 0.5],
      [0.5, 0.5, 0.5],
      'NHWC',
    ]);
  });

  it('should report every bad option in one list', () => {
    const problems: string[] = [];
    parseImageClassifierOptions(
      { crop: 300, std: [1, 0, 1], layout: 'CHW', softmax: 'yes', topk: 0, colour: 'x', maxPixels: -1 },
      problems,
    );
    expect(problems).to.deep.equal([
      'handlerOptions.colour: unknown option of handler image_classifier',
      'handlerOptions.resize: 256 is smaller than the crop 300x300',
      'handlerOptions.softmax: must be true or false (got "yes")',
      'handlerOptions.std: must be a positive number or a list of 3 (one per channel), got [1,0,1]',
      'handlerOptions.layout: must be one of NCHW, NHWC (got "CHW")',
      'handlerOptions.topk: must be an integer in 1..1000 (got 0)',
      'handlerOptions.maxPixels: must be an integer in 1..1000000000 (got -1)',
    ]);
  });
});
