// Loads rec-report's HTML pages in headless Chromium (tests/cli/lib/cdp.js)
// and checks what they render against what the other tools say of the same
// recording (tests/cli/report_browser.sh writes them into DIR):
//   node browser_check.js CHROMIUM DIR
// DIR: demo.html (rec-report --by path -o on the demo scenario), demo.json
// (rec-report --by path --json), truth.json (rec-view latency --by path
// --json's rows, rec-summary's counts per type, rec-flame's totals),
// names.html (rec_test_report_names: hostile strings), big.html
// (rec_test_flame_big: 221,000 CPU samples, more than the timeline embeds).  Writes report.png,
// report-latency.png, report-timeline.png, report-graph.png, report-zoomed.png, report-flames.png, big-timeline.png, names.png.
// Exits 0 when every check passed, 1 otherwise (each failure printed).
'use strict';
const fs = require('fs');
const path = require('path');

const [chromium, dir] = process.argv.slice(2);
if (!chromium || !dir) {
	console.error('usage: node browser_check.js CHROMIUM DIR');
	process.exit(2);
}
const { send, check, openPage, evaluate, screenshot, run } =
	require(path.join(__dirname, '..', 'lib', 'cdp.js')).launch(chromium, dir, 'report-chromium-');
const json = (f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));

// a section's box in page coordinates, for clipped screenshots and mice
const BOX = (sel) => `(() => { const r = document.querySelector(${JSON.stringify(sel)}).getBoundingClientRect();
	return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height,
		vx: r.left, vy: r.top }; })()`;

async function mouse(s, type, x, y, extra) {
	await send('Input.dispatchMouseEvent', Object.assign({ type, x, y }, extra || {}), s);
}

async function main() {
	const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
	const { sessionId: s } = await send('Target.attachToTarget', { targetId, flatten: true });
	await send('Page.enable', {}, s);
	await send('Runtime.enable', {}, s);
	await send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false }, s);

	// ---- the demo recording's page
	const rep = json('demo.json'), truth = json('truth.json');
	await openPage(s, 'demo.html');
	check(await evaluate(s, 'document.body.dataset.ready'), 'demo: the scripts ran (body data-ready)');
	await screenshot(s, 'report.png');

	// findings: the same, in the same order, with the same facts as --json
	const F = await evaluate(s, `[...document.querySelectorAll('#findings .rr-finding')].map((a) => ({
		rule: a.dataset.rule, severity: a.dataset.severity, subject: a.dataset.subject,
		summary: a.querySelector('.rr-summary').textContent,
		facts: [...a.querySelectorAll('.rr-facts tr')].map((r) => ({ key: r.dataset.key, value: r.dataset.value })) }))`);
	check(F.length === rep.findings.length && F.length > 0, 'demo: ' + F.length + ' findings rendered, as --json', { page: F.length, json: rep.findings.length });
	let same = true, bad = null;
	rep.findings.forEach((x, i) => {
		const p = F[i];
		if (!p || p.rule !== x.rule || p.severity !== x.severity || p.subject !== x.subject || p.summary !== x.summary ||
		    p.facts.length !== x.facts.length) { same = false; bad = bad || { i, p, x }; return; }
		x.facts.forEach((f, k) => {
			const v = p.facts[k];
			const ok = v.key === f.key && (typeof f.value === 'number'
				? Math.abs(Number(v.value) - f.value) <= Math.abs(f.value) * 1e-12 : v.value === String(f.value));
			if (!ok) { same = false; bad = bad || { i, page: v, json: f }; }
		});
	});
	check(same, 'demo: every finding\'s rule, severity, subject, summary and facts equal --json\'s', bad);
	const lock = F.find((f) => f.rule === 'lock-held-while-blocked');
	check(lock && lock.subject === 'quote-cache-lock' && lock.facts.some((f) => f.key === 'holder_site' || f.value === 'serve_blocking'),
		'demo: lock-held-while-blocked names quote-cache-lock and serve_blocking', lock);
	const firstSection = await evaluate(s, `document.querySelector('main > section').id`);
	check(firstSection === 'findings', 'demo: the findings come first', firstSection);

	// latency: a card per path with rec-view latency's numbers; the bars hold every span
	const L = await evaluate(s, `[...document.querySelectorAll('#latency .rr-lat-card')].map((c) => Object.assign({}, c.dataset,
		{ bars: c.querySelectorAll('rect.bar').length }))`);
	const rows = truth.latency.filter((r) => !r.type.startsWith('rec.'));
	check(L.length === rows.length && L.length === 4, 'demo: ' + L.length + ' latency cards (app.Request by path)', { page: L.length, view: rows.length });
	let latOk = true, latBad = null;
	rows.forEach((r) => {
		const c = L.find((x) => x.type === r.type && x.by === r.by);
		const ok = c && ['count', 'mean', 'p50', 'p90', 'p99', 'max', 'total'].every((k) => Number(c[k]) === r[k]) &&
			Number(c.binned) === r.count && c.bars > 0;
		if (!ok) { latOk = false; latBad = latBad || { view: r, page: c }; }
	});
	await screenshot(s, 'report-latency.png', await evaluate(s, BOX('#latency')));
	check(latOk, 'demo: each card\'s count, mean, p50, p90, p99, max, total = rec-view latency --by path; its bars hold count spans', latBad);

	// timeline: the lanes and items, reconciled with rec-summary's counts
	let T = await evaluate(s, `(() => { const d = document.getElementById('timeline').dataset, t = window.recReport.data.timeline;
		return { lanes: +d.lanes, items: +d.items, drawn: +d.drawn, view: d.view, leftOut: +d.leftOut,
			names: t.lanes.map((l) => l[0]), seen: t.seen, kept: t.kept, end: t.end }; })()`);
	const count = (ty) => truth.counts[ty] || 0;
	const start = await evaluate(s, 'window.recReport.data.timeline.start');
	check(start === truth.firstNs, 'demo: the timeline starts at rec-summary\'s first event (' + start + ' ns)', { start, summary: truth.firstNs });
	check(T.seen[0] === count('app.Request') && T.seen[1] === count('rec.LockWait') && T.seen[2] === count('rec.Sleep') &&
		T.seen[3] === count('rec.CondWait') && T.seen[5] === count('rec.CPUSample'),
		'demo: timeline items per kind = rec-summary (spans ' + T.seen[0] + ', lock waits ' + T.seen[1] + ', sleeps ' + T.seen[2] + ')',
		{ seen: T.seen, counts: truth.counts });
	check(T.leftOut === 0 && T.items === T.seen.reduce((a, b) => a + b, 0), 'demo: nothing left out of the timeline', T);
	const conns = T.names.filter((n) => /^conn-\d+$/.test(n));
	check(T.lanes >= 9 && conns.length >= 9, 'demo: a lane per thread (' + T.lanes + ' lanes, ' + conns.length + ' conn-N)', T.names);
	check(T.drawn === T.items, 'demo: zoomed out, every item is drawn (' + T.drawn + ')', T);
	await screenshot(s, 'report-timeline.png', await evaluate(s, BOX('#timeline')));

	// zoom: the Zoom in button, then the wheel at the canvas; pan by dragging
	await evaluate(s, `document.querySelector('#timeline .rr-zin').click()`);
	let v = (await evaluate(s, `document.getElementById('timeline').dataset.view`)).split(',').map(Number);
	check(Math.abs((v[1] - v[0]) - T.end / 2) <= T.end * 0.01, 'demo: Zoom in halves the view', { view: v, end: T.end });
	// the longest lock wait: put it in view, hover it, the tooltip names lock and holder
	const W = await evaluate(s, `(() => { const t = window.recReport.data.timeline, it = t.items; let b = -1;
		for (let i = 0; i < it.length; i += 6) if (it[i + 1] === 1 && (b < 0 || it[i + 3] > it[b + 3])) b = i;
		return { lane: t.lanes[it[b]][0], start: it[b + 2], dur: it[b + 3], label: t.labels[it[b + 4]], holder: it[b + 5],
			holderName: (t.lanes.find((l) => l[1] === it[b + 5]) || [''])[0] }; })()`);
	await evaluate(s, `window.recReport.timeline.setView(${W.start - W.dur * 0.1}, ${W.start + W.dur * 1.1})`);
	const before = (await evaluate(s, `document.getElementById('timeline').dataset.view`)).split(',').map(Number);
	const box = await evaluate(s, `(() => { document.getElementById('timeline').scrollIntoView(); return ${BOX('#timeline canvas')}; })()`);
	const G = await evaluate(s, 'window.recReport.timeline.geometry');
	const row = await evaluate(s, `window.recReport.timeline.laneRow(${JSON.stringify(W.lane)})`);
	const mx = box.vx + G.labelWidth + (box.width - G.labelWidth) * 0.5, my = box.vy + G.axis + row * G.lane + 16;
	await mouse(s, 'mouseMoved', mx, my);
	const tipText = await evaluate(s, `(() => { const t = document.querySelector('.rr-tip'); return t.style.display === 'block' ? t.textContent : ''; })()`);
	check(tipText.includes('lock wait: ' + W.label) && W.label === 'quote-cache-lock' && W.holderName &&
		tipText.includes('held by ' + W.holderName), 'demo: hovering the longest lock wait shows its lock and holder', { tipText, W });
	// the hand-offs: each wait's parts add up to it; per holder they are rec-lockgraph's held_total_ns
	const H = await evaluate(s, `(() => { const t = window.recReport.data.timeline, P = t.parts, held = {}, sum = {};
		for (let i = 0; i < P.length; i += 4) { held[P[i + 1]] = (held[P[i + 1]] || 0) + P[i + 3] - P[i + 2];
			sum[P[i]] = (sum[P[i]] || 0) + P[i + 3] - P[i + 2]; }
		const whole = Object.keys(sum).every((k) => sum[k] === t.items[k * 6 + 3]);
		return { held, whole, waits: Object.keys(sum).length }; })()`);
	const heldOk = Object.keys(truth.held).every((tid) => (H.held[tid] || 0) === truth.held[tid]) &&
		Object.keys(H.held).every((tid) => H.held[tid] === (truth.held[tid] || 0));
	check(H.whole && H.waits === truth.counts['rec.LockWait'] && heldOk,
		'demo: the lock waits\' parts add up to each wait, and per holder to rec-lockgraph\'s held_total_ns', { H, lockgraph: truth.held });
	check(tipText.includes('held during the wait by '), 'demo: the tooltip says who held the lock during the wait (hand-offs)', tipText);
	await screenshot(s, 'report-zoomed.png', await evaluate(s, BOX('#timeline')));
	// the wheel at the mouse zooms in around it
	await send('Input.dispatchMouseEvent', { type: 'mouseWheel', x: mx, y: my, deltaX: 0, deltaY: -300 }, s);
	await new Promise((r) => setTimeout(r, 200));
	v = (await evaluate(s, `document.getElementById('timeline').dataset.view`)).split(',').map(Number);
	check(v[1] - v[0] < before[1] - before[0] && v[0] > before[0] && v[1] < before[1], 'demo: the wheel zooms in around the mouse', { before, v });
	// dragging to the left moves the view later in time
	const d0 = v;
	await mouse(s, 'mousePressed', mx, my, { button: 'left', clickCount: 1 });
	await mouse(s, 'mouseMoved', mx - 200, my, { button: 'left' });
	await mouse(s, 'mouseReleased', mx - 200, my, { button: 'left', clickCount: 1 });
	v = (await evaluate(s, `document.getElementById('timeline').dataset.view`)).split(',').map(Number);
	check(v[0] > d0[0] && Math.abs((v[1] - v[0]) - (d0[1] - d0[0])) < 2, 'demo: dragging pans the view', { d0, v });
	const drawnZoomed = await evaluate(s, `+document.getElementById('timeline').dataset.drawn`);
	check(drawnZoomed < T.items, 'demo: zoomed in, only what is visible is drawn (' + drawnZoomed + ' of ' + T.items + ')');
	await evaluate(s, `document.querySelector('#timeline .rr-zreset').click()`);
	v = (await evaluate(s, `document.getElementById('timeline').dataset.view`)).split(',').map(Number);
	check(v[0] === 0 && v[1] === Math.max(T.end, 1000), 'demo: Reset shows the whole recording', v);

	// the wait-for graph: Graphviz's SVG, inline
	const gsvg = await evaluate(s, `(() => { const g = document.querySelector('#waitgraph svg');
		return g ? { nodes: g.querySelectorAll('g.node').length, text: g.textContent } : null; })()`);
	check(gsvg && gsvg.nodes >= 2 && gsvg.text.includes('quote-cache-lock') && gsvg.text.includes('conn-'),
		'demo: the wait-for graph (Graphviz SVG) shows quote-cache-lock and conn threads', gsvg && gsvg.nodes);
	await screenshot(s, 'report-graph.png', await evaluate(s, BOX('#waitgraph')));

	// flame graphs: switched by tabs; each total = rec-flame's
	const tabs = await evaluate(s, `[...document.querySelectorAll('#flames .rr-tabs button')].map((b) => ({ id: b.dataset.flame, disabled: b.disabled }))`);
	const expect = { 'flame-cpu': truth.flame.cpu, 'flame-alloc': truth.flame.alloc, 'flame-lock': truth.flame.lock, 'flame-wall': truth.flame.wall };
	check(tabs.length === 4 && tabs.every((t) => t.disabled === !expect[t.id]), 'demo: a tab per flame graph, disabled when empty', { tabs, expect });
	for (const t of tabs.filter((x) => !x.disabled)) {
		const b = await evaluate(s, `(() => { const b = document.querySelector('#flames button[data-flame="${t.id}"]');
			b.scrollIntoView(); const r = b.getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`);
		await mouse(s, 'mousePressed', b.x, b.y, { button: 'left', clickCount: 1 });
		await mouse(s, 'mouseReleased', b.x, b.y, { button: 'left', clickCount: 1 });
		await new Promise((r) => setTimeout(r, 100));
		const st = await evaluate(s, `(() => { const d = document.getElementById('flames').dataset;
			const shown = [...document.querySelectorAll('#flames .rec-flame')].filter((e) => e.offsetWidth > 0).map((e) => e.id);
			const g = window.recFlames[d.active]; return { active: d.active, total: +d.activeTotal, shown, drawn: g.stats().drawn }; })()`);
		check(st.active === t.id && st.shown.length === 1 && st.shown[0] === t.id && st.drawn > 1 && st.total === expect[t.id],
			'demo: the ' + t.id + ' tab shows that graph alone, drawn, total ' + st.total + ' = rec-flame\'s', { st, want: expect[t.id] });
		if (t.id === 'flame-lock')
			await screenshot(s, 'report-flames.png', await evaluate(s, BOX('#flames')));
	}

	// ---- a long recording: the timeline embeds 200,000 items and says what it left out
	await openPage(s, 'big.html');
	const B = await evaluate(s, `(() => { const d = document.getElementById('timeline').dataset;
		const t0 = performance.now(); window.recReport.timeline.zoom(1); const full = performance.now() - t0;
		const t1 = performance.now(); window.recReport.timeline.zoom(8); const zoomed = performance.now() - t1;
		return { items: +d.items, leftOut: +d.leftOut, note: document.querySelector('.rr-tl-note').textContent,
			drawnZoomed: +d.drawn, full, zoomed, seen: window.recReport.data.timeline.seen[5] }; })()`);
	console.log('     big: 200,000 items drawn in ' + B.full.toFixed(1) + ' ms; zoomed x8: ' + B.drawnZoomed + ' drawn in ' + B.zoomed.toFixed(1) + ' ms');
	check(B.seen === truth.bigSamples && B.items === 200000 && B.leftOut === truth.bigSamples - 200000,
		'big: ' + B.items + ' of ' + B.seen + ' CPU samples embedded, ' + B.leftOut + ' left out', B);
	check(B.note.includes('at most 200,000 items') && B.note.includes(' ' + (truth.bigSamples - 200000).toLocaleString('en-US') + ' CPU samples'),
		'big: the page says what was left out', B.note);
	check(B.full < 1000 && B.zoomed < 1000 && B.drawnZoomed < 200000, 'big: drawing all or a zoomed part takes under a second', B);
	await evaluate(s, `document.querySelector('#timeline .rr-zreset').click()`);
	await screenshot(s, 'big-timeline.png', await evaluate(s, BOX('#timeline')));

	// ---- hostile strings: shown as text, never run
	await openPage(s, 'names.html');
	const N = await evaluate(s, `(() => ({ ready: document.body.dataset.ready, pwned: window.__pwned === undefined ? null : window.__pwned,
		imgs: document.images.length, scripts: document.scripts.length, graphs: document.querySelectorAll('.rec-flame').length,
		findings: document.getElementById('findings').textContent,
		lanes: window.recReport.data.timeline.lanes.map((l) => l[0]),
		graph: (document.querySelector('#waitgraph svg') || { textContent: '' }).textContent }))()`);
	await new Promise((r) => setTimeout(r, 300)); // an onerror would have fired by now
	const pwned = await evaluate(s, 'window.__pwned === undefined ? null : window.__pwned');
	const LOCK = "</script><img src=x onerror=\"window.__pwned='lock'\">";
	check(N.ready && pwned === null && N.imgs === 0, 'names: nothing of the recording ran (no window.__pwned, no <img>)', { pwned, imgs: N.imgs });
	check(N.scripts === 3 + N.graphs, 'names: only the page\'s own scripts (data, flame, report, one per flame graph: ' + N.scripts + ')', N);
	check(N.findings.includes(LOCK), 'names: the lock\'s name is shown as text in the findings');
	check(N.lanes.includes('</script><b>'), 'names: the thread "</script><b>" has its lane, named as it is', N.lanes);
	check(N.graph.includes("</script><img src=x onerror="), 'names: the wait-for graph shows the lock\'s name as text');
	await screenshot(s, 'names.png');
}

run(main, 150000);
