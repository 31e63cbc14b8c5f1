/**
 * Small builders for the OpenAPI 3.1 documents (frontend/http/openapi/*-doc.ts): an operation
 * with its parameters, body and answers, so each document reads as a list of routes. Every
 * operation names the express route it documents in `x-express-path`, which is how the test that
 * walks the server's route tables and the documents together pairs them.
 */

/** A JSON Schema (OpenAPI 3.1 uses JSON Schema 2020-12). */
export type Schema = Readonly<Record<string, unknown>>;

/** One documented operation before it is placed under its path. */
export interface OperationSpec {
  readonly express: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly params?: readonly Param[];
  readonly body?: { readonly required?: boolean; readonly content: Readonly<Record<string, Schema>> };
  /** Status → description and, for a body, its content type and schema. */
  readonly responses: Readonly<Record<string, Answer>>;
}

/** An answer: its description and content (content type → schema). */
export interface Answer {
  readonly description: string;
  readonly content?: Readonly<Record<string, Schema>>;
  readonly headers?: Readonly<Record<string, { readonly description: string; readonly schema: Schema }>>;
}

/** A path or query parameter. */
export interface Param {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required?: boolean;
  readonly description: string;
  readonly schema: Schema;
}

/** A path parameter (always required). */
export const pathParam = (name: string, description: string): Param => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});

/** A query parameter. */
export const queryParam = (name: string, description: string, schema: Schema = { type: 'string' }): Param => ({
  name,
  in: 'query',
  description,
  schema,
});

/** `{ $ref: '#/components/schemas/NAME' }`. */
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** A JSON answer of `schema`. */
export const json = (description: string, schema: Schema): Answer => ({
  description,
  content: { 'application/json': schema },
});

/**
 * The OpenAPI paths an express path stands for: `:name` is `{name}`, an optional group
 * `{/:version}` gives the path without and with it (`/models/{name}` and
 * `/models/{name}/{version}`), and a wildcard `{*rest}` is `{rest}`.
 */
export function openApiPaths(express: string): string[] {
  const group = /\{([^{}]*)\}/.exec(express);
  if (group !== null && group[1]!.startsWith('/')) {
    const before = express.slice(0, group.index);
    const after = express.slice(group.index + group[0].length);
    return [...openApiPaths(before + after), ...openApiPaths(before + group[1]! + after)];
  }
  return [express.replace(/\{\*([A-Za-z0-9_]+)\}/g, '{$1}').replace(/:([A-Za-z0-9_]+)/g, '{$1}')];
}

type Method = 'get' | 'post' | 'put' | 'delete';

/** The `paths` object of the operations, each under every OpenAPI path its express path stands for. */
export function pathsOf(ops: ReadonlyArray<readonly [Method, OperationSpec]>): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [method, op] of ops) {
    for (const p of openApiPaths(op.express)) {
      const names = [...p.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
      const params = (op.params ?? []).filter((x) => x.in !== 'path' || names.includes(x.name));
      for (const n of names)
        if (!params.some((x) => x.in === 'path' && x.name === n)) params.unshift(pathParam(n, `the ${n}`));
      (paths[p] ??= {})[method] = {
        operationId: `${method}${p.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
        summary: op.summary,
        ...(op.description !== undefined ? { description: op.description } : {}),
        tags: op.tags,
        ...(params.length > 0 ? { parameters: params } : {}),
        ...(op.body !== undefined
          ? {
              requestBody: {
                required: op.body.required ?? true,
                content: Object.fromEntries(Object.entries(op.body.content).map(([t, s]) => [t, { schema: s }])),
              },
            }
          : {}),
        responses: Object.fromEntries(
          Object.entries(op.responses).map(([code, a]) => [
            code,
            {
              description: a.description,
              ...(a.headers !== undefined ? { headers: a.headers } : {}),
              ...(a.content !== undefined
                ? { content: Object.fromEntries(Object.entries(a.content).map(([t, s]) => [t, { schema: s }])) }
                : {}),
            },
          ]),
        ),
        'x-express-path': op.express,
      };
    }
  }
  return paths;
}
