/**
 * What the OpenAI routes need of a generation model: the served model itself, or (in a front
 * process of `--api-server-count`) a proxy of the primary's.
 */
import type { GenerationModel } from '../generation/generation-model.js';

/** A generation model as the OpenAI routes use it. */
export type GenerationTarget = Pick<GenerationModel, 'config' | 'vocabSize' | 'generate'>;
