/**
 * The inference API's OpenAPI 3.1 document (the inference port): health, TorchServe's
 * predictions, the Open Inference Protocol, OpenAI's routes and vLLM's utilities, and the
 * description itself. `test/frontend/http/openapi.test.ts` walks the port's route table and this
 * document together, so neither can drift from the other.
 */
import { COMPONENTS, openaiErrors, torchserveErrors } from './components.js';
import type { OperationSpec } from '../http/openapi/openapi-builder.js';
import { json, pathsOf, ref } from '../http/openapi/openapi-builder.js';

type Op = readonly ['get' | 'post' | 'put' | 'delete', OperationSpec];

const OIP_ERRORS = {
  '400': json('a bad tensor: the message names the input, its expected shape and datatype', ref('OipError')),
  '404': json('no such model or version', ref('OipError')),
  '503': json('no worker ready, a full queue, or draining', ref('OipError')),
};

/** The meta routes every port has: the description itself, its page, and OPTIONS /. */
export function describeOps(tag: string): Op[] {
  return [
    [
      'get',
      {
        express: '/openapi.json',
        summary: "This port's OpenAPI 3.1 description",
        tags: [tag],
        responses: { '200': json('the document', { type: 'object' }) },
      },
    ],
    [
      'get',
      {
        express: '/docs',
        summary: 'The description as a page (served from this server, nothing fetched elsewhere)',
        tags: [tag],
        responses: { '200': { description: 'HTML', content: { 'text/html': { type: 'string' } } } },
      },
    ],
  ];
}

const OPS: Op[] = [
  [
    'get',
    {
      express: '/ping',
      summary: "TorchServe's health check",
      tags: ['health'],
      responses: {
        '200': json('Healthy', ref('StatusMessage')),
        '500': json('Unhealthy: a model has fewer ready workers than its minimum', ref('StatusMessage')),
      },
    },
  ],
  [
    'get',
    {
      express: '/health',
      summary: "vLLM's health check: 200 with an empty body when every model is ready",
      tags: ['health'],
      responses: { '200': { description: 'healthy' }, '503': { description: 'a model is not ready' } },
    },
  ],
  [
    'post',
    {
      express: '/predictions/:model{/:version}',
      summary: "TorchServe's inference",
      description:
        "The body goes to the model's handler: a JSON tensor (nested arrays, or an object of named inputs), a binary body of the one input in its declared type (`application/octet-stream` with `X-Tensor-Shape`), an image for `image_classifier`, or what a custom handler reads. Batched with other requests up to the model's batchSize. Server-Timing tells the queue and handler time.",
      tags: ['predictions'],
      body: {
        content: {
          'application/json': {},
          'application/octet-stream': { type: 'string', format: 'binary' },
          'image/*': { type: 'string', format: 'binary' },
          'multipart/form-data': { type: 'object', properties: { data: { type: 'string', format: 'binary' } } },
        },
      },
      responses: {
        '200': { description: "the handler's answer for this request", content: { 'application/json': {} } },
        ...torchserveErrors([400, 401, 404, 408, 413, 415, 500, 503, 504]),
      },
    },
  ],
  [
    'put',
    {
      express: '/predictions/:model{/:version}',
      summary: 'The same as POST (TorchServe accepts both)',
      tags: ['predictions'],
      body: { content: { 'application/json': {}, 'application/octet-stream': { type: 'string', format: 'binary' } } },
      responses: {
        '200': { description: "the handler's answer", content: { 'application/json': {} } },
        ...torchserveErrors([400, 401, 404, 413, 415, 500, 503, 504]),
      },
    },
  ],
  [
    'get',
    {
      express: '/v2',
      summary: 'Open Inference Protocol: server metadata',
      tags: ['oip'],
      responses: {
        '200': json('name, version, extensions', {
          type: 'object',
          properties: { name: { type: 'string' }, version: { type: 'string' }, extensions: { type: 'array' } },
        }),
      },
    },
  ],
  [
    'get',
    {
      express: '/v2/health/live',
      summary: 'OIP: the server is live',
      tags: ['oip'],
      responses: { '200': { description: 'live' } },
    },
  ],
  [
    'get',
    {
      express: '/v2/health/ready',
      summary: 'OIP: every model is ready',
      tags: ['oip'],
      responses: { '200': { description: 'ready' }, '503': { description: 'not ready' } },
    },
  ],
  [
    'get',
    {
      express: '/v2/models/:model{/versions/:version}/ready',
      summary: 'OIP: the model is ready',
      tags: ['oip'],
      responses: { '200': { description: 'ready' }, ...OIP_ERRORS },
    },
  ],
  [
    'get',
    {
      express: '/v2/models/:model{/versions/:version}',
      summary: "OIP: the model's metadata (inputs and outputs with datatype and shape, -1 for a dynamic axis)",
      tags: ['oip'],
      responses: {
        '200': json('name, versions, platform, inputs, outputs', {
          type: 'object',
          properties: {
            name: { type: 'string' },
            versions: { type: 'array', items: { type: 'string' } },
            platform: { type: 'string' },
            inputs: { type: 'array', items: ref('OipTensor') },
            outputs: { type: 'array', items: ref('OipTensor') },
          },
        }),
        ...OIP_ERRORS,
      },
    },
  ],
  [
    'post',
    {
      express: '/v2/models/:model{/versions/:version}/infer',
      summary: 'OIP: inference, every datatype the graph declares',
      tags: ['oip'],
      body: {
        content: {
          'application/json': {
            type: 'object',
            properties: {
              id: { type: 'string' },
              inputs: { type: 'array', items: ref('OipTensor') },
              outputs: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
              parameters: { type: 'object' },
            },
            required: ['inputs'],
          },
          'application/octet-stream': { type: 'string', format: 'binary' },
        },
      },
      responses: {
        '200': json('model_name, id, outputs', {
          type: 'object',
          properties: {
            model_name: { type: 'string' },
            id: { type: 'string' },
            outputs: { type: 'array', items: ref('OipTensor') },
          },
        }),
        ...OIP_ERRORS,
      },
    },
  ],
  [
    'post',
    {
      express: '/v1/completions',
      summary: "OpenAI's completions (stream: true answers server-sent events)",
      tags: ['openai'],
      body: { content: { 'application/json': ref('CompletionRequest') } },
      responses: {
        '200': {
          description: 'a completion, or its chunks as text/event-stream',
          content: { 'application/json': { type: 'object' }, 'text/event-stream': { type: 'string' } },
        },
        ...openaiErrors([400, 401, 404, 413, 503]),
      },
    },
  ],
  [
    'post',
    {
      express: '/v1/chat/completions',
      summary: "OpenAI's chat completions (a pipeline model may answer audio too)",
      tags: ['openai'],
      body: { content: { 'application/json': ref('ChatCompletionRequest') } },
      responses: {
        '200': {
          description: 'a chat completion, or its chunks as text/event-stream',
          content: { 'application/json': { type: 'object' }, 'text/event-stream': { type: 'string' } },
        },
        ...openaiErrors([400, 401, 404, 413, 503]),
      },
    },
  ],
  [
    'get',
    {
      express: '/v1/models',
      summary: 'OpenAI: the models served on these routes',
      tags: ['openai'],
      responses: {
        '200': json('a list', { type: 'object', properties: { object: { const: 'list' }, data: { type: 'array' } } }),
      },
    },
  ],
  [
    'get',
    {
      express: '/v1/models/:model',
      summary: 'OpenAI: one model',
      tags: ['openai'],
      responses: { '200': json('the model', { type: 'object' }), ...openaiErrors([404]) },
    },
  ],
  [
    'post',
    {
      express: '/v1/audio/speech',
      summary: "OpenAI's text to speech, on a pipeline model that speaks",
      tags: ['openai'],
      body: { content: { 'application/json': ref('SpeechRequest') } },
      responses: {
        '200': {
          description: 'the audio',
          content: {
            'audio/wav': { type: 'string', format: 'binary' },
            'audio/pcm': { type: 'string', format: 'binary' },
          },
        },
        ...openaiErrors([400, 401, 404, 413, 503]),
      },
    },
  ],
  [
    'post',
    {
      express: '/v1/embeddings',
      summary: "OpenAI's embeddings, on a model with handler embedding (as vLLM serves pooling models)",
      tags: ['openai'],
      body: { content: { 'application/json': ref('EmbeddingsRequest') } },
      responses: {
        '200': json('the embeddings (float lists, or base64 of little-endian float32) and usage', { type: 'object' }),
        ...openaiErrors([400, 401, 404, 413, 503]),
      },
    },
  ],
  [
    'get',
    {
      express: '/version',
      summary: "vLLM's server version",
      tags: ['vllm'],
      responses: { '200': json('the version', { type: 'object', properties: { version: { type: 'string' } } }) },
    },
  ],
  [
    'post',
    {
      express: '/tokenize',
      summary: "vLLM's tokenize: a prompt or chat messages to the model's token ids",
      tags: ['vllm'],
      body: {
        content: {
          'application/json': {
            type: 'object',
            properties: {
              model: { type: 'string' },
              prompt: { type: 'string' },
              messages: { type: 'array' },
              add_special_tokens: { type: 'boolean' },
              return_token_strs: { type: 'boolean' },
              add_generation_prompt: { type: 'boolean' },
              chat_template_kwargs: { type: 'object' },
            },
            required: ['model'],
          },
        },
      },
      responses: {
        '200': json('count, max_model_len, tokens, token_strs', { type: 'object' }),
        ...openaiErrors([400, 404]),
      },
    },
  ],
  [
    'post',
    {
      express: '/detokenize',
      summary: "vLLM's detokenize: token ids to text",
      tags: ['vllm'],
      body: {
        content: {
          'application/json': {
            type: 'object',
            properties: { model: { type: 'string' }, tokens: { type: 'array', items: { type: 'integer' } } },
            required: ['model', 'tokens'],
          },
        },
      },
      responses: {
        '200': json('the text', { type: 'object', properties: { prompt: { type: 'string' } } }),
        ...openaiErrors([400, 404]),
      },
    },
  ],
  // vLLM's dev-mode endpoints: routed always, acting only with VLLM_SERVER_DEV_MODE=1 (404 otherwise).
  [
    'post',
    {
      express: '/sleep',
      summary: "vLLM's dev-mode sleep: every generation model's workers stop (weights and KV cache freed)",
      tags: ['vllm'],
      params: [
        {
          name: 'level',
          in: 'query',
          description: '1 or 2 (default 1); both stop the workers here: the weights have no other place to go',
          schema: { type: 'string', enum: ['1', '2'], default: '1' },
        },
      ],
      responses: { '200': { description: 'asleep (empty body)' }, ...openaiErrors([400, 404, 409]) },
    },
  ],
  [
    'post',
    {
      express: '/wake_up',
      summary: "vLLM's dev-mode wake-up: the workers start again and load the model",
      tags: ['vllm'],
      responses: { '200': { description: 'awake (empty body)' }, ...openaiErrors([404]) },
    },
  ],
  [
    'get',
    {
      express: '/is_sleeping',
      summary: "vLLM's dev-mode sleep state: true while every generation model sleeps",
      tags: ['vllm'],
      responses: {
        '200': json('the state', { type: 'object', properties: { is_sleeping: { type: 'boolean' } } }),
        ...openaiErrors([404]),
      },
    },
  ],
  ...describeOps('meta'),
];

/** The inference API's document. */
export function inferenceDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'tsserve inference API',
      version,
      description:
        "TorchServe's inference API with the Open Inference Protocol (KServe v2) and OpenAI's API, on the inference port. With --enable-token-auth every route but /ping takes the inference key.",
    },
    servers: [{ url: '/' }],
    security: [{}, { token: [] }],
    tags: ['health', 'predictions', 'oip', 'openai', 'vllm', 'meta'].map((name) => ({ name })),
    paths: pathsOf(OPS),
    components: COMPONENTS,
  };
}
