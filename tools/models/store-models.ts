/**
 * The models `tsserve models generate` writes, in order. Add a model by appending its
 * StoreModel here (e.g. `custom` from ./store-custom).
 */
import {
  MLP_MODEL,
  TINY_EMBED_MODEL,
  TINY_LM_HF_MODEL,
  TINY_LM_MODEL,
  TINY_OMNI_MODEL,
  TINY_VOCODER_MODEL,
} from './demo-models.js';
import type { StoreModel } from './store-model.js';
import { CUSTOM_MODEL } from './store-custom.js';

/** Every model of the default demo store. */
export const STORE_MODELS: readonly StoreModel[] = [
  MLP_MODEL,
  CUSTOM_MODEL,
  TINY_LM_MODEL,
  TINY_LM_HF_MODEL,
  TINY_VOCODER_MODEL,
  TINY_OMNI_MODEL,
  TINY_EMBED_MODEL,
];
