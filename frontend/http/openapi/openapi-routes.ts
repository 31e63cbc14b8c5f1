/**
 * The description routes every port has: `GET /openapi.json` (the port's OpenAPI 3.1 document),
 * `GET /docs` (the document as a page) and `OPTIONS /` (the document, as TorchServe answers its
 * API description there). The document is built once; its JSON is serialized once.
 */
import type { ServerResponse } from 'http';
import { renderDocsPage } from './docs-page.js';
import type { RouteTable } from '../route-table.js';

/** What the routes answer, built once per port. */
export interface Description {
  readonly json: string;
  readonly page: string;
}

/** The answers for `doc`. */
export function description(doc: Record<string, unknown>): Description {
  return { json: JSON.stringify(doc), page: renderDocsPage(doc) };
}

/** The document as JSON. */
export function sendDocument(d: Description, res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.end(d.json);
}

/** The page. */
export function sendDocsPage(d: Description, res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.setHeader(
    'content-security-policy',
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  res.setHeader('x-content-type-options', 'nosniff');
  res.end(d.page);
}

/** Declares `GET /openapi.json`, `GET /docs` and `OPTIONS /` on `routes`, answering `doc`. */
export function describeRoutes(routes: RouteTable, doc: Record<string, unknown>): RouteTable {
  const d = description(doc);
  return routes
    .get('/openapi.json', (_req, res) => sendDocument(d, res))
    .get('/docs', (_req, res) => sendDocsPage(d, res))
    .options('/', (_req, res) => sendDocument(d, res));
}
