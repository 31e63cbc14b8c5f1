/** A registered model as the front processes see it (config, description, vocabulary size, a pipeline's audio). */
import { GenerationModel } from '../generation/generation-model.js';
import { PipelineModel } from '../pipeline/pipeline-model.js';
import type { ServedModel } from '../models/served-model.js';
import type { ModelSnapshot } from './messages.js';

/** The snapshot of `m` sent to the fronts. */
export function snapshotOf(m: ServedModel): ModelSnapshot {
  const vocab = m instanceof GenerationModel ? m.vocabSize : undefined;
  const speech =
    m instanceof PipelineModel
      ? {
          sampleRate: m.sampleRate,
          thinkerDir: m.thinker.config.dir,
          ...(m.thinker.config.engine !== undefined ? { thinkerEngine: m.thinker.config.engine } : {}),
        }
      : undefined;
  return {
    kind: m.kind,
    config: m.config,
    description: m.describe(),
    ...(vocab !== undefined ? { vocabSize: vocab } : {}),
    ...(speech !== undefined ? { speech } : {}),
  };
}
