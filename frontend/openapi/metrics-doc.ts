/**
 * The metrics API's OpenAPI 3.1 document (the metrics port): `GET /metrics` in Prometheus text
 * 0.0.4 or OpenMetrics 1.0 (by Accept), filtered by `name[]`. Walked together with the port's
 * route table by `test/frontend/http/openapi.test.ts`.
 */
import { COMPONENTS } from './components.js';
import { describeOps } from './inference-doc.js';
import type { OperationSpec } from '../http/openapi/openapi-builder.js';
import { json, pathsOf, queryParam, ref } from '../http/openapi/openapi-builder.js';

const OPS: Array<readonly ['get' | 'post' | 'put' | 'delete', OperationSpec]> = [
  [
    'get',
    {
      express: '/metrics',
      summary: 'Every declared family (and the process metrics), as Prometheus scrapes them',
      tags: ['metrics'],
      params: [
        queryParam(
          'name[]',
          'only these families, or these samples of one (`X_bucket`), in the order asked; repeatable',
          {
            type: 'array',
            items: { type: 'string' },
          },
        ),
      ],
      responses: {
        '200': {
          description: 'the exposition',
          content: {
            'text/plain; version=0.0.4': { type: 'string' },
            'application/openmetrics-text; version=1.0.0': { type: 'string' },
          },
        },
        '400': json('a bad name[] filter', ref('Error')),
      },
    },
  ],
  [
    'get',
    {
      express: '/metrics/{*rest}',
      summary: 'The same exposition under any path below /metrics (as TorchServe answers it)',
      tags: ['metrics'],
      responses: {
        '200': { description: 'the exposition', content: { 'text/plain; version=0.0.4': { type: 'string' } } },
      },
    },
  ],
  ...describeOps('meta'),
];

/** The metrics API's document. */
export function metricsDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'tsserve metrics API', version, description: 'The Prometheus exposition, on the metrics port.' },
    servers: [{ url: '/' }],
    tags: ['metrics', 'meta'].map((name) => ({ name })),
    paths: pathsOf(OPS),
    components: COMPONENTS,
  };
}
