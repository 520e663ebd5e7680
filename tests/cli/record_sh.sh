#!/usr/bin/env bash
# cli/record_run's cases with sh (dash) and cat as the programs instead of a
# program built for the test: dash ends with _exit() and forks and execs
# its commands, which the recording must survive.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_exe "$bin/rec-record" "$bin/rec-summary" "$bin/rec-print"
real=${BUILD:-build}
case "$real" in /*) ;; *) real=$root/$real ;; esac
[ -r "$real/lib/librec-preload.so" ] || { echo "FAIL: $real/lib/librec-preload.so missing (the preload library)"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
if [ "${SAN:-}" = 1 ]; then
	# The preload library built with ASan needs the ASan runtime first in
	# the program, which sh and cat do not have.
	echo "skip: under SAN=1 (the ASan-built preload library cannot load into programs built without ASan)"
	exit 0
fi
cd "$tmp" || exit 1

# status PROGRAM...: rec-record's exit status
status() {
	local rc=0
	"$bin/rec-record" -q -o "$tmp/s.rec" -- "$@" </dev/null >/dev/null 2>"$tmp/status.err" || rc=$?
	echo "$rc"
}
[ "$(status sh -c 'exit 3')" = 3 ] || fail "exit 3 not kept: $(cat "$tmp/status.err")"
[ "$(status sh -c 'exit 0')" = 0 ] || fail "exit 0 not kept"
[ "$(status sh -c 'kill -TERM $$')" = 143 ] || fail "killed by SIGTERM: want 143"
[ "$(status sh -c 'kill -KILL $$')" = 137 ] || fail "killed by SIGKILL: want 137"
[ "$(status false)" = 1 ] || fail "false: want 1"

# stdin -> stdout byte for byte (binary), stderr kept
head -c 300000 /dev/urandom >"$tmp/in.bin"
"$bin/rec-record" -q -o "$tmp/cat.rec" -- cat <"$tmp/in.bin" >"$tmp/out.bin" 2>"$tmp/cat.err" || fail "cat failed"
cmp -s "$tmp/in.bin" "$tmp/out.bin" || fail "stdin/stdout not passed through"
"$bin/rec-record" -q -o "$tmp/e.rec" -- sh -c 'echo to-stderr >&2; echo to-stdout' >"$tmp/o" 2>"$tmp/e"
[ "$(cat "$tmp/o")" = to-stdout ] && grep -qx to-stderr "$tmp/e" || fail "stdout/stderr: $(cat "$tmp/o") / $(cat "$tmp/e")"

# the environment: LD_PRELOAD kept (and the other library runs), REC_* set
printf '#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void mark(void) { const char *p = getenv("MARK_FILE"); if (p) { FILE *f = fopen(p, "a"); if (f) { fputs("loaded\\n", f); fclose(f); } } }\n' >"$tmp/other.c"
cc -shared -fPIC -o "$tmp/libother.so" "$tmp/other.c" || fail "cc -shared failed"
MARK_FILE=$tmp/mark LD_PRELOAD=$tmp/libother.so REC_OPTIONS=codec=lz4 KEEP_ME=yes \
	"$bin/rec-record" -q -o rel.rec -- sh -c 'cd /; printf "%s\n%s\n%s\n%s\n" "$LD_PRELOAD" "$REC_OUTPUT" "$REC_OPTIONS" "$KEEP_ME"' >"$tmp/env.out" ||
	fail "env run failed"
mapfile -t env_lines <"$tmp/env.out"
[ "${env_lines[0]:-}" = "$real/lib/librec-preload.so:$tmp/libother.so" ] ||
	fail "LD_PRELOAD: '${env_lines[0]:-}', want the preload library then the one given"
[ "${env_lines[1]:-}" = "$tmp/rel.rec" ] || fail "REC_OUTPUT: '${env_lines[1]:-}', want $tmp/rel.rec"
[ "${env_lines[2]:-}" = "codec=lz4" ] || fail "REC_OPTIONS: '${env_lines[2]:-}', want codec=lz4 (nothing added)"
[ "${env_lines[3]:-}" = yes ] || fail "the environment is not kept"
grep -q loaded "$tmp/mark" || fail "the library already in LD_PRELOAD was not loaded"
[ -s "$tmp/rel.rec" ] || fail "-o rel.rec: no recording in the directory rec-record started in"
"$bin/rec-record" -q -o o.rec --cpu 50 --flight --max-age 1min --events 'rec.*' -- sh -c 'echo "$REC_OPTIONS"' >"$tmp/opt.out"
[ "$(cat "$tmp/opt.out")" = "events=rec.*,flight=on,maxage=1min,cpu=50" ] ||
	fail "REC_OPTIONS: '$(cat "$tmp/opt.out")'"

# the default output name: PROGRAM-PID.rec, PID the program's
mkdir "$tmp/d" && cd "$tmp/d" || exit 1
"$bin/rec-record" -- sh -c 'echo $$ >pid; sleep 0.2' 2>"$tmp/report.err" || fail "default name run failed"
pid=$(cat pid)
[ -s "sh-$pid.rec" ] || fail "no sh-$pid.rec in the current directory: $(ls)"
cd "$tmp" || exit 1
"$bin/rec-summary" --json "$tmp/d/sh-$pid.rec" >"$tmp/sum.json" || fail "rec-summary of sh-$pid.rec failed"
python3 - "$tmp/sum.json" "$pid" "$tmp/report.err" "$tmp/d/sh-$pid.rec" <<'EOF' || fail "the recording and the report"
import json, re, sys
s = json.load(open(sys.argv[1]))
pid, report, path = int(sys.argv[2]), open(sys.argv[3]).read(), sys.argv[4]
bad = []
runs = s["runs"]
if len(runs) != 1 or runs[0]["pid"] != pid:
    bad.append("one run of pid %d: %s" % (pid, [(r["pid"]) for r in runs]))
if runs and runs[0].get("ended") != "clean close":
    bad.append("ended: %s" % runs[0].get("ended"))
types = {t["name"]: t["count"] for t in s["types"]}
if types.get("rec.ThreadStart", 0) < 1:
    bad.append("no rec.ThreadStart: %s" % types)
m = re.search(r"^rec-record: (\S+): .*, (\d+) events recorded, (\d+) dropped \(the program exited with status 0\)$", report, re.M)
if not m:
    bad.append("report's first line: %r" % report)
else:
    if m.group(1) != path: bad.append("report names %s, want %s" % (m.group(1), path))
    if int(m.group(2)) != s["events"]: bad.append("report: %s events, rec-summary %d" % (m.group(2), s["events"]))
    if int(m.group(3)) != s["dropped"]: bad.append("report: %s dropped, rec-summary %d" % (m.group(3), s["dropped"]))
top = max(s["types"], key=lambda t: (t["count"], [-ord(c) for c in t["name"]]), default=None)
if top and not re.search(r"^rec-record:   events: %d %s" % (top["count"], re.escape(top["name"])), report, re.M):
    bad.append("report's events line does not start with the commonest type %s" % top)
for cmd in ("look at it with: rec-report " + path, "rec-view contention-by-lock " + path, "rec-flame -o " + path[:-4] + ".html " + path):
    if cmd not in report: bad.append("report lacks %r" % cmd)
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
EOF
"$bin/rec-record" -q -o "$tmp/q.rec" -- true 2>"$tmp/q.err"
[ -s "$tmp/q.err" ] && fail "-q: stderr not empty: $(cat "$tmp/q.err")"

# an output that cannot be created: exit 2, the program not started
touch "$tmp/afile"
for out in "$tmp/afile/x.rec" "$tmp/no/such/dir/x.rec"; do
	rm -f "$tmp/ran"
	rc=0
	"$bin/rec-record" -o "$out" -- touch "$tmp/ran" 2>"$tmp/o.err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q "^rec-record: $out: cannot create the recording: " "$tmp/o.err" ||
		fail "-o $out: exit $rc, $(cat "$tmp/o.err")"
	[ -e "$tmp/ran" ] && fail "-o $out: the program ran"
done

# signals: TERM/HUP/USR2 passed on, INT to rec-record alone ignored.  env
# --default-signal undoes the SIGINT ignore bash gives background jobs.
for sig in TERM HUP USR2; do
	rm -f "$tmp/got" "$tmp/up"
	env --default-signal=INT "$bin/rec-record" -q -o "$tmp/sig.rec" -- \
		sh -c "trap 'echo $sig >$tmp/got; exit 7' $sig; touch $tmp/up; while :; do sleep 0.05; done" &
	rr=$!
	for _ in $(seq 100); do [ -e "$tmp/up" ] && break; sleep 0.05; done
	[ "$sig" = TERM ] && { kill -INT "$rr"; sleep 0.3; kill -0 "$rr" 2>/dev/null || fail "SIGINT to rec-record stopped it"; }
	kill -"$sig" "$rr"
	rc=0
	timeout 10 tail --pid="$rr" -f /dev/null || fail "SIG$sig: rec-record still running"
	wait "$rr" || rc=$?
	[ "$rc" -eq 7 ] && [ "$(cat "$tmp/got" 2>/dev/null)" = "$sig" ] ||
		fail "SIG$sig to rec-record: exit $rc (want the program's 7), the program got '$(cat "$tmp/got" 2>/dev/null)'"
done

cli_done record_sh
