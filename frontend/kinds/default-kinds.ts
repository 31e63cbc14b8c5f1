/**
 * The model kinds `tsserve start` serves beyond the built-in batched one, as an explicit list:
 * what used to be registered into a module-global map before the server started.
 */
import type { ModelKind } from '../models/model-kinds.js';
import { GenerationKind } from './generation-kind.js';
import type { GenerationFrontendOptions } from './generation-kind.js';
import { PipelineKind, VOCODER_ALONE } from './pipeline-kind.js';
import type { PipelineFrontendOptions } from './pipeline-kind.js';
import { EMBEDDING_KIND } from './embedding-kind.js';

/** The options of the default kinds (from `--disable-log-stats`, `--log-stats-interval`, the log level). */
export interface DefaultKindsOptions {
  readonly generation?: GenerationFrontendOptions;
  readonly pipeline?: PipelineFrontendOptions;
}

/** `handler: pipeline` (with `vocoder` refused alone), `handler: generate` and `handler: embedding`, in the order their routes mount. */
export function defaultKinds(opts: DefaultKindsOptions = {}): readonly ModelKind[] {
  return [new PipelineKind(opts.pipeline), VOCODER_ALONE, new GenerationKind(opts.generation), EMBEDDING_KIND];
}
