/**
 * The schemas the three OpenAPI documents share: the error bodies of each protocol (TorchServe's
 * `{code, type, message}`, OpenAI's `{error: {...}}`, the Open Inference Protocol's `{error}`),
 * the common error answers, and the OpenAI request bodies, whose properties are the very field
 * sets the routes accept (frontend/openai/allowed-fields.ts): a field added there is documented.
 */
import { CHAT_FIELDS, COMPLETION_FIELDS, EMBEDDINGS_FIELDS, SPEECH_FIELDS } from '../openai/allowed-fields.js';
import type { Answer, Schema } from '../http/openapi/openapi-builder.js';
import { json, ref } from '../http/openapi/openapi-builder.js';
import { DATATYPES } from '../http/oip/datatypes.js';

/** What an OpenAI request field holds, where it is more than "any JSON". */
const FIELD_SCHEMAS: Readonly<Record<string, Schema>> = {
  model: { type: 'string', description: 'a served model name (GET /v1/models)' },
  prompt: {
    description: 'text, token ids, or a list of either (one choice set each)',
    oneOf: [
      { type: 'string' },
      { type: 'array', items: { type: 'integer' } },
      { type: 'array', items: { type: 'string' } },
      { type: 'array', items: { type: 'array', items: { type: 'integer' } } },
    ],
  },
  messages: { type: 'array', items: { type: 'object', properties: { role: { type: 'string' }, content: {} } } },
  max_tokens: { type: 'integer', minimum: 1 },
  max_completion_tokens: { type: 'integer', minimum: 1 },
  temperature: { type: 'number', minimum: 0 },
  top_p: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
  top_k: { type: 'integer' },
  min_p: { type: 'number', minimum: 0, maximum: 1 },
  n: { type: 'integer', minimum: 1 },
  seed: { type: 'integer' },
  stop: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
  stop_token_ids: { type: 'array', items: { type: 'integer' } },
  ignore_eos: { type: 'boolean' },
  min_tokens: { type: 'integer', minimum: 0 },
  include_stop_str_in_output: { type: 'boolean' },
  presence_penalty: { type: 'number' },
  frequency_penalty: { type: 'number' },
  repetition_penalty: { type: 'number', exclusiveMinimum: 0 },
  logit_bias: { type: 'object', additionalProperties: { type: 'number' } },
  logprobs: { description: 'completions: an integer (top candidates); chat: a boolean' },
  top_logprobs: { type: 'integer', minimum: 0 },
  stream: { type: 'boolean' },
  stream_options: { type: 'object', properties: { include_usage: { type: 'boolean' } } },
  echo: { type: 'boolean' },
  add_generation_prompt: { type: 'boolean', description: 'the chat template cues the assistant turn (default true)' },
  chat_template_kwargs: { type: 'object', description: 'extra chat template variables (at most 64)' },
  user: { type: 'string' },
  input: { type: 'string' },
  voice: { type: 'string' },
  response_format: { type: 'string', enum: ['wav', 'pcm'] },
};

/** A request body schema whose properties are `fields` (anything else is refused with a 400). */
export function fieldsSchema(fields: ReadonlySet<string>, required: readonly string[]): Schema {
  const properties: Record<string, Schema> = {};
  for (const f of [...fields].sort()) properties[f] = FIELD_SCHEMAS[f] ?? {};
  return { type: 'object', properties, required, additionalProperties: false };
}

/** The components every document carries. */
export const COMPONENTS = {
  schemas: {
    Error: {
      type: 'object',
      description: "TorchServe's error body",
      properties: { code: { type: 'integer' }, type: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'type', 'message'],
    },
    OpenAIError: {
      type: 'object',
      description: "OpenAI's error body",
      properties: {
        error: {
          type: 'object',
          properties: {
            message: { type: 'string' },
            type: { type: 'string' },
            param: { type: ['string', 'null'] },
            code: { type: ['string', 'integer', 'null'] },
          },
          required: ['message', 'type'],
        },
      },
      required: ['error'],
    },
    OipError: {
      type: 'object',
      description: "The Open Inference Protocol's error body",
      properties: { error: { type: 'string' } },
      required: ['error'],
    },
    CompletionRequest: fieldsSchema(COMPLETION_FIELDS, ['model', 'prompt']),
    ChatCompletionRequest: fieldsSchema(CHAT_FIELDS, ['model', 'messages']),
    SpeechRequest: fieldsSchema(SPEECH_FIELDS, ['model', 'input']),
    EmbeddingsRequest: fieldsSchema(EMBEDDINGS_FIELDS, ['model', 'input']),
    OipTensor: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        shape: { type: 'array', items: { type: 'integer', minimum: 0 } },
        datatype: { type: 'string', enum: [...DATATYPES] },
        data: { type: 'array' },
        parameters: { type: 'object' },
      },
      required: ['name', 'shape', 'datatype'],
    },
    ModelDescription: {
      type: 'object',
      description: "TorchServe's describe-model fields",
      properties: {
        modelName: { type: 'string' },
        modelVersion: { type: 'string' },
        modelUrl: { type: 'string' },
        handler: { type: 'string' },
        kind: { type: 'string' },
        minWorkers: { type: 'integer' },
        maxWorkers: { type: 'integer' },
        batchSize: { type: 'integer' },
        maxBatchDelay: { type: 'integer' },
        responseTimeout: { type: 'integer' },
        loadedAtStartup: { type: 'boolean' },
        workers: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              pid: { type: ['integer', 'null'] },
              status: { type: 'string' },
              startTime: { type: 'string' },
            },
          },
        },
        jobQueueStatus: {
          type: 'object',
          properties: { remainingCapacity: { type: 'integer' }, pendingRequests: { type: 'integer' } },
        },
        lastWorkerError: { type: 'string' },
        stages: {
          type: 'array',
          description: "a pipeline's stages: each stage's model and its replicas' workers",
          items: {
            type: 'object',
            properties: {
              stage: { type: 'string' },
              model: { type: 'string' },
              replicas: { type: 'integer' },
              workers: { type: 'array', items: { type: 'object' } },
            },
          },
        },
      },
    },
    StatusMessage: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] },
  },
  securitySchemes: {
    token: {
      type: 'http',
      scheme: 'bearer',
      description: 'with --enable-token-auth: the inference or management key of <log-dir>/key_file.json',
    },
  },
} as const;

/** The TorchServe-style errors every route of a port can answer. */
export function torchserveErrors(codes: readonly number[]): Record<string, Answer> {
  const text: Readonly<Record<number, string>> = {
    400: 'a bad request: the message names what is wrong',
    401: 'token auth is on and the key is missing or wrong',
    404: 'no such model or version',
    405: 'another method is allowed on this path (Allow says which)',
    408: 'the body did not arrive within --request-timeout',
    409: 'the model already exists, or is being changed',
    413: 'the body is over --max-request-size',
    415: 'an unsupported Content-Type or Content-Encoding',
    500: 'the model failed on this request',
    503: 'the model has no worker ready, its queue is full, or the server is draining (Retry-After)',
    504: "the request did not finish within the model's responseTimeout",
  };
  return Object.fromEntries(codes.map((c) => [String(c), json(text[c] ?? 'an error', ref('Error'))]));
}

/** OpenAI-shaped errors. */
export function openaiErrors(codes: readonly number[]): Record<string, Answer> {
  const text: Readonly<Record<number, string>> = {
    400: 'a bad request (an unsupported field, a value out of range, a template error)',
    401: 'token auth is on and the key is missing or wrong',
    404: 'no such model',
    413: 'the body is over --max-request-size',
    503: 'the engine is full or the server is draining',
  };
  return Object.fromEntries(codes.map((c) => [String(c), json(text[c] ?? 'an error', ref('OpenAIError'))]));
}
