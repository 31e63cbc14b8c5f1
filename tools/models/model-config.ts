/**
 * Writes a model-config.yaml (TorchServe-like camelCase keys) deterministically: fixed key
 * order, a header comment, js-yaml for the values.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump } from 'js-yaml';

/** The keys the frontend reads from model-config.yaml (engine settings for `generate` only). */
export interface ModelConfigFile {
  readonly handler: string;
  readonly model: string;
  readonly batchSize: number;
  /** ms */
  readonly maxBatchDelay: number;
  readonly minWorkers: number;
  readonly maxWorkers: number;
  /** s */
  readonly responseTimeout: number;
  readonly threads: number;
  readonly engine?: Readonly<Record<string, unknown>>;
  readonly handlerOptions?: Readonly<Record<string, unknown>>;
  readonly pipeline?: Readonly<Record<string, unknown>>;
}

/** Renders a model-config.yaml with `comment` as a header (one `#` line per line). */
export function renderModelConfig(cfg: ModelConfigFile, comment: string): string {
  const header = comment
    .split('\n')
    .map((l) => `# ${l}`.trimEnd())
    .join('\n');
  return `${header}\n${dump(cfg, { lineWidth: 120, noRefs: true, sortKeys: false })}`;
}

/** Writes `dir/model-config.yaml`. */
export function writeModelConfig(dir: string, cfg: ModelConfigFile, comment: string): void {
  writeFileSync(join(dir, 'model-config.yaml'), renderModelConfig(cfg, comment));
}
