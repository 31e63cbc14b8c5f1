/**
 * A small tensor model with several named inputs of the types the built-in `onnx` handler
 * feeds beyond float32, and two outputs, for its tests and docs: `ids` int64 [batch, seq],
 * `mask` bool [batch, seq], `scale` float16 [batch, 4] →
 * `kept` int64 [batch, seq] = ids where mask, else 0; `scaled` float32 [batch, 4] = scale × 2.
 * Exact integer and float16 arithmetic: every answer is known without running it. Beside it, a
 * model of a fixed first axis (writeFixedShapeModel), which the handler does not batch.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GraphBuilder } from './onnx-builder.js';

/** Writes `model.onnx` and its `model-config.yaml` (`extra` appended) into `dir`. */
export function writeMultiInputModel(dir: string, extra: readonly string[] = []): void {
  fs.mkdirSync(dir, { recursive: true });
  const g = new GraphBuilder('multi_input');
  const ids = g.input('ids', 'int64', ['batch', 'seq']);
  const mask = g.input('mask', 'bool', ['batch', 'seq']);
  const scale = g.input('scale', 'float16', ['batch', 4]);
  const keep = g.op('Cast', [mask], { to: { i: 7 } });
  g.output('kept', 'int64', ['batch', 'seq'], g.op('Mul', [ids, keep]));
  const wide = g.op('Cast', [scale], { to: { i: 1 } });
  g.output('scaled', 'float32', ['batch', 4], g.op('Mul', [wide, g.constF32(2)]));
  g.write(path.join(dir, 'model.onnx'), 'multi-input tensor model (tsserve tests)');
  fs.writeFileSync(
    path.join(dir, 'model-config.yaml'),
    ['handler: onnx', 'model: model.onnx', ...extra, ''].join('\n'),
  );
}

/**
 * A model whose input's first axis is fixed (x float32 [2, 3] → y = x × 2, float32 [2, 3]):
 * not batched, each request runs alone on its whole tensor. Writes it and its model-config into `dir`.
 */
export function writeFixedShapeModel(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const g = new GraphBuilder('fixed_shape');
  const x = g.input('x', 'float32', [2, 3]);
  g.output('y', 'float32', [2, 3], g.op('Mul', [x, g.constF32(2)]));
  g.write(path.join(dir, 'model.onnx'), 'fixed-shape tensor model (tsserve tests)');
  fs.writeFileSync(
    path.join(dir, 'model-config.yaml'),
    ['handler: onnx', 'model: model.onnx', 'batchSize: 4', ''].join('\n'),
  );
}
