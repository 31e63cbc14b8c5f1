/**
 * bench:oip — the Open Inference Protocol codec's cost per 1-row mlp request: decoding a JSON
 * infer body of 784 FP32 values (and, for scale, the bare `JSON.parse` every /predictions body
 * also pays), encoding a 10-value JSON answer (against the bare `JSON.stringify` of
 * /predictions), and encoding it binary. Median of several runs after a warm-up; prints one
 * JSON line per figure, in the benchmarks' shape.
 */
import { performance } from 'node:perf_hooks';
import { decodeInferRequest, encodeInferResponse } from '../../frontend/http/oip/tensor-codec.js';
import { smoke } from './smoke.js';

const ITERATIONS = smoke(20_000, 100);
const RUNS = smoke(5, 1);

const body = Buffer.from(
  JSON.stringify({
    inputs: [
      {
        name: 'input',
        shape: [1, 784],
        datatype: 'FP32',
        data: Array.from({ length: 784 }, (_v, i) => (i % 100) / 100),
      },
    ],
  }),
);
const out = Float32Array.from({ length: 10 }, (_v, i) => i / 10);

/** Median µs per call of `fn`. */
function time(fn: () => unknown): number {
  for (let i = 0; i < ITERATIONS / 10; i++) fn();
  const runs: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < ITERATIONS; i++) fn();
    runs.push(((performance.now() - t0) / ITERATIONS) * 1000);
  }
  runs.sort((a, b) => a - b);
  return Math.round((runs[Math.floor(RUNS / 2)] ?? 0) * 10) / 10;
}

const tensor = (binary: boolean) => ({
  model_name: 'mlp',
  outputs: [{ name: 'probabilities', shape: [1, 10], datatype: 'FP32' as const, data: out, binary }],
});
const row = Array.from(out);
const line = (bench: string, ours: number, baseline: number): string =>
  JSON.stringify({ bench, ours, baseline, unit: 'us', ratio: Math.round((ours / baseline) * 100) / 100 });
// Baselines: what /predictions pays for the same body and answer (JSON.parse, JSON.stringify).
console.log(
  line(
    'oip_decode_vs_json_parse',
    time(() => decodeInferRequest(body)),
    time(() => JSON.parse(body.toString('utf8')) as unknown),
  ),
);
console.log(
  line(
    'oip_encode_vs_json_stringify',
    time(() => encodeInferResponse(tensor(false))),
    time(() => Buffer.from(JSON.stringify(row))),
  ),
);
console.log(
  line(
    'oip_encode_binary_vs_json',
    time(() => encodeInferResponse(tensor(true))),
    time(() => encodeInferResponse(tensor(false))),
  ),
);
