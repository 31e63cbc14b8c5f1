/**
 * From an image's header to its resize plan: TorchServe's resize + center crop, a stretch, or
 * the `pad` fit (PaddleOCR's resize_norm_img), which keeps the aspect ratio at the input height
 * and takes ceil(height × ratio) columns up to the input width (the normalization,
 * schema/image/image-tensor.ts, leaves zeros to the right).
 */
import type { ImageClassifierOptions } from '../../schema/image/classifier-options.js';
import type { ImageHeader, ResizePlan } from './sharp-image.js';

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
