/**
 * The `tensors:` block of a built-in `onnx` model's model-config.yaml:
 *
 * ```yaml
 * tensors:
 *   pad:
 *     x: { axis: 3, value: 0 }   # requests whose x differs only along axis 3 share a batch, padded with 0
 *   maxBatchBytes: 16777216      # one batch's input bytes at most (default 64 MiB)
 * ```
 *
 * `axis` counts the graph's axes (0 is the batch axis, which is never padded). Which axes are
 * dynamic is the graph's business: each rule is checked against the graph when the model is
 * registered (`padProblems`: an input the graph lacks, or an axis that is not dynamic, is a
 * problem of the model-config, as an engine setting the graph cannot follow is), and again by the
 * worker at load.
 */
import type { PadRule, TensorSettings } from '../../schema/tensors.js';
import type { ModelIo } from './onnx-io.js';

/** The largest batch byte bound taken: the worker protocol counts a batch's bytes in 32 bits. */
export const MAX_BATCH_BYTES = 1024 * 1024 * 1024;

/** The block validated; each problem as `tensors.<key>: <what is wrong>` into `problems`. */
export function parseTensorSettings(v: unknown, problems: string[]): TensorSettings | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) {
    problems.push('tensors: must be a mapping (pad, maxBatchBytes)');
    return undefined;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (k !== 'pad' && k !== 'maxBatchBytes') problems.push(`tensors.${k}: unknown key (pad, maxBatchBytes)`);
  let maxBatchBytes: number | undefined;
  const m = o['maxBatchBytes'];
  if (m !== undefined && m !== null) {
    if (typeof m !== 'number' || !Number.isInteger(m) || m < 1 || m > MAX_BATCH_BYTES)
      problems.push(
        `tensors.maxBatchBytes: must be an integer from 1 to ${MAX_BATCH_BYTES} (got ${JSON.stringify(m)})`,
      );
    else maxBatchBytes = m;
  }
  const pad: Record<string, PadRule> = {};
  const p = o['pad'];
  if (p !== undefined && p !== null) {
    if (typeof p !== 'object' || Array.isArray(p)) problems.push('tensors.pad: must be a mapping of input names');
    else {
      for (const [name, rule] of Object.entries(p as Record<string, unknown>)) {
        const r = rule as { axis?: unknown; value?: unknown } | null;
        const axis = r?.axis;
        const value = r?.value ?? 0;
        if (typeof r !== 'object' || r === null || Array.isArray(r))
          problems.push(`tensors.pad.${name}: must be a mapping { axis, value }`);
        else if (Object.keys(r).some((k) => k !== 'axis' && k !== 'value'))
          problems.push(`tensors.pad.${name}: unknown key (axis, value)`);
        else if (typeof axis !== 'number' || !Number.isInteger(axis) || axis < 1 || axis > 64)
          problems.push(
            `tensors.pad.${name}.axis: must be an integer from 1 to 64 (axis 0 is the batch axis; got ${JSON.stringify(axis)})`,
          );
        else if (typeof value !== 'number' || !Number.isFinite(value))
          problems.push(`tensors.pad.${name}.value: must be a finite number (got ${JSON.stringify(value)})`);
        else pad[name] = Object.freeze({ axis, value });
      }
    }
  }
  return Object.freeze({
    ...(Object.keys(pad).length > 0 ? { pad: Object.freeze(pad) } : {}),
    ...(maxBatchBytes !== undefined ? { maxBatchBytes } : {}),
  });
}

/** The problems of pad rules the graph cannot follow, as `tensors.pad.<input>…: <what is wrong>`. */
export function padProblems(pad: Readonly<Record<string, PadRule>>, io: ModelIo): string[] {
  const problems: string[] = [];
  const batched = io.inputs.length > 0 && io.inputs.every((i) => i.shape[0] === -1);
  for (const [name, rule] of Object.entries(pad)) {
    const input = io.inputs.find((i) => i.name === name);
    if (input === undefined)
      problems.push(
        `tensors.pad.${name}: the model has no input '${name}' (it takes ${io.inputs.map((i) => i.name).join(', ')})`,
      );
    else if (!batched) problems.push(`tensors.pad.${name}: the model is not batched (an input's first axis is fixed)`);
    else if (rule.axis >= input.shape.length || input.shape[rule.axis] !== -1)
      problems.push(
        `tensors.pad.${name}.axis: axis ${rule.axis} of '${name}' [${input.shape.join(',')}] is not a dynamic axis (-1)`,
      );
  }
  return problems;
}
