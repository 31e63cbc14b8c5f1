/**
 * The `custom` demo model's handler: the same MLP as `mlp`, behind a user-style staged handler
 * that records custom metrics the way TorchServe's examples/custom_metrics does. It is compiled
 * and copied into the model store as `handler.mjs`, so it must stay self-contained: type imports
 * only (erased by tsc), no `require` of anything but Node built-ins; metrics and the ONNX
 * session come from `context`.
 */
import type { HandlerContext, HandlerRequest, HandlerSession } from '../../../backend/handlers/types.js';
// Written by `tsserve metrics types --metrics-config examples/custom-metrics/metrics.yaml`: a typo
// in a metric name, a missing dimension or another type than the yaml's fails the build.
import type { ModelMetrics } from '../../../examples/custom-metrics/metrics.js';

/** The context's metrics, typed by the example's metrics.yaml. */
function metricsOf(ctx: HandlerContext): ModelMetrics {
  return ctx.metrics;
}

/** Flattened 28×28 input, as the MLP takes. */
const WIDTH = 784;

let session: HandlerSession | null = null;

/** What preprocess hands to inference. */
interface Prepared {
  readonly input: Float32Array;
  /** Batch index of each stacked row. */
  readonly rows: number[];
  /** Per request: a request error, or null when it was stacked. */
  readonly errors: (Error | null)[];
}

interface Inferred {
  readonly prepared: Prepared;
  readonly probabilities: Float32Array;
}

/** Times one handler method into HandlerMethodTime{MethodName=...}. */
function timeMethod(ctx: HandlerContext, method: string, t0: number): void {
  metricsOf(ctx).addTime('HandlerMethodTime', performance.now() - t0, undefined, 'ms', { MethodName: method });
}

/** Loads the model; registers InferenceRequestCount (TorchServe's add_metric_to_cache: no emit). */
export async function initialize(ctx: HandlerContext): Promise<void> {
  metricsOf(ctx).addMetric('InferenceRequestCount', 'count', [], 'counter');
  metricsOf(ctx)
    .addMetric('InitializeCallCount', 'count', ['ModelName', 'Level'], 'counter')
    .addOrUpdate(1, { ModelName: ctx.modelName, Level: 'Model' });
  session = await ctx.createSession(ctx.manifest.modelFile);
}

/** Validates and stacks the bodies; records batch size, call count and each input's size. */
export function preprocess(requests: readonly HandlerRequest[], ctx: HandlerContext): Prepared {
  const t0 = performance.now();
  const m = metricsOf(ctx);
  m.getMetric('InferenceRequestCount', 'counter').addOrUpdate(requests.length);
  m.getMetric('PreprocessCallCount', 'counter').addOrUpdate(1, { ModelName: ctx.modelName });
  m.getMetric('RequestBatchSize', 'gauge').addOrUpdate(requests.length, { ModelName: ctx.modelName });

  const input = new Float32Array(requests.length * WIDTH);
  const rows: number[] = [];
  const errors: (Error | null)[] = [];
  requests.forEach((req, i) => {
    const body = req.body;
    if (
      !Array.isArray(body) ||
      body.length !== WIDTH ||
      !body.every((v) => typeof v === 'number' && Number.isFinite(v))
    ) {
      errors.push(ctx.requestError(`expected a JSON array of ${WIDTH} numbers`, 400));
      return;
    }
    input.set(body as number[], rows.length * WIDTH);
    rows.push(i);
    errors.push(null);
    // Per request, with its own id (TorchServe's add_size(..., idx)): the image as float32, in kB.
    m.addSize('SizeOfImage', (WIDTH * 4) / 1024, req.requestId, 'kB');
  });
  timeMethod(ctx, 'preprocess', t0);
  return { input: input.subarray(0, rows.length * WIDTH), rows, errors };
}

/** One run for the whole batch. */
export async function inference(prepared: Prepared, ctx: HandlerContext): Promise<Inferred> {
  const t0 = performance.now();
  if (session === null) throw new Error('custom handler used before initialize');
  let probabilities: Float32Array = new Float32Array(0);
  if (prepared.rows.length > 0) {
    const name = session.inputNames[0]!;
    const out = await session.run({
      [name]: { type: 'float32', data: prepared.input, dims: [prepared.rows.length, WIDTH] },
    });
    probabilities = out[session.outputNames[0]!]!.data as Float32Array;
  }
  timeMethod(ctx, 'inference', t0);
  return { prepared, probabilities };
}

/** One answer per request: `{class, probabilities}`; records the top-class confidence. */
export function postprocess(inferred: Inferred, ctx: HandlerContext): unknown[] {
  const t0 = performance.now();
  const { prepared, probabilities } = inferred;
  const classes = prepared.rows.length > 0 ? probabilities.length / prepared.rows.length : 0;
  const answers: unknown[] = prepared.errors.slice();
  prepared.rows.forEach((req, k) => {
    const p = Array.from(probabilities.subarray(k * classes, (k + 1) * classes));
    let best = 0;
    for (let c = 1; c < p.length; c++) if (p[c]! > p[best]!) best = c;
    answers[req] = { class: best, probabilities: p };
    metricsOf(ctx).addPercent('ExamplePercentMetric', 100 * p[best]!, ctx.requestIds[req], undefined, 'histogram');
  });
  // The yaml declares unit CallCount; the declared unit wins over the helper's `count`.
  metricsOf(ctx).addCounter('PostprocessCallCount', 1);
  timeMethod(ctx, 'postprocess', t0);
  return answers;
}
