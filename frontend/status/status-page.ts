/**
 * The status page's HTML, rendered on the server from a snapshot: with JavaScript off it is the
 * whole page (tables and the charts as they stood); `status.js` then refreshes the numbers and
 * charts from `/status.json` once a second. Semantic HTML (header, main, sections with headings,
 * tables with captions and scoped headers, figures with captions), no inline script or style, so
 * the Content-Security-Policy can forbid them.
 */
import { CHART_H, CHART_W, chartLines, formatValue } from './chart-svg.js';
import type { StatusModel, StatusSnapshot, StatusWorker } from './status-snapshot.js';
import { CHARTS } from './status-snapshot.js';

const ESC: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text for an HTML text node or attribute. */
export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ESC[c]!);

/** `1h 2m`, `3m 4s`, `5s`. */
export function duration(s: number | null): string {
  if (s === null) return '–';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}h ${m}m` : m > 0 ? `${m}m ${sec}s` : `${sec}s`;
}

/** A cell the script keeps current: `data-path` names the snapshot field it shows. */
const cell = (path: string, text: string, header = false): string =>
  header
    ? `<th scope="row" data-path="${esc(path)}">${esc(text)}</th>`
    : `<td data-path="${esc(path)}">${esc(text)}</td>`;

const workerText = (w: StatusWorker): string => `${w.id} pid ${w.pid ?? '–'} ${w.status} ${duration(w.uptimeS)}`;

/** A model's workers; a pipeline's by stage and replica (`thinker (tiny-lm, 1 replica): r0 W-… READY 3s`). */
function workersText(m: StatusModel): string {
  if (m.workers.length === 0) return m.lastWorkerError !== null ? `none (${m.lastWorkerError})` : 'none';
  if (m.stages.length === 0) return m.workers.map(workerText).join('; ');
  return m.stages
    .map((st) => {
      const ws = st.workers.map((w) => `r${w.replica ?? '?'} ${workerText(w)}`).join(', ');
      return `${st.stage} (${st.model}, ${st.replicas} replica${st.replicas === 1 ? '' : 's'}): ${ws === '' ? 'none' : ws}`;
    })
    .join('; ');
}

function batchText(m: StatusModel): string {
  const e = Object.entries(m.batchSizes).sort((a, b) => Number(a[0]) - Number(b[0]));
  return e.length === 0 ? '–' : e.map(([size, n]) => `${size}×${n}`).join(' ');
}

function engineText(m: StatusModel): string {
  const g = m.generation;
  if (g === null) return '–';
  const hit = g.prefixHitRate === null ? '–' : `${(g.prefixHitRate * 100).toFixed(1)} %`;
  return `running ${g.running}, waiting ${g.waiting}, KV ${(g.kvUsage * 100).toFixed(1)} %, prefix hits ${hit}, ${g.tokensPerS.toFixed(1)} tok/s`;
}

/** The model table's text cells of one model (shared with the script through data-path). */
export function modelCells(m: StatusModel): Record<string, string> {
  return {
    kind: m.kind,
    version: m.version,
    workers: workersText(m),
    restarts: String(m.restarts),
    queue: `${m.queue.pending} / ${m.queue.capacity}`,
    requests: String(m.requests),
    batches: batchText(m),
    engine: engineText(m),
  };
}

function modelsTable(s: StatusSnapshot): string {
  const rows = s.models
    .map((m) => {
      const c = modelCells(m);
      const p = (k: string): string => `models/${m.name}/${k}`;
      return `<tr>${cell(p('name'), m.name, true)}${Object.entries(c)
        .map(([k, v]) => cell(p(k), v))
        .join('')}</tr>`;
    })
    .join('\n');
  return `<section aria-labelledby="models-h">
<h2 id="models-h">Models</h2>
<div class="scroll" tabindex="0" role="region" aria-labelledby="models-h">
<table>
<caption>Every registered model: its workers (id, pid, state, uptime), restarts, queue (pending / remaining capacity), inference requests, batch sizes seen, and the engine of a generation model</caption>
<thead><tr><th scope="col">Model</th><th scope="col">Kind</th><th scope="col">Version</th><th scope="col">Workers</th><th scope="col">Restarts</th><th scope="col">Queue</th><th scope="col">Requests</th><th scope="col">Batch sizes</th><th scope="col">Engine</th></tr></thead>
<tbody>
${rows === '' ? '<tr><td colspan="9">No model is registered.</td></tr>' : rows}
</tbody>
</table>
</div>
</section>`;
}

function sinksTable(s: StatusSnapshot): string {
  const rows = s.sinks.map(
    (k) => `<tr>${cell(`sinks/${k.mode}/mode`, k.mode, true)}${cell(`sinks/${k.mode}/errors`, String(k.errors))}</tr>`,
  );
  return `<section aria-labelledby="sinks-h">
<h2 id="sinks-h">Metric sinks</h2>
<table>
<caption>The sinks that run, and the deliveries each failed (tsserve_sink_errors_total)</caption>
<thead><tr><th scope="col">Sink</th><th scope="col">Errors</th></tr></thead>
<tbody>
${rows.length === 0 ? '<tr><td colspan="2">Metrics are off.</td></tr>' : rows.join('\n')}
</tbody>
</table>
</section>`;
}

function charts(s: StatusSnapshot): string {
  const figures = CHARTS.map((c) => {
    const pts = s.charts[c.key];
    const { lines } = chartLines(pts);
    const last = pts.length > 0 ? pts[pts.length - 1]![1] : null;
    const polylines = lines.map((l) => `<polyline points="${l}"/>`).join('');
    return `<figure class="chart" id="chart-${c.key}">
<figcaption><span>${esc(c.title)}</span> <output data-chart-last="${c.key}" data-unit="${c.unit}">${esc(formatValue(last, c.unit))}</output></figcaption>
<svg viewBox="0 0 ${CHART_W} ${CHART_H}" preserveAspectRatio="none" role="img" aria-label="${esc(c.title)} over the last ${Math.round((pts.length * s.sampleIntervalS) / 60)} minutes" data-chart="${c.key}">${polylines}</svg>
</figure>`;
  }).join('\n');
  return `<section aria-labelledby="charts-h">
<h2 id="charts-h">Last 15 minutes</h2>
<p class="note">One point a second, from the server's own metrics: requests/s and latency of the inference routes (http_request_duration_seconds), TTFT and ITL of generation models, queue depth (batching queues and engines' waiting requests), KV cache usage (the fullest engine).</p>
<div class="charts">
${figures}
</div>
</section>`;
}

/** The whole page. */
export function renderStatusPage(s: StatusSnapshot): string {
  const off = s.metricsOn
    ? ''
    : '<p class="warn" role="status">The prometheus sink is off (--metrics-mode): the figures below need it; only the model table is current.</p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>tsserve status</title>
<link rel="stylesheet" href="/status.css">
<script src="/status.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the figures</a>
<header>
<h1>tsserve status</h1>
<p>Version ${esc(s.version)} · up <span data-path="uptime">${esc(duration(s.uptimeS))}</span> · <time data-path="time" datetime="${esc(s.time)}">${esc(s.time)}</time> · <a href="/status.json">JSON</a></p>
</header>
<main id="main">
${off}
${modelsTable(s)}
${charts(s)}
${sinksTable(s)}
</main>
</body>
</html>
`;
}

/** Every `data-path` cell's text for a snapshot: what the script writes into the page. */
export function statusView(s: StatusSnapshot): Record<string, string> {
  const view: Record<string, string> = { uptime: duration(s.uptimeS), time: s.time };
  for (const m of s.models) {
    view[`models/${m.name}/name`] = m.name;
    for (const [k, v] of Object.entries(modelCells(m))) view[`models/${m.name}/${k}`] = v;
  }
  for (const k of s.sinks) {
    view[`sinks/${k.mode}/mode`] = k.mode;
    view[`sinks/${k.mode}/errors`] = String(k.errors);
  }
  return view;
}
