#!/usr/bin/env bash
# rec-record runs a program as the program would run without it, and records
# it (needs the preload library).  The program is a small C program built
# here without rec (prog.c below: one mode per case); the same cases on sh,
# which ends with _exit and forks children, are tests/pending/record_sh.sh.
#   - exit status kept: exit 3 -> 3, 0 -> 0, the program raising SIGTERM ->
#     143, SIGKILL -> 137, as a shell says; false(1) -> 1;
#   - standard input to standard output byte for byte (300,000 random bytes),
#     standard error kept;
#   - the environment: an existing LD_PRELOAD kept after the preload library
#     (the other library, built here, still runs: its constructor writes a
#     file), REC_OUTPUT absolute, REC_OPTIONS as built and appended to one
#     already set, the rest kept; -o relative to the directory rec-record
#     started in although the program changes directory;
#   - the default output PROGRAM-PID.rec in the current directory, PID the
#     program's; the recording: one run of that pid, closed cleanly, with a
#     rec.ThreadStart;
#   - the report at the end: the file, events and drops equal to rec-summary
#     --json's, the commands to run next; -q: nothing;
#   - an output that cannot be created: exit 2 before the program starts;
#   - SIGTERM, SIGHUP and SIGUSR2 sent to rec-record reach the program (its
#     handler writes the signal's name and exits 7); SIGINT sent to rec-record
#     alone does not stop it.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_exe "$bin/rec-record" "$bin/rec-summary"
real=${BUILD:-build}
case "$real" in /*) ;; *) real=$root/$real ;; esac
[ -r "$real/lib/librec-preload.so" ] || { echo "FAIL: $real/lib/librec-preload.so missing (the preload library)"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
if [ "${SAN:-}" = 1 ]; then
	echo "skip: under SAN=1 (the ASan-built preload library cannot load into programs built without ASan)"
	exit 0
fi
cd "$tmp" || exit 1

cat >prog.c <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static volatile sig_atomic_t got;
static void on_signal(int sig) { got = sig; }
int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	if (!strcmp(m, "exit"))
		return atoi(argv[2]);
	if (!strcmp(m, "raise")) {
		raise(atoi(argv[2]));
		return 99;
	}
	if (!strcmp(m, "cat")) {
		static char b[65536];
		size_t n;
		while ((n = fread(b, 1, sizeof b, stdin)) > 0)
			fwrite(b, 1, n, stdout);
		fputs("to-stderr\n", stderr);
		return 0;
	}
	if (!strcmp(m, "env")) { /* prints the variables named, then leaves the directory */
		for (int i = 2; i < argc; i++) {
			const char *v = getenv(argv[i]);
			printf("%s\n", v ? v : "(unset)");
		}
		return chdir("/") != 0;
	}
	if (!strcmp(m, "pid")) {
		printf("%ld\n", (long)getpid());
		return 0;
	}
	if (!strcmp(m, "wait")) { /* argv[2]: a file to create when ready, argv[3]: where the signal's name goes */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGUSR2, &sa, NULL);
		fclose(fopen(argv[2], "w"));
		while (!got)
			pause();
		FILE *f = fopen(argv[3], "w");
		fputs(got == SIGTERM ? "TERM" : got == SIGHUP ? "HUP" : got == SIGUSR2 ? "USR2" : "other", f);
		fclose(f);
		return 7;
	}
	return 100;
}
EOF
cc -O1 -o prog prog.c || { echo "FAIL: cc prog.c"; exit 1; }
prog=$tmp/prog

# status ARGS...: rec-record's exit status running prog ARGS...
status() {
	local rc=0
	"$bin/rec-record" -q -o "$tmp/s.rec" -- "$prog" "$@" </dev/null >/dev/null 2>"$tmp/status.err" || rc=$?
	echo "$rc"
}
[ "$(status exit 3)" = 3 ] || fail "exit 3 not kept: $(cat "$tmp/status.err")"
[ "$(status exit 0)" = 0 ] || fail "exit 0 not kept"
[ "$(status raise 15)" = 143 ] || fail "killed by SIGTERM: want 143"
[ "$(status raise 9)" = 137 ] || fail "killed by SIGKILL: want 137"
rc=0
"$bin/rec-record" -q -o "$tmp/f.rec" -- false 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "false: $rc, want 1"

# stdin -> stdout byte for byte (binary), stderr kept
head -c 300000 /dev/urandom >in.bin
"$bin/rec-record" -q -o "$tmp/cat.rec" -- "$prog" cat <in.bin >out.bin 2>cat.err || fail "cat failed"
cmp -s in.bin out.bin || fail "stdin/stdout not passed through"
[ "$(cat cat.err)" = to-stderr ] || fail "stderr: $(cat cat.err)"

# the environment
printf '#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void mark(void) { const char *p = getenv("MARK_FILE"); FILE *f = p ? fopen(p, "a") : NULL; if (f) { fputs("loaded\\n", f); fclose(f); } }\n' >other.c
cc -shared -fPIC -o libother.so other.c || fail "cc -shared failed"
MARK_FILE=$tmp/mark LD_PRELOAD=$tmp/libother.so REC_OPTIONS=codec=lz4 KEEP_ME=yes \
	"$bin/rec-record" -q -o rel.rec -- "$prog" env LD_PRELOAD REC_OUTPUT REC_OPTIONS KEEP_ME >env.out || fail "env run failed"
mapfile -t env_lines <env.out
[ "${env_lines[0]:-}" = "$real/lib/librec-preload.so:$tmp/libother.so" ] ||
	fail "LD_PRELOAD: '${env_lines[0]:-}', want the preload library then the one given"
[ "${env_lines[1]:-}" = "$tmp/rel.rec" ] || fail "REC_OUTPUT: '${env_lines[1]:-}', want $tmp/rel.rec"
[ "${env_lines[2]:-}" = "codec=lz4" ] || fail "REC_OPTIONS: '${env_lines[2]:-}', want codec=lz4 (nothing added)"
[ "${env_lines[3]:-}" = yes ] || fail "the environment is not kept"
grep -q loaded mark || fail "the library already in LD_PRELOAD was not loaded"
[ -s rel.rec ] || fail "-o rel.rec: no recording in the directory rec-record started in"
"$bin/rec-record" -q -o o.rec --cpu 50 --flight --max-age 1min --events 'rec.*' -- "$prog" env REC_OPTIONS >opt.out
[ "$(cat opt.out)" = "events=rec.*,flight=on,maxage=1min,cpu=50" ] || fail "REC_OPTIONS: '$(cat opt.out)'"

# the default output name, the recording, the report
mkdir d && cd d || exit 1
"$bin/rec-record" -- "$prog" pid >pid 2>"$tmp/report.err" || fail "default name run failed"
pid=$(cat pid)
[ -s "prog-$pid.rec" ] || fail "no prog-$pid.rec in the current directory: $(ls)"
cd "$tmp" || exit 1
"$bin/rec-summary" --json "$tmp/d/prog-$pid.rec" >sum.json || fail "rec-summary of prog-$pid.rec failed"
python3 - sum.json "$pid" report.err "$tmp/d/prog-$pid.rec" <<'EOF' || fail "the recording and the report"
import json, re, sys
s = json.load(open(sys.argv[1]))
pid, report, path = int(sys.argv[2]), open(sys.argv[3]).read(), sys.argv[4]
bad = []
runs = s["runs"]
if len(runs) != 1 or runs[0]["pid"] != pid or runs[0].get("ended") != "clean close":
    bad.append("one run of pid %d, closed cleanly: %s" % (pid, [(r["pid"], r.get("ended")) for r in runs]))
types = {t["name"]: t["count"] for t in s["types"]}
if types.get("rec.ThreadStart", 0) < 1:
    bad.append("no rec.ThreadStart: %s" % types)
m = re.search(r"^rec-record: (\S+): .*, (\d+) events recorded, (\d+) dropped \(the program exited with status 0\)$", report, re.M)
if not m:
    bad.append("report's first line: %r" % report)
elif (m.group(1), int(m.group(2)), int(m.group(3))) != (path, s["events"], s["dropped"]):
    bad.append("report: %s, rec-summary: %s" % (m.groups(), (path, s["events"], s["dropped"])))
m = re.search(r"^rec-record:   events: (.*)$", report, re.M)
listed = [] if not m else [(int(c), n) for c, n in re.findall(r"(\d+) (\S+?)(?:,|$)", m.group(1))]
want = [(t["count"], t["name"]) for t in s["types"] if t["count"]][:8]
if listed != want:
    bad.append("events line %s, rec-summary %s" % (listed, want))
for cmd in ("look at it with: rec-report " + path, "rec-view contention-by-lock " + path,
            "rec-flame -o " + path[:-4] + ".html " + path):
    if cmd not in report: bad.append("report lacks %r" % cmd)
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
EOF
"$bin/rec-record" -q -o q.rec -- "$prog" exit 0 2>q.err
[ -s q.err ] && fail "-q: stderr not empty: $(cat q.err)"

# an output that cannot be created: exit 2, the program not started
touch afile
for out in "$tmp/afile/x.rec" "$tmp/no/such/dir/x.rec"; do
	rm -f ran
	rc=0
	"$bin/rec-record" -o "$out" -- touch "$tmp/ran" 2>o.err || rc=$?
	[ "$rc" -eq 2 ] && grep -q "^rec-record: $out: cannot create the recording: " o.err ||
		fail "-o $out: exit $rc, $(cat o.err)"
	[ -e ran ] && fail "-o $out: the program ran"
done

# signals: TERM/HUP/USR2 passed on, INT to rec-record alone ignored.  env
# --default-signal undoes the SIGINT ignore bash gives background jobs.
for sig in TERM HUP USR2; do
	rm -f got up
	env --default-signal=INT "$bin/rec-record" -q -o "$tmp/sig.rec" -- "$prog" wait "$tmp/up" "$tmp/got" &
	rr=$!
	for _ in $(seq 100); do [ -e up ] && break; sleep 0.05; done
	[ -e up ] || fail "SIG$sig: the program did not start"
	if [ "$sig" = TERM ]; then
		kill -INT "$rr"
		sleep 0.3
		kill -0 "$rr" 2>/dev/null || fail "SIGINT to rec-record stopped it"
	fi
	kill -"$sig" "$rr"
	rc=0
	timeout 10 tail --pid="$rr" -f /dev/null || { fail "SIG$sig: rec-record still running"; kill -KILL "$rr"; }
	wait "$rr" || rc=$?
	[ "$rc" -eq 7 ] && [ "$(cat got 2>/dev/null)" = "$sig" ] ||
		fail "SIG$sig to rec-record: exit $rc (want the program's 7), the program got '$(cat got 2>/dev/null)'"
done

cli_done record_run
