/**
 * bench:body — the steps of the request path for one `mlp` body (784 numbers) and one batch of
 * 32, measured in this process: decoding (our float32 decoder vs JSON.parse, with and without
 * the bounds scan) and the batch's trip through V8's serializer (32 JS arrays vs one
 * Float32Array), as the worker channel does it. Prints one JSON line per figure (µs per op).
 */
import * as v8 from 'v8';
import { jsonBoundsProblem } from '../../frontend/http/json-bounds.js';
import { decodeJsonTensor } from '../../frontend/http/json-tensor.js';
import { smoke } from './smoke.js';

const WIDTH = 784;
const BATCH = 32;

/** µs per call of `fn`: the best of 5 rounds (this machine is shared; the minimum is the cost). */
function time(fn: () => unknown, n: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < smoke(5, 1); round++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e3 / n);
  }
  return best;
}

/** Both sides timed in alternation (ours, baseline, ours, ...), so drift hits both. */
function pair(ours: () => unknown, baseline: () => unknown, n: number): [number, number] {
  let a = Number.POSITIVE_INFINITY;
  let b = Number.POSITIVE_INFINITY;
  for (let k = 0; k < smoke(3, 1); k++) {
    a = Math.min(a, time(ours, n));
    b = Math.min(b, time(baseline, n));
  }
  return [a, b];
}

function line(bench: string, [ours, baseline]: [number, number]): void {
  process.stdout.write(
    JSON.stringify({
      bench,
      ours: Math.round(ours * 100) / 100,
      baseline: Math.round(baseline * 100) / 100,
      unit: 'µs',
      ratio: Math.round((ours / baseline) * 1000) / 1000,
    }) + '\n',
  );
}

const values = Array.from({ length: WIDTH }, (_v, i) => ((i * 31 + 17) % 100) / 100);
const body = Buffer.from(JSON.stringify(values));
const parse = (): unknown => JSON.parse(body.toString('utf8'));
line(
  'decode_vs_json_parse',
  pair(() => decodeJsonTensor(body, 262_144), parse, smoke(2000, 5)),
);
line(
  'bounds_and_parse_vs_parse',
  pair(
    () => {
      jsonBoundsProblem(body, 32, 262_144);
      parse();
    },
    parse,
    smoke(2000, 5),
  ),
);

const arrays = Array.from({ length: BATCH }, () => parse());
const ids = Array.from({ length: BATCH }, (_v, i) => `id-${i}`);
const oldMsg = { type: 'tsserve.batch', batchId: 1, requests: arrays.map((b, i) => ({ requestId: ids[i], body: b })) };
const newMsg = {
  type: 'tsserve.batch',
  batchId: 1,
  requests: ids.map((requestId) => ({ requestId, body: null })),
  tensors: {
    data: new Float32Array(BATCH * WIDTH),
    offsets: Uint32Array.from({ length: BATCH + 1 }, (_v, i) => i * WIDTH),
  },
};
line(
  'batch_serialize_f32_vs_arrays',
  pair(
    () => v8.serialize(newMsg),
    () => v8.serialize(oldMsg),
    smoke(200, 5),
  ),
);
const oldBytes = v8.serialize(oldMsg);
const newBytes = v8.serialize(newMsg);
line(
  'batch_deserialize_f32_vs_arrays',
  pair(
    () => v8.deserialize(newBytes),
    () => v8.deserialize(oldBytes),
    smoke(50, 5),
  ),
);
process.stderr.write(
  `# batch message: ${newBytes.length} bytes (one Float32Array) vs ${oldBytes.length} bytes (32 JS arrays)\n`,
);
