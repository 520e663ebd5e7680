// SPDX-License-Identifier: MIT
// duckdb_query.js - runs each SQL argument in one in-memory DuckDB
// (@duckdb/node-api, installed under $DUCKDB_DIR by tests/cli/export.sh) and
// prints each result as one JSON line: an array of row objects (64-bit and
// larger integers as strings, so they stay exact).  Exit 1 on an error.
'use strict';
const { createRequire } = require('module');
const req = createRequire(process.env.DUCKDB_DIR + '/');
const { DuckDBInstance } = req('@duckdb/node-api');

(async () => {
	const inst = await DuckDBInstance.create(':memory:');
	const con = await inst.connect();
	for (const q of process.argv.slice(2)) {
		const r = await con.runAndReadAll(q);
		console.log(JSON.stringify(r.getRowObjectsJson()));
	}
})().catch((e) => {
	console.error('duckdb: ' + String(e && e.message ? e.message : e));
	process.exit(1);
});
