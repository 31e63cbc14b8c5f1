/**
 * The embeddings kind: `handler: embedding` models become EmbeddingModels and `POST
 * /v1/embeddings` mounts on the inference listener; `GET /v1/models` lists them through their
 * `openaiListing`.
 */
import type { Router } from 'express';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { ModelKind, ModelKindContext } from '../models/model-kinds.js';
import type { ServedModel } from '../models/served-model.js';
import { embeddingsRouter } from '../openai/embeddings-route.js';
import { EmbeddingModel } from '../embeddings/embedding-model.js';

/** The ModelKind for `handler: embedding`. */
export const EMBEDDING_KIND: ModelKind = {
  handlers: ['embedding'],
  create(config: ModelConfig, ctx: ModelKindContext, modelUrl: string, loadedAtStartup: boolean): ServedModel {
    return new EmbeddingModel(config, ctx, modelUrl, loadedAtStartup);
  },
  routes(ctx: ModelKindContext, lookup: (name: string) => ServedModel | undefined): Router {
    return embeddingsRouter({
      lookup: (name) => {
        const m = lookup(name);
        return m instanceof EmbeddingModel ? m : undefined;
      },
      exists: (name) => lookup(name) !== undefined,
      ...(ctx.bodyLimits !== undefined ? { bodyLimits: ctx.bodyLimits } : {}),
    });
  },
};
