#!/usr/bin/env bash
# rec-export --format pprof (issue 21, "pprof"): the profile rec-flame
# --format pprof writes, through the same code (rec_flame_run()), read by a
# real consumer.  On a real recording (tests/helpers/rec_test_pprof_work: CPU
# samples, rec_malloc allocations and rec_mutex waits) and on the demo
# scenario's (the real requestwatch: lock waits, sleeps, reported
# allocations), for rec.CPUSample, rec.Alloc, rec.LockWait and rec.Sleep,
# and rec.WallSample of the plain requestwatch under rec-record --wall:
#   - rec-export's file is byte for byte rec-flame's (with --weight too);
#   - `go tool pprof -top` (Debian's golang-go, offline as in
#     tests/cli/flame_pprof.sh) reads it, and its total equals the sum of
#     rec-flame's collapsed weights, which equals the truth from rec-print's
#     events (samples: their count; rec.LockWait and rec.Sleep: the
#     durations of the events with a stack; rec.Alloc: their weights);
#   - usage: pprof takes one FILE and -o FILE; --event is for pprof only.
# REC_SKIP_GO=1 skips the test where golang-go cannot be installed.
set -euo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_exe "$bin/rec-export" "$bin/rec-flame" "$bin/rec-print" "$tests/rec_test_pprof_work" "$bin/requestwatch" \
	"$bin/requestwatch-plain" "$bin/rec-record"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }

if ! command -v go >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go) \
			>"$tmp/apt.log" 2>&1 || cat "$tmp/apt.log"
	fi
fi
if ! command -v go >/dev/null 2>&1; then
	if [ "${REC_SKIP_GO:-0}" = 1 ]; then
		echo "export_pprof: no go (golang-go); skipped (REC_SKIP_GO=1)"
		exit 0
	fi
	echo "FAIL: go tool pprof is needed (apt-get install golang-go, or REC_SKIP_GO=1)"
	exit 1
fi
mkdir -p "$tmp/home" "$tmp/nobinaries"
export HOME=$tmp/home GOCACHE=$tmp/home/gocache GOPATH=$tmp/home/go GOPROXY=off GOSUMDB=off \
	GOFLAGS= GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR=$tmp/home/pprof \
	PPROF_BINARY_PATH=$tmp/nobinaries
gorun=(go)
if unshare -n true 2>/dev/null; then gorun=(unshare -n go); fi
pprof() { timeout 120 "${gorun[@]}" tool pprof -symbolize=none "$@"; }

# ---- usage ---------------------------------------------------------------------------
REC_OUTPUT=$tmp/work.rec REC_CPU_SAMPLE_PERIOD=2ms "$tests/rec_test_pprof_work" ||
	fail "rec_test_pprof_work: exit $?"
rc=0; "$bin/rec-export" --format pprof -o "$tmp/x.pb.gz" "$tmp/work.rec" "$tmp/work.rec" 2>"$tmp/err" || rc=$?
[ $rc = 2 ] && grep -q "give one input FILE" "$tmp/err" || fail "pprof of two files: exit $rc: $(cat "$tmp/err")"
rc=0; "$bin/rec-export" --format pprof "$tmp/work.rec" 2>"$tmp/err" || rc=$?
[ $rc = 2 ] && grep -q "no output file" "$tmp/err" || fail "pprof without -o: exit $rc: $(cat "$tmp/err")"
rc=0; "$bin/rec-export" --event rec.Alloc -o "$tmp/ds" "$tmp/work.rec" 2>"$tmp/err" || rc=$?
[ $rc = 2 ] && grep -q "for --format pprof" "$tmp/err" || fail "--event with parquet: exit $rc: $(cat "$tmp/err")"
rc=0; "$bin/rec-export" --format pprof --event no.Such -o "$tmp/x.pb.gz" "$tmp/work.rec" 2>"$tmp/err" || rc=$?
[ $rc = 2 ] || fail "pprof --event no.Such: exit $rc: $(cat "$tmp/err")"

# check REC EVENT [FIELD]: rec-export's profile is rec-flame's, go tool
# pprof's total is rec-flame's and the truth's.
check() {
	local rec=$1 event=$2 name weight=() unit=()
	name=$(basename "$rec" .rec).$event${3:+.$3}
	[ -n "${3:-}" ] && weight=(--weight "$3")
	"$bin/rec-export" --format pprof --event "$event" "${weight[@]}" -o "$tmp/$name.export.pb.gz" "$rec" ||
		{ fail "$name: rec-export --format pprof: exit $?"; return; }
	"$bin/rec-flame" --format pprof --event "$event" "${weight[@]}" -o "$tmp/$name.flame.pb.gz" "$rec" ||
		{ fail "$name: rec-flame --format pprof: exit $?"; return; }
	cmp -s "$tmp/$name.export.pb.gz" "$tmp/$name.flame.pb.gz" ||
		fail "$name: rec-export's profile differs from rec-flame's"
	"$bin/rec-flame" --event "$event" "${weight[@]}" "$rec" >"$tmp/$name.folded" ||
		{ fail "$name: rec-flame: exit $?"; return; }
	case $event in rec.LockWait | rec.Sleep | rec.WallSample) unit=(-unit=ns) ;; rec.Alloc) unit=(-unit=B) ;; esac
	[ "${3:-}" = count ] && unit=()
	pprof -top "${unit[@]}" -nodefraction=0 -nodecount=1000000 "$tmp/$name.export.pb.gz" \
		>"$tmp/$name.top" 2>"$tmp/$name.top.err" ||
		{ fail "$name: go tool pprof -top: exit $?"; cat "$tmp/$name.top.err"; return; }
	"$bin/rec-print" --json-lines --events "$event" "$rec" >"$tmp/$name.jsonl" ||
		{ fail "$name: rec-print: exit $?"; return; }
	python3 - "$tmp/$name" "$event" "${3:-}" "${unit[*]}" <<'EOF' || fail "$name: totals differ"
import json, re, sys
base, event, weight, unit = sys.argv[1:5]
flame = sum(int(l.rsplit(" ", 1)[1]) for l in open(base + ".folded", errors="surrogateescape") if l.strip())
top = open(base + ".top", errors="surrogateescape").read()
m = re.search(r"of (\S+) total", top)
shown = m.group(1) if m else "?"
suffix = unit.replace("-unit=", "")
truth = 0
for l in open(base + ".jsonl"):
    v = json.loads(l)["values"]
    if not (v.get("stackTrace") or {}).get("frames"):
        continue
    if weight == "count" or event == "rec.CPUSample":
        truth += 1
    elif event == "rec.Alloc":
        truth += v["weight"]
    elif event == "rec.WallSample":
        truth += v["weight"] * v["period"]
    else:
        truth += max(v["duration"], 0)
print("   %s: go tool pprof -top total %s, rec-flame %d, truth %d" % (base.rsplit("/", 1)[1], shown, flame, truth))
sys.exit(0 if shown == "%d%s" % (flame, suffix) and flame == truth and truth > 0 else 1)
EOF
}

check "$tmp/work.rec" rec.CPUSample
check "$tmp/work.rec" rec.Alloc
check "$tmp/work.rec" rec.LockWait
check "$tmp/work.rec" rec.LockWait count

# ---- the demo scenario (the real requestwatch) ---------------------------------------
BIN=$bin work=$tmp/demo server_pid=
mkdir -p "$work"
trap 'if declare -F rw_kill >/dev/null; then rw_kill; fi; rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source "$(dirname "$0")/lib/requestwatch_scenario.sh"
rw_start "$work/run.rec"
burst 4 /requests/blocking
burst 1 /requests/allocating
rw_stop
check "$work/run.rec" rec.LockWait
check "$work/run.rec" rec.Sleep
check "$work/run.rec" rec.Alloc

# ---- wall samples: the plain requestwatch under rec-record --wall 200 (the
# preload library), as tests/cli/record_wall.sh: the profile's sample types
# are samples/count and wall/nanoseconds, its total the samples' weight x
# period (not under SAN=1: the ASan-built preload library cannot be
# preloaded into the ASan-built program, as record_wall.sh says)
if [ "${SAN:-}" = 1 ]; then
	echo "export_pprof: wall samples skipped under SAN=1"
else
	work=$tmp/wall rw_plain=1 rw_record_opts=(--wall 200)
	mkdir -p "$work"
	rw_start "$work/wall.rec"
	burst 4 /requests/blocking
	rw_stop
	check "$work/wall.rec" rec.WallSample
	grep -q '^Type: wall$' "$tmp/wall.rec.WallSample.top" ||
		fail "wall profile: go tool pprof -top does not say Type: wall: $(head -5 "$tmp/wall.rec.WallSample.top")"
	pprof -raw "$tmp/wall.rec.WallSample.export.pb.gz" >"$tmp/wall.raw" 2>/dev/null ||
		fail "wall profile: go tool pprof -raw: exit $?"
	grep -q 'samples/count wall/nanoseconds' "$tmp/wall.raw" ||
		fail "wall profile: sample types are not samples/count wall/nanoseconds: $(head -5 "$tmp/wall.raw")"
fi
cli_done export_pprof
