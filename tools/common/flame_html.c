/* SPDX-License-Identifier: MIT */
/*
 * flame_html.c - interactive flame graphs in HTML (flame_html.h says what
 * the page holds and how it draws): the style, the script, and each graph's
 * data written from a stack aggregation.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flame_html.h"

static const char flame_style[] =
	"<style>\n"
	".rec-flame { font: 12px Verdana, Arial, sans-serif; color: #000; }\n"
	".rec-flame .bar { padding: 8px 10px 6px; background: linear-gradient(#eee, #eeeeb0); border-bottom: 1px solid #ccc; }\n"
	".rec-flame .title { font-size: 17px; margin: 0 0 4px; font-weight: normal; }\n"
	".rec-flame .row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }\n"
	".rec-flame .info { color: #444; flex: 1 1 auto; }\n"
	".rec-flame .matched { font-weight: bold; color: #a000a0; min-width: 12em; }\n"
	".rec-flame .search { width: 18em; font: inherit; padding: 2px 4px; }\n"
	".rec-flame button { font: inherit; }\n"
	".rec-flame .chart { position: relative; margin: 6px 10px 30px; overflow: hidden; }\n"
	".rec-flame canvas { display: block; cursor: pointer; }\n"
	".rec-flame .hover { position: absolute; display: none; height: 15px; box-sizing: border-box; border: 1px solid #000; pointer-events: none; }\n"
	".rec-flame .tip { position: fixed; display: none; pointer-events: none; background: #ffffe8; border: 1px solid #999;\n"
	"  padding: 4px 6px; max-width: 60em; box-shadow: 2px 2px 4px rgba(0,0,0,.2); z-index: 10; white-space: pre-wrap; word-break: break-all; }\n"
	".rec-flame .legend { margin: 0 10px; color: #444; }\n"
	"</style>\n";

static const char flame_script[] =
	"<script>\n"
	"(function () {\n"
	"'use strict';\n"
	"var ROW = 16, MINPX = 1, LABELPX = 22, MATCH = [230, 0, 230], GREY = [200, 200, 200];\n"
	"var LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;\n"
	"/* an opaque pixel of ImageData's RGBA bytes, as one 32-bit word */\n"
	"function pack(c) {\n"
	"  return (LITTLE ? (255 << 24 | c[2] << 16 | c[1] << 8 | c[0])\n"
	"                 : (c[0] << 24 | c[1] << 16 | c[2] << 8 | 255)) >>> 0;\n"
	"}\n"
	"/* an ancestor of the zoomed frame: its colour 60 % over white */\n"
	"function fade(v) { return Math.round(0.6 * v + 0.4 * 255); }\n"
	"var graphs = [], active = null;\n"
	"\n"
	"function group(v) { return Math.round(v).toString().replace(/\\B(?=(\\d{3})+(?!\\d))/g, ','); }\n"
	"function hash(s) {\n"
	"  var h = 2166136261;\n"
	"  for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }\n"
	"  return (h >>> 0) / 4294967296;\n"
	"}\n"
	"\n"
	"function Flame(box) {\n"
	"  function q(c) { return box.querySelector('.' + c); }\n"
	"  var D = JSON.parse(q('rec-flame-data').textContent);\n"
	"  var names = D.names;\n"
	"  var chart = q('chart'), canvas = chart.querySelector('canvas'), hover = q('hover');\n"
	"  var tip = q('tip'), info = q('info'), matched = q('matched'), input = q('search');\n"
	"  var ctx = canvas.getContext('2d');\n"
	"  var maxDepth = 0, nodes = 0;\n"
	"\n"
	"  /* the tree: [name, self, selfBefore, child...] nested, root first */\n"
	"  function build(a, parent, depth) {\n"
	"    var n = { ni: a[0], name: names[a[0]], self: a[1], sb: a[2], total: a[1], tb: a[2],\n"
	"              parent: parent, depth: depth, kids: [], match: false };\n"
	"    nodes++;\n"
	"    if (depth > maxDepth) maxDepth = depth;\n"
	"    for (var i = 3; i < a.length; i++) {\n"
	"      var c = build(a[i], n, depth + 1);\n"
	"      n.kids.push(c); n.total += c.total; n.tb += c.tb;\n"
	"    }\n"
	"    return n;\n"
	"  }\n"
	"  var root = build(D.tree, null, 0);\n"
	"  /* every node in pre-order, each with the index after its subtree (end):\n"
	"   * a search is one loop */\n"
	"  var flat = [];\n"
	"  (function order(n) {\n"
	"    flat.push(n);\n"
	"    for (var i = 0; i < n.kids.length; i++) order(n.kids[i]);\n"
	"    n.end = flat.length;\n"
	"  })(root);\n"
	"  /* frames omitted by --minwidth leave gaps: the root keeps the real total */\n"
	"  if (D.total > root.total) root.total = D.total;\n"
	"  if (D.diff && D.totalBefore > root.tb) root.tb = D.totalBefore;\n"
	"  var grand = root.total;\n"
	"  var scale = D.diff && root.tb > 0 ? root.total / root.tb : 1;\n"
	"  var maxDelta = 0;\n"
	"  (function walk(n) {\n"
	"    n.delta = n.total - n.tb * scale;\n"
	"    if (n !== root && Math.abs(n.delta) > maxDelta) maxDelta = Math.abs(n.delta);\n"
	"    n.kids.forEach(walk);\n"
	"  })(root);\n"
	"\n"
	"  function fmt(v) {\n"
	"    switch (D.unit) {\n"
	"    case 'bytes': return (v / 1048576).toFixed(2) + ' MiB (' + group(v) + ' bytes)';\n"
	"    case 'ns': return (v / 1e6).toFixed(3) + ' ms';\n"
	"    case 'samples': return group(v) + (v === 1 ? ' sample' : ' samples');\n"
	"    case 'events': return group(v) + (v === 1 ? ' event' : ' events');\n"
	"    default: return group(v);\n"
	"    }\n"
	"  }\n"
	"  function pct(v) { return grand > 0 ? (100 * v / grand).toFixed(2) + '%' : '0.00%'; }\n"
	"\n"
	"  /* colours as [r, g, b]: by name (cached per name), or by change (diff) */\n"
	"  var nameColor = [];\n"
	"  function color(n) {\n"
	"    if (D.diff) {\n"
	"      if (maxDelta === 0 || n.delta === 0) return [245, 245, 245];\n"
	"      var r = Math.min(1, Math.abs(n.delta) / maxDelta), c = Math.round(230 * (1 - r));\n"
	"      return n.delta > 0 ? [255, c, c] : [c, c, 255];\n"
	"    }\n"
	"    var k = nameColor[n.ni];\n"
	"    if (!k) {\n"
	"      var v1 = hash(n.name), v2 = hash(n.name + '#');\n"
	"      k = nameColor[n.ni] = [Math.round(205 + 50 * v1), Math.round(80 + 150 * v2), Math.round(55 * v1)];\n"
	"    }\n"
	"    return k;\n"
	"  }\n"
	"\n"
	"  function tipText(n) {\n"
	"    if (n.merged) {\n"
	"      return n.count + ' frames under ' + n.parent.name + ', each narrower than a pixel\\n' +\n"
	"        fmt(n.total) + ' (' + pct(n.total) + ') in all; click to zoom into ' + n.parent.name;\n"
	"    }\n"
	"    var w = D.where && D.where[n.ni];\n"
	"    var t = n.name + (w ? ' (' + w + ')' : '') + '\\n' + fmt(n.total) + ' (' + pct(n.total) + ')';\n"
	"    if (n.self && n.kids.length) t += ', self ' + fmt(n.self);\n"
	"    if (D.diff) {\n"
	"      var d = n.delta, before = n.tb * scale;\n"
	"      t += '\\nbefore: ' + fmt(n.tb) + (scale !== 1 ? ' (normalised: ' + fmt(before) + ')' : '') +\n"
	"           '\\nchange: ' + (d >= 0 ? '+' : '-') + fmt(Math.abs(d)) +\n"
	"           (before > 0 ? ' (' + (d >= 0 ? '+' : '') + (100 * d / before).toFixed(1) + '%)' : ' (new)');\n"
	"    }\n"
	"    return t;\n"
	"  }\n"
	"\n"
	"  var zoomed = root, pattern = null;\n"
	"  /* what is drawn: rects (x, w in CSS pixels) in drawing order; rows[depth]\n"
	"   * the same sorted by x, for hit-testing */\n"
	"  var rects = [], rows = [], W = 0, lastMs = 0, mergedCount = 0, hovered = null;\n"
	"\n"
	"  function layout() {\n"
	"    rects = []; rows = []; mergedCount = 0;\n"
	"    for (var d = 0; d <= maxDepth; d++) rows.push([]);\n"
	"    function put(n, x, w, anc) {\n"
	"      var r = { node: n, x: x, w: w, depth: n.depth, anc: anc };\n"
	"      rects.push(r); rows[n.depth].push(r);\n"
	"    }\n"
	"    var anc = [];\n"
	"    for (var a = zoomed; a; a = a.parent) anc.unshift(a);\n"
	"    anc.forEach(function (a) { put(a, 0, W, a !== zoomed); });\n"
	"    var k = W / (zoomed.total || 1);\n"
	"    /* frames narrower than MINPX are not drawn one by one: a run of them\n"
	"     * among siblings is one merged rectangle, and their callees are not drawn */\n"
	"    (function draw(n, x) {\n"
	"      var run = null;\n"
	"      function flush() {\n"
	"        if (run && run.w >= MINPX / 2) { put(run.node, run.x, run.w, false); mergedCount++; }\n"
	"        run = null;\n"
	"      }\n"
	"      for (var i = 0; i < n.kids.length; i++) {\n"
	"        var c = n.kids[i], w = c.total * k;\n"
	"        if (w >= MINPX) {\n"
	"          flush();\n"
	"          put(c, x, w, false);\n"
	"          draw(c, x);\n"
	"        } else if (c.total > 0) {\n"
	"          if (!run) run = { x: x, w: 0, node: { merged: true, parent: n, depth: n.depth + 1, count: 0, total: 0,\n"
	"                                                match: false, name: '' } };\n"
	"          run.w += w; run.node.count++; run.node.total += c.total;\n"
	"          if (c.match) run.node.match = true;\n"
	"        }\n"
	"        x += w;\n"
	"      }\n"
	"      flush();\n"
	"    })(zoomed, 0);\n"
	"  }\n"
	"\n"
	"  function top(depth) { return (D.reverse ? depth : maxDepth - depth) * ROW; }\n"
	"\n"
	"  /* The rectangles are written into the pixels directly (one fill of a\n"
	"   * pixel row per rectangle, then each row of frames copied down to its\n"
	"   * height): no colour string is parsed per frame.  Labels on top. */\n"
	"  function paint() {\n"
	"    var H = (maxDepth + 1) * ROW, dpr = window.devicePixelRatio || 1;\n"
	"    var cw = Math.max(1, Math.round(W * dpr)), chh = Math.max(1, Math.round(H * dpr));\n"
	"    canvas.width = cw; canvas.height = chh;\n"
	"    canvas.style.width = W + 'px'; canvas.style.height = H + 'px';\n"
	"    var img = ctx.createImageData(cw, chh), px = new Uint32Array(img.data.buffer);\n"
	"    var bands = [];\n"
	"    for (var i = 0; i < rects.length; i++) {\n"
	"      var r = rects[i], n = r.node, c = n.match ? MATCH : n.merged ? GREY : color(n);\n"
	"      if (r.anc) c = [fade(c[0]), fade(c[1]), fade(c[2])];\n"
	"      var y0 = Math.round(top(r.depth) * dpr);\n"
	"      var x0 = Math.round(r.x * dpr), x1 = Math.round((r.x + (r.w >= 3 ? r.w - 1 : r.w)) * dpr);\n"
	"      if (x1 > cw) x1 = cw;\n"
	"      if (x1 <= x0) x1 = Math.min(cw, x0 + 1);\n"
	"      px.fill(pack(c), y0 * cw + x0, y0 * cw + x1);\n"
	"      bands[r.depth] = y0;\n"
	"    }\n"
	"    var bh = Math.round((ROW - 1) * dpr);\n"
	"    bands.forEach(function (y0) {\n"
	"      for (var y = 1; y < bh; y++) px.copyWithin((y0 + y) * cw, y0 * cw, (y0 + 1) * cw);\n"
	"    });\n"
	"    ctx.putImageData(img, 0, 0);\n"
	"    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);\n"
	"    ctx.font = '11px Verdana, Arial, sans-serif';\n"
	"    ctx.textBaseline = 'middle';\n"
	"    for (i = 0; i < rects.length; i++) {\n"
	"      r = rects[i]; n = r.node; r.text = '';\n"
	"      if (r.w < LABELPX || n.merged) continue;\n"
	"      var room = r.w - 7, s = n.name, tw = ctx.measureText(s).width;\n"
	"      if (tw > room) {\n"
	"        var k = Math.floor(s.length * room / tw) - 1;\n"
	"        while (k > 0 && ctx.measureText(s.slice(0, k) + '\\u2026').width > room) k--;\n"
	"        s = k > 0 ? s.slice(0, k) + '\\u2026' : '';\n"
	"      }\n"
	"      if (!s) continue;\n"
	"      ctx.fillStyle = n.match ? '#fff' : '#000';\n"
	"      ctx.globalAlpha = r.anc ? 0.6 : 1;\n"
	"      ctx.fillText(s, r.x + 3, top(r.depth) + (ROW - 1) / 2);\n"
	"      r.text = s;\n"
	"    }\n"
	"    ctx.globalAlpha = 1;\n"
	"  }\n"
	"\n"
	"  function render() {\n"
	"    var t0 = performance.now();\n"
	"    W = chart.clientWidth;\n"
	"    chart.style.height = ((maxDepth + 1) * ROW) + 'px';\n"
	"    hover.style.display = 'none'; tip.style.display = 'none'; hovered = null;\n"
	"    if (W > 0) { layout(); paint(); }\n"
	"    info.textContent = D.event + ': ' + fmt(grand) + ' in all' +\n"
	"      (zoomed !== root ? '; zoomed to ' + zoomed.name + ' (' + pct(zoomed.total) + ')' : '') +\n"
	"      '. Click a frame to zoom in.';\n"
	"    lastMs = performance.now() - t0;\n"
	"  }\n"
	"\n"
	"  function at(x, y) {\n"
	"    if (y < 0 || x < 0) return null;\n"
	"    var row = Math.floor(y / ROW), depth = D.reverse ? row : maxDepth - row;\n"
	"    var rs = rows[depth];\n"
	"    if (!rs || y - row * ROW >= ROW - 1) return null;\n"
	"    var lo = 0, hi = rs.length - 1, best = -1;\n"
	"    while (lo <= hi) {\n"
	"      var mid = (lo + hi) >> 1;\n"
	"      if (rs[mid].x <= x) { best = mid; lo = mid + 1; } else hi = mid - 1;\n"
	"    }\n"
	"    if (best < 0) return null;\n"
	"    var r = rs[best];\n"
	"    return x < r.x + Math.max(r.w, 1) ? r : null;\n"
	"  }\n"
	"\n"
	"  function zoomTo(n) { zoomed = n || root; render(); }\n"
	"\n"
	"  function search(term) {\n"
	"    var t0 = performance.now();\n"
	"    input.value = term || '';\n"
	"    pattern = null;\n"
	"    if (term) { try { pattern = { re: new RegExp(term) }; } catch (e) { pattern = { text: term }; } }\n"
	"    /* one test per distinct name, then one walk: a match inside a match is counted once */\n"
	"    var byName = new Array(names.length);\n"
	"    for (var i = 0; i < names.length; i++) {\n"
	"      byName[i] = !pattern ? false : pattern.re ? pattern.re.test(names[i]) : names[i].indexOf(pattern.text) >= 0;\n"
	"    }\n"
	"    var sum = 0, count = 0, skip = 0;\n"
	"    for (var k = 1; k < flat.length; k++) {\n"
	"      var n = flat[k];\n"
	"      n.match = byName[n.ni];\n"
	"      if (!n.match) continue;\n"
	"      count++;\n"
	"      if (k >= skip) { sum += n.total; skip = n.end; }\n"
	"    }\n"
	"    var res = null;\n"
	"    if (pattern) {\n"
	"      var p = pct(sum);\n"
	"      matched.textContent = 'Matched: ' + p + ' (' + fmt(sum) + ')';\n"
	"      res = { percent: p, weight: sum, frames: count };\n"
	"    } else {\n"
	"      matched.textContent = '';\n"
	"    }\n"
	"    render();\n"
	"    lastMs = performance.now() - t0;\n"
	"    return res;\n"
	"  }\n"
	"\n"
	"  function target(e) {\n"
	"    var b = canvas.getBoundingClientRect();\n"
	"    return at(e.clientX - b.left, e.clientY - b.top);\n"
	"  }\n"
	"  canvas.addEventListener('click', function (e) {\n"
	"    active = api;\n"
	"    var r = target(e);\n"
	"    if (!r) return;\n"
	"    var n = r.node;\n"
	"    if (n.merged) n = n.parent;\n"
	"    else if (n === zoomed) n = zoomed.parent || root;\n"
	"    zoomTo(n);\n"
	"  });\n"
	"  canvas.addEventListener('mousemove', function (e) {\n"
	"    active = api;\n"
	"    var r = target(e);\n"
	"    if (!r) { tip.style.display = 'none'; hover.style.display = 'none'; hovered = null; return; }\n"
	"    if (r !== hovered) {\n"
	"      hovered = r;\n"
	"      hover.style.left = r.x + 'px'; hover.style.width = Math.max(r.w, 1) + 'px';\n"
	"      hover.style.top = top(r.depth) + 'px'; hover.style.display = 'block';\n"
	"      tip.textContent = tipText(r.node);\n"
	"    }\n"
	"    tip.style.display = 'block';\n"
	"    var x = e.clientX + 12, y = e.clientY + 14;\n"
	"    if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, e.clientX - tip.offsetWidth - 12);\n"
	"    if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, e.clientY - tip.offsetHeight - 8);\n"
	"    tip.style.left = x + 'px'; tip.style.top = y + 'px';\n"
	"  });\n"
	"  canvas.addEventListener('mouseleave', function () {\n"
	"    tip.style.display = 'none'; hover.style.display = 'none'; hovered = null;\n"
	"  });\n"
	"  q('reset').addEventListener('click', function () { active = api; zoomTo(root); });\n"
	"  q('clear').addEventListener('click', function () { active = api; search(''); });\n"
	"  input.addEventListener('input', function () { active = api; search(input.value); });\n"
	"  if (D.diff) q('legend').textContent =\n"
	"    'Differential: widths from the second (after) recording; red grew, blue shrank, white unchanged' +\n"
	"    (scale !== 1 ? ' (the first recording is normalised to the same total, x' + scale.toFixed(3) + ')' : '') + '.';\n"
	"  /* drawn again when the chart's width changes (a window resize, or a\n"
	"   * hidden graph of a page shown) */\n"
	"  if (window.ResizeObserver) {\n"
	"    new ResizeObserver(function () { if (chart.clientWidth !== W) render(); }).observe(chart);\n"
	"  } else {\n"
	"    window.addEventListener('resize', render);\n"
	"  }\n"
	"  render();\n"
	"\n"
	"  var api = { id: box.id, element: box, root: root, data: D, nodes: nodes, zoomTo: zoomTo, search: search,\n"
	"    tipText: tipText, render: render, at: at,\n"
	"    frames: function () {\n"
	"      return rects.map(function (r) {\n"
	"        return { node: r.node, name: r.node.merged ? '' : r.node.name, text: r.text || '', total: r.node.total,\n"
	"          x: r.x, w: r.w, y: top(r.depth), h: ROW - 1, depth: r.depth, match: r.node.match,\n"
	"          merged: !!r.node.merged, ancestor: r.anc };\n"
	"      });\n"
	"    },\n"
	"    stats: function () { return { ms: lastMs, drawn: rects.length, merged: mergedCount, width: W, rows: maxDepth + 1 }; } };\n"
	"  return api;\n"
	"}\n"
	"\n"
	"var boxes = document.querySelectorAll('.rec-flame');\n"
	"window.recFlames = {};\n"
	"for (var i = 0; i < boxes.length; i++) {\n"
	"  var g = Flame(boxes[i]);\n"
	"  graphs.push(g);\n"
	"  if (g.id) window.recFlames[g.id] = g;\n"
	"}\n"
	"active = graphs[0] || null;\n"
	"window.recFlame = active;\n"
	"document.addEventListener('keydown', function (e) {\n"
	"  if (!active) return;\n"
	"  if (e.key === 'Escape') active.zoomTo(active.root);\n"
	"  if ((e.ctrlKey || e.metaKey) && e.key === 'f') {\n"
	"    e.preventDefault(); active.element.querySelector('.search').focus();\n"
	"  }\n"
	"});\n"
	"})();\n"
	"</script>\n";

void rec_flame_html_style(void)
{
	rec_out_write(flame_style, sizeof flame_style - 1);
}

void rec_flame_html_script(void)
{
	rec_out_write(flame_script, sizeof flame_script - 1);
}

void rec_out_html_text(const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': REC_OUT_LIT("&lt;"); break;
		case '>': REC_OUT_LIT("&gt;"); break;
		case '&': REC_OUT_LIT("&amp;"); break;
		case '"': REC_OUT_LIT("&quot;"); break;
		case '\'': REC_OUT_LIT("&#39;"); break;
		default: rec_out_char(*s);
		}
	}
}

void rec_out_js_string(const char *s)
{
	static const char hx[] = "0123456789abcdef";
	rec_out_char('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned char c = *p;
		if (c == '"' || c == '\\') {
			rec_out_char('\\');
			rec_out_char((char)c);
		} else if (c < 0x20 || c == 0x7F || c == '<' || c == '>' || c == '&') {
			char b[6] = { '\\', 'u', '0', '0', hx[c >> 4], hx[c & 15] };
			rec_out_write(b, 6);
		} else {
			rec_out_char((char)c);
		}
	}
	rec_out_char('"');
}

/* Name pointers (interned by the aggregation: equal names, equal pointers)
 * to indices in the graph's name table. */
typedef struct name_map {
	rec_cli_idmap index; /* name pointer -> index in order */
	const char **order;
	size_t count, cap;
} name_map;

static uint32_t name_index(name_map *m, const char *p)
{
	bool fresh;
	uint64_t *v = rec_cli_idmap_slot(&m->index, (uint64_t)(uintptr_t)p, &fresh);
	if (fresh) {
		if (m->count == m->cap) {
			m->cap = m->cap ? m->cap * 2 : 512;
			m->order = rec_cli_xrealloc(m->order, m->cap * sizeof *m->order);
		}
		*v = m->count;
		m->order[m->count++] = p;
	}
	return (uint32_t)*v;
}

static void out_tree_node_open(name_map *m, const char *name, uint64_t self, uint64_t before)
{
	rec_out_char('[');
	rec_out_u64(name_index(m, name));
	rec_out_char(',');
	rec_out_u64(self);
	rec_out_char(',');
	rec_out_u64(before);
}

/* The nested tree from the aggregation's stacks, which come in an order
 * where a stack's prefixes are shared with the one before. */
static rec_status out_tree(rec_stackagg *agg, const rec_flame_graph *g, name_map *m)
{
	unsigned col = g->diff ? 1 : 0;
	size_t cap = 64, depth = 0;
	const char **cur = rec_cli_xmalloc(cap * sizeof *cur);
	REC_OUT_LIT("[0,0,0");
	(void)name_index(m, "all"); /* index 0: the root */
	rec_stackagg_stack s;
	rec_status st;
	while ((st = rec_stackagg_next(agg, &s)) == REC_OK) {
		uint64_t t = s.total[0] > s.total[1] ? s.total[0] : s.total[1];
		if (t < g->min_weight)
			continue;
		size_t k = 0;
		while (k < depth && k < s.depth && cur[k] == s.frames[k])
			k++;
		for (size_t j = depth; j > k; j--)
			rec_out_char(']');
		if (s.depth > cap) {
			while (cap < s.depth)
				cap *= 2;
			cur = rec_cli_xrealloc(cur, cap * sizeof *cur);
		}
		for (size_t j = k; j < s.depth; j++) {
			bool last = j + 1 == s.depth;
			rec_out_char(',');
			if (j + 1 < s.depth)
				rec_out_char('\n');
			out_tree_node_open(m, s.frames[j], last ? s.weight[col] : 0,
					   last && g->diff ? s.weight[0] : 0);
			cur[j] = s.frames[j];
		}
		depth = s.depth;
	}
	for (size_t j = depth; j > 0; j--)
		rec_out_char(']');
	rec_out_char(']');
	free(cur);
	return st;
}

int rec_flame_html_graph(rec_stackagg *agg, const rec_flame_graph *g)
{
	const char *title = g->title ? g->title : "Flame graph";
	REC_OUT_LIT("<section class=\"rec-flame\" id=\"");
	rec_out_html_text(g->id ? g->id : "flame");
	REC_OUT_LIT("\">\n<div class=\"bar\">\n<h1 class=\"title\">");
	rec_out_html_text(title);
	REC_OUT_LIT("</h1>\n"
		    "<div class=\"row\">\n"
		    "<span class=\"info\"></span>\n"
		    "<input class=\"search\" type=\"search\" placeholder=\"Search (regex or text)\" "
		    "aria-label=\"Search frames\">\n"
		    "<button class=\"clear\" type=\"button\">Clear</button>\n"
		    "<button class=\"reset\" type=\"button\">Reset zoom</button>\n"
		    "<span class=\"matched\"></span>\n"
		    "</div>\n</div>\n"
		    "<div class=\"legend\"></div>\n"
		    "<div class=\"chart\"><canvas></canvas><div class=\"hover\"></div></div>\n"
		    "<div class=\"tip\"></div>\n"
		    "<script type=\"application/json\" class=\"rec-flame-data\">");

	rec_stackagg_stats stats;
	rec_stackagg_get_stats(agg, &stats);
	REC_OUT_LIT("{\"title\":");
	rec_out_js_string(title);
	REC_OUT_LIT(",\"event\":");
	rec_out_js_string(g->event ? g->event : "");
	REC_OUT_LIT(",\"unit\":");
	rec_out_js_string(g->unit ? g->unit : "count");
	REC_OUT_LIT(",\"reverse\":");
	rec_out_str(g->reverse ? "true" : "false");
	REC_OUT_LIT(",\"diff\":");
	rec_out_str(g->diff ? "true" : "false");
	REC_OUT_LIT(",\"total\":");
	rec_out_u64(stats.weight[g->diff ? 1 : 0]);
	REC_OUT_LIT(",\"totalBefore\":");
	rec_out_u64(g->diff ? stats.weight[0] : 0);
	REC_OUT_LIT(",\n\"tree\":");
	name_map m;
	memset(&m, 0, sizeof m);
	rec_status st = out_tree(agg, g, &m);
	REC_OUT_LIT(",\n\"names\":[");
	for (size_t i = 0; i < m.count; i++) {
		if (i)
			rec_out_str(i % 16 ? "," : ",\n");
		rec_out_js_string(m.order[i]);
	}
	/* where each name is in the source: "file.c" or, for a name of one
	 * line (rec-flame --lines), "file.c:214"; "" if unknown */
	REC_OUT_LIT("],\n\"where\":[");
	for (size_t i = 0; i < m.count; i++) {
		rec_stackagg_frame_info fi;
		char w[4200] = "";
		if (rec_stackagg_name_info(agg, m.order[i], &fi) == REC_OK &&
		    fi.kind == REC_STACKAGG_NAME_FRAME && fi.file[0]) {
			const char *b = strrchr(fi.file, '/');
			b = b ? b + 1 : fi.file;
			size_t fl = strlen(fi.function), nl = strlen(m.order[i]);
			bool one_line = fi.line && nl > fl && m.order[i][fl] == ':';
			if (one_line)
				snprintf(w, sizeof w, "%s:%u", b, fi.line);
			else
				snprintf(w, sizeof w, "%s", b);
		}
		if (i)
			rec_out_str(i % 16 ? "," : ",\n");
		rec_out_js_string(w);
	}
	REC_OUT_LIT("]}</script>\n</section>\n");
	rec_cli_idmap_free(&m.index);
	free(m.order);
	return st == REC_END ? REC_EXIT_OK : REC_EXIT_DATA;
}

void rec_flame_html_page_begin(const char *title)
{
	REC_OUT_LIT("<!DOCTYPE html>\n"
		    "<html lang=\"en\">\n"
		    "<head>\n"
		    "<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		    "<title>");
	rec_out_html_text(title);
	REC_OUT_LIT("</title>\n"
		    "<style>body { margin: 0; background: #fff; }</style>\n");
	rec_flame_html_style();
	REC_OUT_LIT("</head>\n<body>\n");
}

void rec_flame_html_page_end(void)
{
	rec_flame_html_script();
	REC_OUT_LIT("</body>\n</html>\n");
}
