# shellcheck shell=bash disable=SC2154 # tmp, root, duck_test come from the sourcing script
# duckdb.sh - sourced (not run) by tests/cli/export.sh and view_sql.sh: node
# (Debian) and @duckdb/node-api (npm), installed into $REC_DUCKDB_DIR (default
# /var/cache/rec-tests/duckdb or ~/.cache/rec-tests/duckdb) when missing.  The
# caller sets duck_test (its name, for messages) and has lib/common.sh's $tmp
# and $root.  Without them the test fails, or with REC_SKIP_DUCKDB=1 exits 0
# saying it skipped.  Sets DUCKDB_DIR and DUCKDB_QUERY (tests/cli/export/
# duckdb_query.js: node "$DUCKDB_QUERY" SQL... prints each result as JSON).
if ! command -v node >/dev/null; then
	apt-get install -y nodejs >/dev/null 2>&1 || true
fi
# cached across runs: /var/cache/rec-tests/duckdb (root), else under $HOME
dflt=/var/cache/rec-tests/duckdb
mkdir -p "$dflt" 2>/dev/null && [ -w "$dflt" ] || dflt=${XDG_CACHE_HOME:-$HOME/.cache}/rec-tests/duckdb
export DUCKDB_DIR=${REC_DUCKDB_DIR:-$dflt}
if [ ! -f "$DUCKDB_DIR/node_modules/@duckdb/node-api/package.json" ] && command -v node >/dev/null; then
	command -v npm >/dev/null || apt-get install -y npm >/dev/null 2>&1 || true
	mkdir -p "$DUCKDB_DIR" &&
		timeout 600 npm install --prefix "$DUCKDB_DIR" --no-audit --no-fund @duckdb/node-api >"$tmp/npm.log" 2>&1 ||
		echo "$duck_test: npm install failed: $(tail -3 "$tmp/npm.log")"
fi
if ! command -v node >/dev/null || [ ! -f "$DUCKDB_DIR/node_modules/@duckdb/node-api/package.json" ]; then
	if [ "${REC_SKIP_DUCKDB:-0}" = 1 ]; then
		echo "$duck_test: no node or @duckdb/node-api; skipped (REC_SKIP_DUCKDB=1)"
		exit 0
	fi
	echo "FAIL: node and @duckdb/node-api are needed (set REC_SKIP_DUCKDB=1 to skip)"
	exit 1
fi
export DUCKDB_QUERY=$root/tests/cli/export/duckdb_query.js
