/**
 * From an image's header to its resize plan, and from decoded pixels to the model's float32
 * input: values / 255, minus mean, over std, per channel, in NCHW or NHWC, RGB or BGR. The
 * `pad` fit (PaddleOCR's resize_norm_img) keeps the aspect ratio at the input height, takes
 * ceil(height × ratio) columns up to the input width and leaves zeros to the right.
 */
import type { ImageClassifierOptions } from '../../schema/image/classifier-options.js';
import { imageInputSize } from '../../schema/image/classifier-options.js';
import type { DecodedPixels, ImageHeader, ResizePlan } from './sharp-image.js';

/** The resize a source of `header`'s size needs for the model input `o` describes. */
export function resizePlan(o: ImageClassifierOptions, header: ImageHeader): ResizePlan {
  const { width: w, height: h } = header;
  if (o.fit === 'stretch') return { kind: 'fill', width: o.width, height: o.height };
  if (o.fit === 'pad') {
    const cols = Math.min(o.width, Math.max(1, Math.ceil(o.height * (w / h))));
    return { kind: 'fill', width: cols, height: o.height };
  }
  // torchvision's Resize(int): the shorter side to `resize`, the longer one scaled and truncated.
  const short = Math.min(w, h);
  const scaled = (side: number): number => Math.max(o.resize, Math.floor((o.resize * side) / short));
  const rw = w <= h ? o.resize : scaled(w);
  const rh = h < w ? o.resize : scaled(h);
  // CenterCrop's offsets: int(round((size - crop) / 2)), Python's round (half to even).
  const offset = (size: number, crop: number): number => {
    const x = (size - crop) / 2;
    return x - Math.floor(x) === 0.5 && Math.floor(x) % 2 === 0 ? Math.floor(x) : Math.round(x);
  };
  return {
    kind: 'crop',
    width: rw,
    height: rh,
    cropWidth: o.width,
    cropHeight: o.height,
    left: offset(rw, o.width),
    top: offset(rh, o.height),
  };
}

/** The normalized input tensor of one image (3 × height × width values, zeros where `pad` left columns). */
export function imageTensor(o: ImageClassifierOptions, px: DecodedPixels): Float32Array {
  const out = new Float32Array(imageInputSize(o));
  const { data, channels } = px;
  const cols = Math.min(px.width, o.width);
  const rows = Math.min(px.height, o.height);
  const plane = o.height * o.width;
  // Source channel of each output channel: grey repeats its one band; BGR reverses RGB.
  const src = (c: number): number => (channels < 3 ? 0 : o.channels === 'BGR' ? 2 - c : c);
  for (let c = 0; c < 3; c++) {
    const scale = 1 / (255 * o.std[c]!);
    const shift = o.mean[c]! / o.std[c]!;
    const s = src(c);
    for (let y = 0; y < rows; y++) {
      const rowIn = y * px.width * channels;
      for (let x = 0; x < cols; x++) {
        const v = data[rowIn + x * channels + s]! * scale - shift;
        if (o.layout === 'NCHW') out[c * plane + y * o.width + x] = v;
        else out[(y * o.width + x) * 3 + c] = v;
      }
    }
  }
  return out;
}
