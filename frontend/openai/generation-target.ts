/**
 * What the OpenAI routes need of a generation model: the served model itself, or (in a front
 * process of `--api-server-count`) a proxy of the primary's.
 */
import type { GenerationModel } from '../generation/generation-model.js';

/**
 * A generation model as the OpenAI routes use it. `admits` (the served model's) refuses a
 * several-prompt request as a whole up front; a front's proxy has no view of the primary's
 * queues, so there a refused prompt aborts the ones already admitted.
 */
export type GenerationTarget = Pick<GenerationModel, 'config' | 'vocabSize' | 'generate'> &
  Partial<Pick<GenerationModel, 'admits' | 'vocab' | 'vocabLoaded' | 'sleeper'>>;
