import { expect } from 'chai';
import { resizePlan } from '../../../frontend/image/resize-plan.js';
import { imageTensor } from '../../../schema/image/image-tensor.js';
import { parseImageClassifierOptions } from '../../../schema/image/classifier-options.js';

describe('resizePlan and imageTensor (image to model input)', () => {
  it("should resize the shorter side to 256 and crop 224 in the middle, as torchvision's Resize + CenterCrop", () => {
    const o = parseImageClassifierOptions({});
    expect(resizePlan(o, { format: 'jpeg', width: 640, height: 480 })).to.deep.equal({
      kind: 'crop',
      width: 341,
      height: 256,
      cropWidth: 224,
      cropHeight: 224,
      left: 58, // round(58.5) half to even, as Python's
      top: 16,
    });
    expect(resizePlan(o, { format: 'jpeg', width: 300, height: 1000 })).to.deep.equal({
      kind: 'crop',
      width: 256,
      height: 853,
      cropWidth: 224,
      cropHeight: 224,
      left: 16,
      top: 314, // round(314.5) half to even
    });
  });

  it("should keep the aspect at the input height and cap the width for fit pad (PaddleOCR's resize_norm_img)", () => {
    const o = parseImageClassifierOptions({ size: [48, 192], fit: 'pad' });
    expect(resizePlan(o, { format: 'png', width: 100, height: 50 })).to.deep.equal({
      kind: 'fill',
      width: 96,
      height: 48,
    });
    expect(resizePlan(o, { format: 'png', width: 1000, height: 50 })).to.deep.equal({
      kind: 'fill',
      width: 192,
      height: 48,
    });
  });

  it('should normalize per channel into NCHW or NHWC, reverse to BGR, and leave zeros right of a padded image', () => {
    // 2 columns of a 1x3 input: the third column stays 0 (pad).
    const o = parseImageClassifierOptions({ size: [1, 3], fit: 'pad', mean: [0, 0.5, 1], std: [1, 0.5, 0.25] });
    const px = { data: Buffer.from([255, 0, 51, 0, 255, 102]), width: 2, height: 1, channels: 3 };
    const nchw = Array.from(imageTensor(o, px)).map((v) => Math.round(v * 1e5) / 1e5);
    expect(nchw).to.deep.equal([1, 0, 0, -1, 1, 0, -3.2, -2.4, 0]);
    const bgr = parseImageClassifierOptions({ size: [1, 2], layout: 'NHWC', channels: 'BGR', mean: 0, std: 1 });
    const v = Array.from(imageTensor(bgr, px)).map((x) => Math.round(x * 255));
    expect(v).to.deep.equal([51, 0, 255, 102, 255, 0]);
  });

  it("should repeat a grey image's one band into the three channels", () => {
    const o = parseImageClassifierOptions({ size: [1, 1], mean: 0, std: 1 });
    expect(Array.from(imageTensor(o, { data: Buffer.from([255]), width: 1, height: 1, channels: 1 }))).to.deep.equal([
      1, 1, 1,
    ]);
  });
});
