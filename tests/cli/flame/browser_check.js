// Drives headless Chromium over --remote-debugging-pipe (Chrome DevTools
// Protocol, NUL-separated JSON on fds 3 and 4; node's standard library only)
// to check pages written by rec-flame --format html:
//   node browser_check.js CHROMIUM DIR
// DIR holds cpu.html (before.rec of rec_test_flame_gen), diff.html (--diff
// before after), alloc.html, lock.html (rec.Alloc, rec.LockWait) and
// receives cpu.png, diff.png (screenshots).  Exits 0 when every check
// passed, 1 otherwise (each failure printed).
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [chromium, dir] = process.argv.slice(2);
if (!chromium || !dir) {
	console.error('usage: node browser_check.js CHROMIUM DIR');
	process.exit(2);
}
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flame-chromium-'));
const proc = spawn(chromium, [
	'--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	'--disable-background-networking', '--disable-component-update', '--disable-sync',
	'--user-data-dir=' + userDir, '--remote-debugging-pipe', '--window-size=1200,700',
	'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
proc.stderr.on('data', (d) => { stderr += d; });
const toChrome = proc.stdio[3], fromChrome = proc.stdio[4];

let nextId = 1, buf = '';
const pending = new Map(), waiters = [];
fromChrome.on('data', (d) => {
	buf += d.toString('utf8');
	let i;
	while ((i = buf.indexOf('\0')) >= 0) {
		const msg = JSON.parse(buf.slice(0, i));
		buf = buf.slice(i + 1);
		if (msg.id && pending.has(msg.id)) {
			const p = pending.get(msg.id);
			pending.delete(msg.id);
			if (msg.error) p.reject(new Error(p.method + ': ' + JSON.stringify(msg.error)));
			else p.resolve(msg.result);
		} else if (msg.method) {
			for (let k = waiters.length - 1; k >= 0; k--) {
				if (waiters[k].method === msg.method) {
					waiters[k].resolve(msg.params);
					waiters.splice(k, 1);
				}
			}
		}
	}
});
function send(method, params, sessionId) {
	const id = nextId++;
	const msg = { id, method, params: params || {} };
	if (sessionId) msg.sessionId = sessionId;
	toChrome.write(JSON.stringify(msg) + '\0');
	return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}
function waitFor(method) {
	return new Promise((resolve) => waiters.push({ method, resolve }));
}

let failures = 0;
function check(ok, what, detail) {
	if (ok) {
		console.log('ok   ' + what);
	} else {
		failures++;
		console.log('FAIL ' + what + (detail !== undefined ? ': ' + JSON.stringify(detail) : ''));
	}
}

async function openPage(session, file) {
	const loaded = waitFor('Page.loadEventFired');
	await send('Page.navigate', { url: 'file://' + path.resolve(dir, file) }, session);
	await loaded;
}
async function evaluate(session, expr) {
	const r = await send('Runtime.evaluate', { expression: expr, returnByValue: true }, session);
	if (r.exceptionDetails) throw new Error('page exception: ' + JSON.stringify(r.exceptionDetails));
	return r.result.value;
}
async function screenshot(session, file) {
	const r = await send('Page.captureScreenshot', { format: 'png' }, session);
	fs.writeFileSync(path.join(dir, file), Buffer.from(r.data, 'base64'));
}

// What the page shows: every drawn frame with its geometry.
const FRAMES = `(() => {
	const chart = document.getElementById('chart').getBoundingClientRect();
	return { chartWidth: chart.width, frames: Array.from(document.querySelectorAll('#chart .frame')).map((e) => {
		const r = e.getBoundingClientRect();
		return { name: e.getAttribute('data-name'), text: e.textContent, total: +e.getAttribute('data-total'),
			x: r.left - chart.left, w: r.width, y: r.top - chart.top, match: e.classList.contains('match'),
			bg: getComputedStyle(e).backgroundColor, depth: e.__node.depth,
			path: (() => { const p = []; for (let n = e.__node; n && n.parent; n = n.parent) p.unshift(n.name); return p.join(';'); })() };
	}) };
})()`;

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
	const tip = await evaluate(s, `(() => {
		const el = Array.from(document.querySelectorAll('.frame')).find((e) => e.getAttribute('data-name') === 'parse_json');
		const r = el.getBoundingClientRect();
		el.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: r.left + 5, clientY: r.top + 5 }));
		const t = document.getElementById('tip');
		return { text: t.textContent, shown: getComputedStyle(t).display !== 'none' };
	})()`);
	check(tip.shown && /parse_json/.test(tip.text) && /20 samples/.test(tip.text) && /\(20\.00%\)/.test(tip.text),
		'tooltip shows name, samples and percent', tip);

	// search (as typed in the box): regex, highlight, matched percentage
	const typeSearch = (term) => evaluate(s, `(() => {
		const i = document.getElementById('search');
		i.value = ${JSON.stringify(term)};
		i.dispatchEvent(new Event('input', { bubbles: true }));
		return document.getElementById('matched').textContent;
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
	await evaluate(s, `(() => {
		const el = Array.from(document.querySelectorAll('.frame')).find((e) => e.getAttribute('data-name') === 'handle_request' && e.__node.depth === 3);
		el.dispatchEvent(new MouseEvent('click', { bubbles: true }));
	})()`);
	v = await evaluate(s, FRAMES);
	const zh = byPath(v, 'main;run_loop;handle_request'), zc = byPath(v, 'main;run_loop;handle_request;compute_hash');
	check(zh && near(zh.w, W) && zc && near(zc.w, W * 40 / 60), 'click zooms into the frame', { zh, zc });
	check(!byPath(v, 'main;run_loop;__poll'), 'frames outside the zoomed one are hidden');
	// search while zoomed: the percentage is of the whole graph
	txt = await typeSearch('parse');
	check(/Matched: 20\.00%/.test(txt), 'matched percent is of the whole graph when zoomed', txt);
	await typeSearch('');
	await evaluate(s, `document.getElementById('reset').click()`);
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
	const dtip = await evaluate(s, `(() => {
		const el = Array.from(document.querySelectorAll('.frame')).find((e) => e.getAttribute('data-name') === '__poll');
		return window.recFlame.tipText(el.__node);
	})()`);
	check(/before: 25 samples \(normalised: 31 samples\)/.test(dtip) && /change: -16 samples/.test(dtip),
		'diff tooltip: before, normalised, change', dtip);
	const legend = await evaluate(s, `document.getElementById('legend').textContent`);
	check(/normalised/.test(legend) && /x1\.250/.test(legend), 'diff legend tells the normalisation', legend);
	const esc = byPath(v, 'main;render</script><b>x');
	check(esc && esc.text === 'render</script><b>x', 'a frame named render</script><b>x is shown as text', esc);
	await screenshot(s, 'diff.png');

	// ---- units: bytes as MiB, time as ms
	await openPage(s, 'alloc.html');
	let t = await evaluate(s, `window.recFlame.tipText(Array.from(document.querySelectorAll('.frame')).find((e) => e.getAttribute('data-name') === 'compute_hash').__node)`);
	check(/3\.00 MiB/.test(t) && /\(75\.00%\)/.test(t), 'allocation tooltip in MiB', t);
	await openPage(s, 'lock.html');
	t = await evaluate(s, `window.recFlame.tipText(Array.from(document.querySelectorAll('.frame')).find((e) => e.getAttribute('data-name') === 'parse_json').__node)`);
	check(/10\.000 ms/.test(t) && /\(50\.00%\)/.test(t), 'lock wait tooltip in ms', t);

	// ---- icicle (reverse): children below their parent
	await openPage(s, 'reverse.html');
	v = await evaluate(s, FRAMES);
	const ip = byPath(v, '__poll'), ipc = byPath(v, '__poll;run_loop');
	check(ip && ipc && ipc.y > ip.y && near(ip.w, W * 0.25), 'reverse: icicle, callers below', { ip, ipc });
}

const timer = setTimeout(() => {
	console.log('FAIL timeout; chromium stderr:\n' + stderr.slice(-2000));
	proc.kill('SIGKILL');
	process.exit(1);
}, 90000);
main().then(() => {
	clearTimeout(timer);
	proc.kill('SIGTERM');
	console.log(failures ? failures + ' browser check(s) failed' : 'all browser checks passed');
	try { fs.rmSync(userDir, { recursive: true, force: true }); } catch (e) { /* best effort */ }
	process.exit(failures ? 1 : 0);
}, (e) => {
	clearTimeout(timer);
	console.log('FAIL ' + e.stack + '\nchromium stderr:\n' + stderr.slice(-2000));
	proc.kill('SIGKILL');
	process.exit(1);
});
