/**
 * `/docs`: an OpenAPI document as a readable page, rendered on the server (no script, nothing
 * fetched from elsewhere): each tag a section, each operation its method and path, summary,
 * parameters, request body types and answers.
 */

const ESC: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ESC[c]!);

interface DocOp {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{
    name: string;
    in: string;
    required?: boolean;
    description?: string;
    schema?: { type?: unknown };
  }>;
  requestBody?: { content?: Record<string, unknown> };
  responses?: Record<string, { description?: string; content?: Record<string, unknown> }>;
}

const STYLE = `body{margin:0 auto;max-width:70rem;padding:0 1rem 2rem;font:15px/1.45 system-ui,sans-serif;color:#1b1f24;background:#fff}
@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}a{color:#4493f8}}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #8884}h3{font-size:1rem;margin:1.2rem 0 .3rem;font-family:ui-monospace,monospace}
.m{display:inline-block;min-width:4.5em;font-weight:700}table{border-collapse:collapse;margin:.3rem 0}th,td{border:1px solid #8884;padding:.2rem .5rem;text-align:left;vertical-align:top}
code{font-family:ui-monospace,monospace}`;

/** The page of `doc` (an OpenAPI 3.1 document). */
export function renderDocsPage(doc: Record<string, unknown>): string {
  const info = doc.info as { title: string; version: string; description?: string };
  const paths = doc.paths as Record<string, Record<string, DocOp>>;
  const byTag = new Map<string, string[]>();
  for (const [p, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = (op.parameters ?? [])
        .map(
          (x) =>
            `<tr><td><code>${esc(x.name)}</code></td><td>${esc(x.in)}${x.required === true ? ', required' : ''}</td><td>${esc(String(x.schema?.type ?? ''))}</td><td>${esc(x.description ?? '')}</td></tr>`,
        )
        .join('');
      const body = op.requestBody?.content
        ? Object.keys(op.requestBody.content)
            .map((t) => `<code>${esc(t)}</code>`)
            .join(', ')
        : '';
      const answers = Object.entries(op.responses ?? {})
        .map(
          ([code, a]) =>
            `<tr><td>${esc(code)}</td><td>${esc(a.description ?? '')}</td><td>${Object.keys(a.content ?? {})
              .map((t) => `<code>${esc(t)}</code>`)
              .join(', ')}</td></tr>`,
        )
        .join('');
      const html = `<article>
<h3><span class="m">${esc(method.toUpperCase())}</span> ${esc(p)}</h3>
<p>${esc(op.summary ?? '')}</p>${op.description !== undefined ? `<p>${esc(op.description)}</p>` : ''}
${params !== '' ? `<table><caption>Parameters</caption><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Type</th><th scope="col">About</th></tr>${params}</table>` : ''}
${body !== '' ? `<p>Body: ${body}</p>` : ''}
<table><caption>Answers</caption><tr><th scope="col">Status</th><th scope="col">When</th><th scope="col">Body</th></tr>${answers}</table>
</article>`;
      const tag = op.tags?.[0] ?? 'other';
      let list = byTag.get(tag);
      if (list === undefined) byTag.set(tag, (list = []));
      list.push(html);
    }
  }
  const sections = [...byTag]
    .map(([tag, ops]) => `<section><h2 id="${esc(tag)}">${esc(tag)}</h2>\n${ops.join('\n')}</section>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>${esc(info.title)}</title><style>${STYLE}</style></head>
<body><header><h1>${esc(info.title)} <small>${esc(info.version)}</small></h1><p>${esc(info.description ?? '')}</p>
<p>The document itself: <a href="/openapi.json">/openapi.json</a> (also the answer to <code>OPTIONS /</code>).</p></header>
<main>${sections}</main></body></html>
`;
}
