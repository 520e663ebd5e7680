/* SPDX-License-Identifier: MIT */
/*
 * flame_html.h - the page rec-flame --format html writes: HTML, CSS and
 * JavaScript, all inline (no network fetch), in four pieces around the title
 * (twice) and the data.  The data is one JSON object in a
 * <script type="application/json"> element, written with '<', '>' and '&'
 * escaped as \u00XX so that no "</script>" can appear in it:
 *   {"title", "event", "unit": samples|events|bytes|ns|count, "reverse",
 *    "diff", "total" (weight of the graph), "totalBefore" (diff: of BEFORE),
 *    "tree": [name, self, selfBefore, child...] nested, root first,
 *    "names": [frame names; 0 is the root "all"]}
 * The script builds the tree, draws one absolutely positioned <div
 * class="frame" data-name data-total> per frame at least half a pixel wide
 * (flame: root at the bottom; reverse: icicle, root on top), zooms on click
 * (the ancestors stay full width), resets with the button or Escape,
 * searches with a regular expression (a substring when it does not compile),
 * highlights matches and shows the matched percentage of the whole graph,
 * and shows a tooltip per frame.  window.recFlame exposes root, search(),
 * zoomTo() and frames() for tests.
 * Included by tools/rec-flame.c only.
 */
#ifndef REC_TOOLS_FLAME_HTML_H
#define REC_TOOLS_FLAME_HTML_H

/* up to the <title> text */
#define FLAME_HTML_1 \
	"<!DOCTYPE html>\n" \
	"<html lang=\"en\">\n" \
	"<head>\n" \
	"<meta charset=\"utf-8\">\n" \
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" \
	"<title>"

/* from </title> to the <h1> text */
#define FLAME_HTML_2 \
	"</title>\n" \
	"<style>\n" \
	"body { margin: 0; font: 12px Verdana, Arial, sans-serif; background: #fff; color: #000; }\n" \
	"#bar { padding: 8px 10px 6px; background: linear-gradient(#eee, #eeeeb0); border-bottom: 1px solid #ccc; }\n" \
	"#bar h1 { font-size: 17px; margin: 0 0 4px; font-weight: normal; }\n" \
	"#bar .row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }\n" \
	"#info { color: #444; flex: 1 1 auto; }\n" \
	"#matched { font-weight: bold; color: #a000a0; min-width: 12em; }\n" \
	"#search { width: 18em; font: inherit; padding: 2px 4px; }\n" \
	"button { font: inherit; }\n" \
	"#chart { position: relative; margin: 6px 10px 30px; overflow: hidden; }\n" \
	".frame { position: absolute; height: 15px; box-sizing: border-box; border: 1px solid rgba(255,255,255,.8);\n" \
	"  border-radius: 2px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; line-height: 13px;\n" \
	"  padding: 0 3px; font-size: 11px; cursor: pointer; color: #000; }\n" \
	".frame.thin { border: 0; padding: 0; }\n" \
	".frame:hover { border-color: #000; }\n" \
	".frame.ancestor { opacity: .6; }\n" \
	".frame.match { background: rgb(230,0,230) !important; color: #fff; }\n" \
	"#tip { position: fixed; display: none; pointer-events: none; background: #ffffe8; border: 1px solid #999;\n" \
	"  padding: 4px 6px; max-width: 60em; box-shadow: 2px 2px 4px rgba(0,0,0,.2); z-index: 10; white-space: pre-wrap; word-break: break-all; }\n" \
	"#legend { margin: 0 10px; color: #444; }\n" \
	"</style>\n" \
	"</head>\n" \
	"<body>\n" \
	"<div id=\"bar\">\n" \
	"<h1 id=\"title\">"

/* from </h1> to the JSON data */
#define FLAME_HTML_3 \
	"</h1>\n" \
	"<div class=\"row\">\n" \
	"<span id=\"info\"></span>\n" \
	"<input id=\"search\" type=\"search\" placeholder=\"Search (regex or text)\" aria-label=\"Search frames\">\n" \
	"<button id=\"clear\" type=\"button\">Clear</button>\n" \
	"<button id=\"reset\" type=\"button\">Reset zoom</button>\n" \
	"<span id=\"matched\"></span>\n" \
	"</div>\n" \
	"</div>\n" \
	"<div id=\"legend\"></div>\n" \
	"<div id=\"chart\"></div>\n" \
	"<div id=\"tip\"></div>\n" \
	"<script type=\"application/json\" id=\"flame-data\">"

/* from the end of the data to the end */
#define FLAME_HTML_4 \
	"</script>\n" \
	"<script>\n" \
	"(function () {\n" \
	"'use strict';\n" \
	"var D = JSON.parse(document.getElementById('flame-data').textContent);\n" \
	"var names = D.names, ROW = 16;\n" \
	"var chart = document.getElementById('chart'), tip = document.getElementById('tip');\n" \
	"var info = document.getElementById('info'), matched = document.getElementById('matched');\n" \
	"var input = document.getElementById('search');\n" \
	"var maxDepth = 0;\n" \
	"\n" \
	"function build(a, parent, depth) {\n" \
	"  var n = { name: names[a[0]], self: a[1], sb: a[2], total: a[1], tb: a[2],\n" \
	"            parent: parent, depth: depth, kids: [] };\n" \
	"  if (depth > maxDepth) maxDepth = depth;\n" \
	"  for (var i = 3; i < a.length; i++) {\n" \
	"    var c = build(a[i], n, depth + 1);\n" \
	"    n.kids.push(c); n.total += c.total; n.tb += c.tb;\n" \
	"  }\n" \
	"  return n;\n" \
	"}\n" \
	"var root = build(D.tree, null, 0);\n" \
	"/* frames omitted by --minwidth leave gaps: the root keeps the real total */\n" \
	"if (D.total > root.total) root.total = D.total;\n" \
	"if (D.diff && D.totalBefore > root.tb) root.tb = D.totalBefore;\n" \
	"var grand = root.total;\n" \
	"var scale = D.diff && root.tb > 0 ? root.total / root.tb : 1;\n" \
	"var maxDelta = 0;\n" \
	"(function walk(n) {\n" \
	"  n.delta = n.total - n.tb * scale;\n" \
	"  if (n !== root && Math.abs(n.delta) > maxDelta) maxDelta = Math.abs(n.delta);\n" \
	"  n.kids.forEach(walk);\n" \
	"})(root);\n" \
	"\n" \
	"function group(v) { return Math.round(v).toString().replace(/\\B(?=(\\d{3})+(?!\\d))/g, ','); }\n" \
	"function fmt(v) {\n" \
	"  switch (D.unit) {\n" \
	"  case 'bytes': return (v / 1048576).toFixed(2) + ' MiB (' + group(v) + ' bytes)';\n" \
	"  case 'ns': return (v / 1e6).toFixed(3) + ' ms';\n" \
	"  case 'samples': return group(v) + (v === 1 ? ' sample' : ' samples');\n" \
	"  case 'events': return group(v) + (v === 1 ? ' event' : ' events');\n" \
	"  default: return group(v);\n" \
	"  }\n" \
	"}\n" \
	"function pct(v) { return grand > 0 ? (100 * v / grand).toFixed(2) + '%' : '0.00%'; }\n" \
	"\n" \
	"function hash(s) {\n" \
	"  var h = 2166136261;\n" \
	"  for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }\n" \
	"  return (h >>> 0) / 4294967296;\n" \
	"}\n" \
	"function color(n) {\n" \
	"  if (D.diff) {\n" \
	"    if (maxDelta === 0 || n.delta === 0) return 'rgb(245,245,245)';\n" \
	"    var r = Math.min(1, Math.abs(n.delta) / maxDelta), c = Math.round(230 * (1 - r));\n" \
	"    return n.delta > 0 ? 'rgb(255,' + c + ',' + c + ')' : 'rgb(' + c + ',' + c + ',255)';\n" \
	"  }\n" \
	"  var v1 = hash(n.name), v2 = hash(n.name + '#');\n" \
	"  return 'rgb(' + Math.round(205 + 50 * v1) + ',' + Math.round(80 + 150 * v2) + ',' + Math.round(55 * v1) + ')';\n" \
	"}\n" \
	"\n" \
	"var zoomed = root, pattern = null, lastFrames = [];\n" \
	"\n" \
	"function matches(name) {\n" \
	"  if (!pattern) return false;\n" \
	"  return pattern.re ? pattern.re.test(name) : name.indexOf(pattern.text) >= 0;\n" \
	"}\n" \
	"\n" \
	"function tipText(n) {\n" \
	"  var t = n.name + '\\n' + fmt(n.total) + ' (' + pct(n.total) + ')';\n" \
	"  if (n.self && n.kids.length) t += ', self ' + fmt(n.self);\n" \
	"  if (D.diff) {\n" \
	"    var d = n.delta, before = n.tb * scale;\n" \
	"    t += '\\nbefore: ' + fmt(n.tb) + (scale !== 1 ? ' (normalised: ' + fmt(before) + ')' : '') +\n" \
	"         '\\nchange: ' + (d >= 0 ? '+' : '-') + fmt(Math.abs(d)) +\n" \
	"         (before > 0 ? ' (' + (d >= 0 ? '+' : '') + (100 * d / before).toFixed(1) + '%)' : ' (new)');\n" \
	"  }\n" \
	"  return t;\n" \
	"}\n" \
	"\n" \
	"function render() {\n" \
	"  var W = chart.clientWidth || 1000;\n" \
	"  var depthSpan = maxDepth + 1;\n" \
	"  chart.style.height = (depthSpan * ROW + 2) + 'px';\n" \
	"  var frag = document.createDocumentFragment();\n" \
	"  lastFrames = [];\n" \
	"  function top(depth) { return (D.reverse ? depth : maxDepth - depth) * ROW; }\n" \
	"  function add(n, x, w, anc) {\n" \
	"    var el = document.createElement('div');\n" \
	"    el.className = 'frame' + (anc ? ' ancestor' : '') + (matches(n.name) ? ' match' : '') + (w * W < 4 ? ' thin' : '');\n" \
	"    el.style.left = (100 * x) + '%';\n" \
	"    el.style.width = (100 * w) + '%';\n" \
	"    el.style.top = top(n.depth) + 'px';\n" \
	"    el.style.background = color(n);\n" \
	"    if (w * W >= 22) el.textContent = n.name;\n" \
	"    el.setAttribute('data-name', n.name);\n" \
	"    el.setAttribute('data-total', String(n.total));\n" \
	"    el.__node = n;\n" \
	"    frag.appendChild(el);\n" \
	"    lastFrames.push(el);\n" \
	"  }\n" \
	"  for (var a = zoomed; a; a = a.parent) add(a, 0, 1, a !== zoomed);\n" \
	"  var span = zoomed.total || 1;\n" \
	"  (function draw(n, x) {\n" \
	"    for (var i = 0; i < n.kids.length; i++) {\n" \
	"      var c = n.kids[i], w = c.total / span;\n" \
	"      if (w * W >= 0.5) { add(c, x, w, false); draw(c, x); }\n" \
	"      x += w;\n" \
	"    }\n" \
	"  })(zoomed, 0);\n" \
	"  chart.textContent = '';\n" \
	"  chart.appendChild(frag);\n" \
	"  info.textContent = D.event + ': ' + fmt(grand) + ' in all' +\n" \
	"    (zoomed !== root ? '; zoomed to ' + zoomed.name + ' (' + pct(zoomed.total) + ')' : '') +\n" \
	"    '. Click a frame to zoom in.';\n" \
	"}\n" \
	"\n" \
	"function zoomTo(n) { zoomed = n || root; render(); }\n" \
	"\n" \
	"function search(term) {\n" \
	"  input.value = term || '';\n" \
	"  if (!term) { pattern = null; matched.textContent = ''; render(); return null; }\n" \
	"  try { pattern = { re: new RegExp(term) }; } catch (e) { pattern = { text: term }; }\n" \
	"  var sum = 0, count = 0;\n" \
	"  (function walk(n) {\n" \
	"    if (n !== root && matches(n.name)) { sum += n.total; count++; return; }\n" \
	"    n.kids.forEach(walk);\n" \
	"  })(root);\n" \
	"  var p = pct(sum);\n" \
	"  matched.textContent = 'Matched: ' + p + ' (' + fmt(sum) + ')';\n" \
	"  render();\n" \
	"  return { percent: p, weight: sum, frames: count };\n" \
	"}\n" \
	"\n" \
	"chart.addEventListener('click', function (e) {\n" \
	"  var el = e.target.closest('.frame');\n" \
	"  if (el && el.__node) zoomTo(el.__node === zoomed ? (zoomed.parent || root) : el.__node);\n" \
	"});\n" \
	"chart.addEventListener('mousemove', function (e) {\n" \
	"  var el = e.target.closest('.frame');\n" \
	"  if (!el || !el.__node) { tip.style.display = 'none'; return; }\n" \
	"  tip.textContent = tipText(el.__node);\n" \
	"  tip.style.display = 'block';\n" \
	"  var x = e.clientX + 12, y = e.clientY + 14;\n" \
	"  if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, e.clientX - tip.offsetWidth - 12);\n" \
	"  if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, e.clientY - tip.offsetHeight - 8);\n" \
	"  tip.style.left = x + 'px'; tip.style.top = y + 'px';\n" \
	"});\n" \
	"chart.addEventListener('mouseleave', function () { tip.style.display = 'none'; });\n" \
	"document.getElementById('reset').addEventListener('click', function () { zoomTo(root); });\n" \
	"document.getElementById('clear').addEventListener('click', function () { search(''); });\n" \
	"input.addEventListener('input', function () { search(input.value); });\n" \
	"document.addEventListener('keydown', function (e) {\n" \
	"  if (e.key === 'Escape') zoomTo(root);\n" \
	"  if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); input.focus(); }\n" \
	"});\n" \
	"window.addEventListener('resize', render);\n" \
	"if (D.diff) document.getElementById('legend').textContent =\n" \
	"  'Differential: widths from the second (after) recording; red grew, blue shrank, white unchanged' +\n" \
	"  (scale !== 1 ? ' (the first recording is normalised to the same total, x' + scale.toFixed(3) + ')' : '') + '.';\n" \
	"render();\n" \
	"window.recFlame = { root: root, data: D, zoomTo: zoomTo, search: search, tipText: tipText,\n" \
	"  frames: function () { return lastFrames; } };\n" \
	"})();\n" \
	"</script>\n" \
	"</body>\n" \
	"</html>\n"

#endif /* REC_TOOLS_FLAME_HTML_H */
