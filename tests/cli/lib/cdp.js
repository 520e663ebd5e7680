// cdp.js - headless Chromium driven over --remote-debugging-pipe (Chrome
// DevTools Protocol, NUL-separated JSON on fds 3 and 4; node's standard
// library only), for the browser tests (flame/browser_check.js,
// report/browser_check.js):
//   const B = require('../lib/cdp.js').launch(chromium, dir, 'name-');
//   B.send(method, params, session), B.waitFor(event), B.openPage(session,
//   file in dir), B.evaluate(session, expression), B.screenshot(session,
//   file in dir, clip {x, y, width, height} in page pixels), B.check(ok, what, detail), B.run(main, timeoutMs):
//   runs main(), prints the verdict, stops the browser and exits 0 when every
//   check passed, 1 otherwise.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

exports.launch = function (chromium, dir, prefix) {
	const userDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
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
		const r = await send('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true }, session);
		if (r.exceptionDetails) throw new Error('page exception: ' + JSON.stringify(r.exceptionDetails));
		return r.result.value;
	}
	async function screenshot(session, file, clip) {
		const r = await send('Page.captureScreenshot', clip ? { format: 'png', captureBeyondViewport: true,
			clip: { x: clip.x, y: clip.y, width: clip.width, height: clip.height, scale: 1 } } : { format: 'png' }, session);
		fs.writeFileSync(path.join(dir, file), Buffer.from(r.data, 'base64'));
	}
	function run(main, ms) {
		const timer = setTimeout(() => {
			console.log('FAIL timeout; chromium stderr:\n' + stderr.slice(-2000));
			proc.kill('SIGKILL');
			process.exit(1);
		}, ms);
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
	}
	return { send, waitFor, check, openPage, evaluate, screenshot, run };
};
