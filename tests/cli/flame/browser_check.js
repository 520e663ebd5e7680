// Drives headless Chromium over --remote-debugging-pipe (Chrome DevTools
// Protocol, NUL-separated JSON on fds 3 and 4; node's standard library only)
// to check pages written by rec-flame --format html:
//   node browser_check.js CHROMIUM DIR
// DIR holds cpu.html (before.rec of rec_test_flame_gen), diff.html (--diff
// before after), alloc.html, lock.html (rec.Alloc, rec.LockWait) and
// receives cpu.png, diff.png (screenshots).  Exits 0 when every check
// passed, 1 otherwise (each failure printed).
'use strict';
const path = require('path');

const [chromium, dir] = process.argv.slice(2);
if (!chromium || !dir) {
	console.error('usage: node browser_check.js CHROMIUM DIR');
	process.exit(2);
}
const { send, check, openPage, evaluate, screenshot, run } =
	require(path.join(__dirname, '..', 'lib', 'cdp.js')).launch(chromium, dir, 'flame-chromium-');

// What the page shows: every drawn rectangle of the first graph with its
// geometry (CSS pixels of the chart) and the colour its canvas holds at a
// point inside it (left edge, before the label), read back from the pixels.
const FRAMES = `(() => {
	const g = window.recFlame, canvas = g.element.querySelector('canvas');
	const chart = g.element.querySelector('.chart').getBoundingClientRect();
	const ctx = canvas.getContext('2d'), dpr = canvas.width / canvas.getBoundingClientRect().width;
	return { chartWidth: chart.width, left: chart.left, top: chart.top,
		domFrames: g.element.querySelectorAll('.chart *').length, stats: g.stats(),
		frames: g.frames().map((f) => {
			let bg = null;
			if (f.w >= 4) {
				const p = ctx.getImageData(Math.floor((f.x + 1) * dpr), Math.floor((f.y + 2) * dpr), 1, 1).data;
				bg = 'rgb(' + p[0] + ', ' + p[1] + ', ' + p[2] + ')';
			}
			return { name: f.name, text: f.text, total: f.total, x: f.x, w: f.w, y: f.y, match: f.match, bg,
				depth: f.depth, merged: f.merged,
				path: (() => { const p = []; for (let n = f.node; n && n.parent; n = n.parent) p.unshift(n.name); return p.join(';'); })() };
		}) };
})()`;
// A real mouse event (CDP Input) at the middle-left of a drawn frame.
async function mouse(session, view, f, type) {
	const x = view.left + f.x + Math.min(5, f.w / 2), y = view.top + f.y + 5;
	if (type === 'click') {
		await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y }, session);
		await send('Input.dispatchMouseEvent', { type: 'mousePressed', x, y, button: 'left', clickCount: 1 }, session);
		await send('Input.dispatchMouseEvent', { type: 'mouseReleased', x, y, button: 'left', clickCount: 1 }, session);
	} else {
		await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y }, session);
	}
}
const TIP = `(() => { const t = window.recFlame.element.querySelector('.tip');
	return { text: t.textContent, shown: getComputedStyle(t).display !== 'none' }; })()`;

function byPath(view, p) { return view.frames.find((f) => f.path === p); }
function near(a, b, tol) { return Math.abs(a - b) <= (tol || 1.5); }

async function main() {
	await send('Target.setDiscoverTargets', { discover: true });
	const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
	const { sessionId: s } = await send('Target.attachToTarget', { targetId, flatten: true });
	await send('Page.enable', {}, s);
	await send('Runtime.enable', {}, s);
	await send('Emulation.setDeviceMetricsOverride',
		{ width: 1200, height: 700, deviceScaleFactor: 1, mobile: false }, s);

	// ---- the CPU flame graph of before.rec: 100 samples
	await openPage(s, 'cpu.html');
	let v = await evaluate(s, FRAMES);
	const W = v.chartWidth;
	check(W > 500, 'chart is laid out', W);
	// stack path -> share of the 100 samples (frame totals)
	const want = {
		'main': 95, 'main;run_loop': 85, 'main;run_loop;handle_request': 60,
		'main;run_loop;handle_request;compute_hash': 40, 'main;run_loop;handle_request;parse_json': 20,
		'main;run_loop;__poll': 25, 'main;odd:name': 5, 'main;libapp.so+0x1234': 5,
		'main;libapp.so+0x1234;line break': 5, '[truncated]': 5, '[truncated];handle_request': 5,
		'[truncated];handle_request;compute_hash': 5,
	};
	check(v.frames.length === Object.keys(want).length + 1, 'one frame per node (and the root)',
		v.frames.map((f) => f.path));
	for (const [p, pct] of Object.entries(want)) {
		const f = byPath(v, p);
		check(f && f.total === pct && near(f.w, W * pct / 100), 'frame ' + p + ' is ' + pct + '% wide',
			f && { total: f.total, w: f.w, want: W * pct / 100 });
	}
	const rootF = v.frames.find((f) => f.depth === 0);
	check(rootF && near(rootF.w, W) && rootF.name === 'all', 'root frame spans the chart', rootF);
	// flame orientation: children above their parent
	const m = byPath(v, 'main'), rl = byPath(v, 'main;run_loop');
	check(m && rl && rl.y < m.y, 'children are drawn above their parent (flame graph)', { m: m && m.y, rl: rl && rl.y });
	const ch = byPath(v, 'main;run_loop;handle_request;compute_hash');
	check(ch && ch.text === 'compute_hash', 'wide frames show their name', ch && ch.text);
	// siblings in name order, left to right, inside the parent
	const hr = byPath(v, 'main;run_loop;handle_request'), pj = byPath(v, 'main;run_loop;handle_request;parse_json');
	check(hr && ch && pj && near(ch.x, hr.x) && near(pj.x, ch.x + ch.w) && pj.x + pj.w <= hr.x + hr.w + 1.5,
		'children laid out inside their parent', { hr, ch, pj });

	// tooltip on hover: name, weight with unit, percentage
	await mouse(s, v, byPath(v, 'main;run_loop;handle_request;parse_json'), 'move');
	const tip = await evaluate(s, TIP);
	check(tip.shown && /parse_json/.test(tip.text) && /20 samples/.test(tip.text) && /\(20\.00%\)/.test(tip.text),
		'tooltip shows name, samples and percent', tip);

	// search (as typed in the box): regex, highlight, matched percentage
	const typeSearch = (term) => evaluate(s, `(() => {
		const i = window.recFlame.element.querySelector('.search');
		i.value = ${JSON.stringify(term)};
		i.dispatchEvent(new Event('input', { bubbles: true }));
		return window.recFlame.element.querySelector('.matched').textContent;
	})()`);
	let txt = await typeSearch('hash');
	v = await evaluate(s, FRAMES);
	let hl = v.frames.filter((f) => f.match).map((f) => f.path).sort();
	check(JSON.stringify(hl) === JSON.stringify(['[truncated];handle_request;compute_hash',
		'main;run_loop;handle_request;compute_hash']), 'search "hash" highlights both compute_hash frames', hl);
	check(/Matched: 45\.00%/.test(txt), 'search "hash" shows 45.00%', txt);
	const hlColor = v.frames.find((f) => f.match).bg;
	check(hlColor === 'rgb(230, 0, 230)', 'matches are highlighted in magenta', hlColor);
	txt = await typeSearch('^(__poll|parse_json)$');
	v = await evaluate(s, FRAMES);
	hl = v.frames.filter((f) => f.match).map((f) => f.name).sort();
	check(JSON.stringify(hl) === '["__poll","parse_json"]' && /Matched: 45\.00%/.test(txt), 'regex search', { hl, txt });
	// a nested match is not counted twice: handle_request (60) contains compute_hash
	txt = await typeSearch('handle|hash');
	check(/Matched: 65\.00%/.test(txt), 'nested matches counted once (65.00%)', txt);
	// an invalid regex is searched as text
	txt = await typeSearch('odd:name(');
	check(/Matched: 0\.00%/.test(txt), 'invalid regex taken as a substring', txt);
	txt = await typeSearch('');
	v = await evaluate(s, FRAMES);
	check(txt === '' && !v.frames.some((f) => f.match), 'clearing the search removes highlights', txt);

	// click zooms: handle_request fills the width, compute_hash 40/60 of it
	await mouse(s, v, byPath(v, 'main;run_loop;handle_request'), 'click');
	v = await evaluate(s, FRAMES);
	const zh = byPath(v, 'main;run_loop;handle_request'), zc = byPath(v, 'main;run_loop;handle_request;compute_hash');
	check(zh && near(zh.w, W) && zc && near(zc.w, W * 40 / 60), 'click zooms into the frame', { zh, zc });
	check(!byPath(v, 'main;run_loop;__poll'), 'frames outside the zoomed one are hidden');
	// search while zoomed: the percentage is of the whole graph
	txt = await typeSearch('parse');
	check(/Matched: 20\.00%/.test(txt), 'matched percent is of the whole graph when zoomed', txt);
	await typeSearch('');
	await evaluate(s, `window.recFlame.element.querySelector('.reset').click()`);
	v = await evaluate(s, FRAMES);
	check(byPath(v, 'main;run_loop;__poll') && near(byPath(v, 'main').w, W * 0.95), 'reset zoom shows everything');
	await screenshot(s, 'cpu.png');

	// ---- differential: widths from AFTER (125 samples), red grew, blue shrank
	await openPage(s, 'diff.html');
	v = await evaluate(s, FRAMES);
	const dpoll = byPath(v, 'main;run_loop;__poll'), dhash = byPath(v, 'main;run_loop;handle_request;compute_hash');
	check(dpoll && near(dpoll.w, W * 15 / 125), 'diff: widths are the after weights', dpoll);
	const rgb = (c) => (c || '').match(/\d+/g).map(Number);
	const [pr, pg, pb] = rgb(dpoll && dpoll.bg), [hr2, hg, hb] = rgb(dhash && dhash.bg);
	check(pb === 255 && pr < 255 && pr === pg, 'diff: __poll shrank (25 -> 15 of 125 normalised 31.25): blue', dpoll && dpoll.bg);
	check(hr2 === 255 && hg < 255 && hg === hb, 'diff: compute_hash grew (40 -> 80): red', dhash && dhash.bg);
	await mouse(s, v, dpoll, 'move');
	const dtip = (await evaluate(s, TIP)).text;
	check(/before: 25 samples \(normalised: 31 samples\)/.test(dtip) && /change: -16 samples/.test(dtip),
		'diff tooltip: before, normalised, change', dtip);
	const legend = await evaluate(s, `window.recFlame.element.querySelector('.legend').textContent`);
	check(/normalised/.test(legend) && /x1\.250/.test(legend), 'diff legend tells the normalisation', legend);
	const esc = byPath(v, 'main;render</script><b>x');
	check(esc && esc.name === 'render</script><b>x' && esc.text && 'render</script><b>x'.startsWith(esc.text.replace(/\u2026$/, '')),
		'a frame named render</script><b>x is shown as text (its label cut to its width)', esc);
	await screenshot(s, 'diff.png');

	// ---- units: bytes as MiB, time as ms
	await openPage(s, 'alloc.html');
	let t = await evaluate(s, `window.recFlame.tipText(window.recFlame.frames().find((f) => f.name === 'compute_hash').node)`);
	check(/3\.00 MiB/.test(t) && /\(75\.00%\)/.test(t), 'allocation tooltip in MiB', t);
	await openPage(s, 'lock.html');
	t = await evaluate(s, `window.recFlame.tipText(window.recFlame.frames().find((f) => f.name === 'parse_json').node)`);
	check(/10\.000 ms/.test(t) && /\(50\.00%\)/.test(t), 'lock wait tooltip in ms', t);

	// ---- icicle (reverse): children below their parent
	await openPage(s, 'reverse.html');
	v = await evaluate(s, FRAMES);
	const ip = byPath(v, '__poll'), ipc = byPath(v, '__poll;run_loop');
	check(ip && ipc && ipc.y > ip.y && near(ip.w, W * 0.25), 'reverse: icicle, callers below', { ip, ipc });

	// ---- at scale: big.html of rec_test_flame_big (900 chains of 32
	// distinct frames, 20 samples each, and 1000 one-sample leaves under
	// fanout: 29,802 frames, 19,000 samples).  Drawn: only what is visible;
	// search and zoom timed in the page (the handler, and until the next
	// frame is painted), bounded generously (the host is shared).
	await openPage(s, 'big.html');
	const BIG = `(() => {
		const g = window.recFlame, fr = g.frames(), st = g.stats(), rows = {};
		let thin = 0;
		for (const f of fr) { rows[f.depth] = (rows[f.depth] || 0) + 1; if (!f.merged && f.w < 1) thin++; }
		return { nodes: g.nodes, st, thin, maxRow: Math.max(...Object.values(rows)), merged: fr.filter((f) => f.merged).length,
			dom: document.querySelectorAll('*').length, chartDom: g.element.querySelectorAll('.chart *').length,
			width: g.element.querySelector('.chart').clientWidth };
	})()`;
	let b = await evaluate(s, BIG);
	check(b.nodes === 29803, 'big: the page holds all 29,802 frames (and the root)', b.nodes);
	check(b.chartDom <= 2 && b.dom < 60, 'big: the chart is one canvas, not an element per frame', { chart: b.chartDom, page: b.dom });
	check(b.maxRow <= b.width && b.thin === 0, 'big: at most one rectangle per pixel of width and row, none narrower than a pixel',
		{ maxRow: b.maxRow, width: b.width, thin: b.thin });
	check(b.st.drawn <= b.width * b.st.rows, 'big: drawn rectangles bounded by width x rows', b.st);
	check(b.merged === 1, 'big: the 1000 sub-pixel leaves under fanout are one merged rectangle', b.merged);
	const timed = (js) => evaluate(s, `new Promise((resolve) => {
		const t0 = performance.now();
		const r = (${js})();
		const t1 = performance.now();
		requestAnimationFrame(() => setTimeout(() => resolve({ r, handler: t1 - t0, painted: performance.now() - t0 }), 0));
	})`);
	const ms = (x) => x.toFixed(1) + ' ms';
	let tm = await timed(`() => { const i = window.recFlame.element.querySelector('.search');
		i.value = '^deep_[0-9]+_07$'; i.dispatchEvent(new Event('input', { bubbles: true }));
		return window.recFlame.element.querySelector('.matched').textContent; }`);
	console.log('     big: search keystroke: ' + ms(tm.handler) + ' in the handler, ' + ms(tm.painted) + ' to the next frame');
	check(/Matched: 94\.74% \(18,000 samples\)/.test(tm.r), 'big: search matches 900 frames of 18,000 samples (94.74%)', tm.r);
	check(tm.handler < 1000 && tm.painted < 1500, 'big: search within 1 s', tm);
	b = await evaluate(s, BIG);
	check(b.st.drawn <= b.width * b.st.rows && b.thin === 0, 'big: still bounded after the search', b.st);
	tm = await timed(`() => window.recFlame.search('leaf_')`);
	console.log('     big: search (API): ' + ms(tm.handler) + ', painted ' + ms(tm.painted));
	check(tm.r && tm.r.percent === '5.26%' && tm.r.frames === 1000, 'big: "leaf_" matches 1000 frames, 5.26%', tm.r);
	v = await evaluate(s, FRAMES);
	const mg = v.frames.find((f) => f.merged);
	check(mg && mg.match && mg.bg === 'rgb(230, 0, 230)', 'big: the merged rectangle of matching leaves is highlighted', mg);
	await mouse(s, v, mg, 'move');
	let bt = await evaluate(s, TIP);
	check(bt.shown && /^1000 frames under fanout/.test(bt.text) && /1,000 samples \(5\.26%\)/.test(bt.text),
		'big: the merged rectangle\'s tooltip counts its frames and weight', bt);
	await typeSearch('');
	// zoom by a real click on deep_5_00 (a chain of 20 samples): the page's
	// click handler timed by its stats(); then the chain fills the width
	const d5 = byPath(v, 'main;deep_5_00');
	check(d5 && near(d5.w, W * 20 / 19000, 0.2), 'big: a chain is about a pixel wide', d5 && d5.w);
	await mouse(s, v, d5, 'click');
	b = await evaluate(s, BIG);
	console.log('     big: zoom by click: ' + ms(b.st.ms) + ' in the handler');
	v = await evaluate(s, FRAMES);
	check(v.frames.length === 34 && v.frames.every((f) => near(f.w, W)), 'big: zoomed, the chain\'s 32 frames (and main, all) fill the width',
		{ n: v.frames.length });
	check(b.st.ms < 1000, 'big: zoom within 1 s', b.st);
	tm = await timed(`() => { window.recFlame.element.querySelector('.reset').click(); return window.recFlame.stats(); }`);
	console.log('     big: reset zoom: ' + ms(tm.handler) + ', painted ' + ms(tm.painted) + ' (' + tm.r.drawn + ' rectangles)');
	check(tm.handler < 1000, 'big: reset within 1 s', tm);
	await screenshot(s, 'big.png');
	tm = await timed(`() => { const n = window.recFlame.root.kids[0].kids.find((k) => k.name === 'fanout'); window.recFlame.zoomTo(n); return window.recFlame.stats(); }`);
	console.log('     big: zoom to fanout (API): ' + ms(tm.handler) + ', painted ' + ms(tm.painted) + ' (' + tm.r.drawn + ' rectangles)');
	check(tm.r.drawn === 1003 && tm.handler < 1000, 'big: zoomed to fanout, its 1000 leaves are drawn one by one', tm.r);
}

run(main, 120000);
