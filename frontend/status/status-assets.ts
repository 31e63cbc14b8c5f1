/**
 * The status page's stylesheet and script, served from the server (no CDN, nothing fetched from
 * elsewhere). The script polls `/status.json?since=T` once a second, puts each `view` text into
 * the element whose `data-path` names it, appends the new chart points (at most 900 a chart) and
 * redraws the lines as chart-svg.ts does; a model added or removed reloads the page.
 */
import { CHART_H, CHART_W } from './chart-svg.js';
import { HISTORY } from './status-sampler.js';

/** status.css: light and dark, readable from 360 px up. */
export const STATUS_CSS = `:root{--bg:#fff;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--accent:#0969da;--warn:#9a6700;--plot:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#30363d;--accent:#4493f8;--warn:#d29922;--plot:#4493f8}}
*{box-sizing:border-box}
body{margin:0;padding:0 1rem 2rem;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
header{border-bottom:1px solid var(--line);margin-bottom:1rem}
h1{font-size:1.35rem;margin:.8rem 0 .2rem}
h2{font-size:1.1rem;margin:1.4rem 0 .5rem}
header p,.note{color:var(--muted);margin:.2rem 0 .8rem}
a{color:var(--accent)}
a:focus,.scroll:focus{outline:2px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:var(--bg);padding:.3rem}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
caption{text-align:left;color:var(--muted);padding:.2rem 0 .4rem;font-size:.9rem}
th,td{border-bottom:1px solid var(--line);padding:.35rem .5rem;text-align:left;vertical-align:top}
thead th{font-weight:600;white-space:nowrap}
.warn{color:var(--warn);font-weight:600}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:1rem}
.chart{margin:0;border:1px solid var(--line);border-radius:6px;padding:.5rem}
.chart figcaption{display:flex;justify-content:space-between;gap:.5rem;font-size:.9rem}
.chart output{font-variant-numeric:tabular-nums;font-weight:600}
.chart svg{width:100%;height:90px;display:block;margin-top:.3rem}
.chart polyline{fill:none;stroke:var(--plot);stroke-width:1.5;vector-effect:non-scaling-stroke}
`;

/** status.js: the page's live part (plain ES2020, no framework). */
export const STATUS_JS = `'use strict';
(function () {
  var W = ${CHART_W}, H = ${CHART_H}, KEEP = ${HISTORY};
  var charts = {};
  var since = 0;
  var reloading = false;
  function fmt(v, unit) {
    if (v === null || v === undefined) return '\\u2013';
    if (unit === 's') return v < 1 ? (v * 1000).toPrecision(3) + ' ms' : v.toPrecision(3) + ' s';
    if (unit === 'ratio') return (v * 100).toFixed(1) + ' %';
    var s = Math.abs(v) >= 1000 ? v.toFixed(0) : String(Number(v.toPrecision(4)));
    return unit === '' ? s : s + ' ' + unit;
  }
  function lines(points) {
    var max = 0, i;
    for (i = 0; i < points.length; i++) if (points[i][1] !== null && points[i][1] > max) max = points[i][1];
    var top = max > 0 ? max : 1, out = [], cur = [];
    if (points.length === 0) return out;
    var t0 = points[0][0], span = Math.max(1, points[points.length - 1][0] - t0);
    for (i = 0; i < points.length; i++) {
      var p = points[i];
      if (p[1] === null) { if (cur.length) out.push(cur.join(' ')); cur = []; continue; }
      cur.push((((p[0] - t0) / span) * W).toFixed(1) + ',' + (H - (p[1] / top) * (H - 4) - 2).toFixed(1));
    }
    if (cur.length) out.push(cur.join(' '));
    return out;
  }
  function draw(key) {
    var svg = document.querySelector('svg[data-chart="' + key + '"]');
    if (!svg) return;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    lines(charts[key]).forEach(function (l) {
      var pl = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
      pl.setAttribute('points', l);
      svg.appendChild(pl);
    });
    var out = document.querySelector('output[data-chart-last="' + key + '"]');
    var pts = charts[key];
    if (out) out.textContent = fmt(pts.length ? pts[pts.length - 1][1] : null, out.getAttribute('data-unit') || '');
  }
  function apply(snap) {
    var known = true;
    Object.keys(snap.view).forEach(function (path) {
      var el = document.querySelector('[data-path="' + CSS.escape(path) + '"]');
      if (el) el.textContent = snap.view[path]; else known = false;
    });
    if (document.querySelectorAll('tbody th[data-path^="models/"]').length !== snap.models.length) known = false;
    if (!known && !reloading) { reloading = true; location.reload(); return; }
    Object.keys(snap.charts).forEach(function (key) {
      var add = snap.charts[key];
      var cur = (charts[key] = (charts[key] || []).concat(add));
      if (cur.length > KEEP) charts[key] = cur.slice(cur.length - KEEP);
      draw(key);
      if (add.length) since = Math.max(since, add[add.length - 1][0]);
    });
    document.documentElement.setAttribute('data-updated', snap.time);
  }
  function poll() {
    fetch('/status.json' + (since > 0 ? '?since=' + since : ''), { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (snap) { if (snap) apply(snap); })
      .catch(function () {})
      .then(function () { setTimeout(poll, 1000); });
  }
  poll();
})();
`;
