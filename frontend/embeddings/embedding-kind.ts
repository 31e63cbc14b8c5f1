/**
 * Registers the embeddings frontend: `handler: embedding` models become EmbeddingModels and
 * `POST /v1/embeddings` mounts on the inference listener; `GET /v1/models` lists them through
 * their `openaiListing`.
 */
import type { Router } from 'express';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { ModelKind, ModelKindContext } from '../server/model-kinds.js';
import { registerModelKind } from '../server/model-kinds.js';
import type { ServedModel } from '../server/served-model.js';
import { embeddingsRouter } from '../openai/embeddings-route.js';
import { EmbeddingModel } from './embedding-model.js';

/** The ModelKind for `handler: embedding`. */
export const EMBEDDING_KIND: ModelKind = {
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

/** Registers the embeddings frontend for `handler: embedding` (call before startServer). */
export function registerEmbeddingFrontend(): void {
  registerModelKind('embedding', EMBEDDING_KIND);
}
