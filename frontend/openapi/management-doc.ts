/**
 * The management API's OpenAPI 3.1 document (the management port): TorchServe's list, describe,
 * register, scale, set-default and unregister, and the status page. Walked together with the
 * port's route table by `test/frontend/http/openapi.test.ts`.
 */
import { COMPONENTS, torchserveErrors } from './components.js';
import { describeOps } from './inference-doc.js';
import type { OperationSpec } from '../http/openapi/openapi-builder.js';
import { json, pathsOf, queryParam, ref } from '../http/openapi/openapi-builder.js';

type Op = readonly ['get' | 'post' | 'put' | 'delete', OperationSpec];

const int = { type: 'integer', minimum: 0 };
const bool = { type: 'boolean' };

const OPS: Op[] = [
  [
    'get',
    {
      express: '/models',
      summary: 'The registered models, a page at a time (TorchServe)',
      tags: ['models'],
      params: [
        queryParam('limit', 'models per page (at most 100)', { type: 'integer', minimum: 1 }),
        queryParam('next_page_token', 'where the page starts', int),
      ],
      responses: {
        '200': json('models and nextPageToken', {
          type: 'object',
          properties: {
            models: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  modelName: { type: 'string' },
                  modelVersion: { type: 'string' },
                  modelUrl: { type: 'string' },
                },
              },
            },
            nextPageToken: { type: 'string' },
          },
        }),
        ...torchserveErrors([400, 401]),
      },
    },
  ],
  [
    'get',
    {
      express: '/models/:name{/:version}',
      summary: 'Describe a model (its workers, queue and settings); version `all` lists every version',
      tags: ['models'],
      params: [queryParam('customized', "TorchServe's describe_handle answer: refused (no handler hook here)", bool)],
      responses: {
        '200': json('one description a version', { type: 'array', items: ref('ModelDescription') }),
        ...torchserveErrors([400, 401, 404]),
      },
    },
  ],
  [
    'post',
    {
      express: '/models',
      summary: 'Register a model from a directory inside the model store (query parameters or a JSON body)',
      tags: ['models'],
      params: [
        queryParam('url', 'the model directory, relative to the store'),
        queryParam('model_name', 'the name to serve it under'),
        queryParam('batch_size', 'requests per batch', { type: 'integer', minimum: 1 }),
        queryParam('max_batch_delay', 'ms a batch waits to fill', int),
        queryParam('initial_workers', 'workers to start', int),
        queryParam('response_timeout', 's a request may take', { type: 'integer', minimum: 1 }),
        queryParam('synchronous', 'answer once the workers are up (default true)', bool),
      ],
      body: {
        required: false,
        content: { 'application/json': { type: 'object', description: 'the same parameters as fields' } },
      },
      responses: {
        '200': json('registered', ref('StatusMessage')),
        '202': json('registering (synchronous=false)', ref('StatusMessage')),
        ...torchserveErrors([400, 401, 409, 500]),
      },
    },
  ],
  [
    'put',
    {
      express: '/models/:name{/:version}',
      summary: "Scale a model's workers",
      tags: ['models'],
      params: [
        queryParam('min_worker', 'least workers', int),
        queryParam('max_worker', 'most workers', int),
        queryParam('synchronous', 'answer once scaled (default false)', bool),
        queryParam('timeout', "TorchServe's scale-down timeout: only -1 (wait for in-flight work)"),
      ],
      responses: {
        '200': json('scaled', ref('StatusMessage')),
        '202': json('scaling', ref('StatusMessage')),
        ...torchserveErrors([400, 401, 404, 500]),
      },
    },
  ],
  [
    'put',
    {
      express: '/models/:name/:version/set-default',
      summary: 'Make a version the default (a model here has one version)',
      tags: ['models'],
      responses: { '200': json('done', ref('StatusMessage')), ...torchserveErrors([401, 404]) },
    },
  ],
  [
    'delete',
    {
      express: '/models/:name{/:version}',
      summary: 'Unregister a model (its workers drain and stop)',
      tags: ['models'],
      responses: { '200': json('unregistered', ref('StatusMessage')), ...torchserveErrors([401, 404, 409]) },
    },
  ],
  [
    'get',
    {
      express: '/',
      summary: 'The status page (HTML; the same as /status)',
      tags: ['status'],
      responses: { '200': { description: 'HTML', content: { 'text/html': { type: 'string' } } } },
    },
  ],
  [
    'get',
    {
      express: '/status',
      summary: 'The status page (HTML)',
      tags: ['status'],
      responses: { '200': { description: 'HTML', content: { 'text/html': { type: 'string' } } } },
    },
  ],
  [
    'get',
    {
      express: '/status.json',
      summary: "The status page's data: the latest snapshot (at most 20 answers a second)",
      tags: ['status'],
      params: [queryParam('since', 'only chart points after this epoch second', int)],
      responses: {
        '200': json('the snapshot', { type: 'object' }),
        '400': json('a bad since', ref('Error')),
        '429': {
          description: 'over 20 answers a second',
          headers: { 'Retry-After': { description: 'seconds', schema: { type: 'integer' } } },
          content: { 'application/json': ref('Error') },
        },
      },
    },
  ],
  [
    'get',
    {
      express: '/status.js',
      summary: "The status page's script",
      tags: ['status'],
      responses: { '200': { description: 'JavaScript', content: { 'text/javascript': { type: 'string' } } } },
    },
  ],
  [
    'get',
    {
      express: '/status.css',
      summary: "The status page's stylesheet",
      tags: ['status'],
      responses: { '200': { description: 'CSS', content: { 'text/css': { type: 'string' } } } },
    },
  ],
  ...describeOps('meta'),
];

/** The management API's document. */
export function managementDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'tsserve management API',
      version,
      description:
        "TorchServe's management API and the status page, on the management port. Token auth is required when the port is not on loopback (the management key).",
    },
    servers: [{ url: '/' }],
    security: [{}, { token: [] }],
    tags: ['models', 'status', 'meta'].map((name) => ({ name })),
    paths: pathsOf(OPS),
    components: COMPONENTS,
  };
}
