#!/usr/bin/env bash
# rec-flame --format pprof read by a real consumer: `go tool pprof` from
# Debian's golang-go (installed with apt-get when absent and running as root;
# REC_SKIP_GO=1 skips the test where it cannot be), offline (HOME and the Go
# caches in the scratch directory, GOPROXY=off, and no network namespace at
# all when unshare(1) can make one).  On
#   - a real recording (tests/helpers/rec_test_pprof_work: CPU samples,
#     rec_malloc allocations and rec_mutex waits in threads spin-a, spin-b),
#   - rec_test_flame_gen's before.rec (known stacks, a truncated one, a frame
#     without a function), and every testdata/valid/*.rec with lock waits:
# for rec.CPUSample, rec.Alloc and rec.LockWait, `go tool pprof -raw` gives,
# stack by stack (its locations' function names leaf to root under the
# thread that its labels thread_name/thread_id name), exactly the lines of
# `rec-flame --threads`: the default sample type holds rec-flame's weights
# (samples, alloc_space bytes, delay ns), the count type those of --weight
# count; the CPU time type sums period x (1 + overruns) of the samples with a
# stack (rec-print --json-lines).  `go tool pprof -top` lists every frame
# rec-flame prints, and totals as rec-flame's.  A profile with no samples is
# read as a valid empty profile.  protoc --decode_raw (Debian's
# protobuf-compiler, installed likewise when absent) reads the uncompressed
# message: string_table[0] is "", no string twice, the sample types named.
set -euo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_exe "$bin/rec-flame" "$bin/rec-print" "$tests/rec_test_pprof_work" "$tests/rec_test_flame_gen"

install_deb() { # install_deb COMMAND PACKAGE
	command -v "$1" >/dev/null 2>&1 && return 0
	[ "$(id -u)" = 0 ] || return 1
	echo "flame_pprof: installing Debian's $2"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2") \
		>"$tmp/apt-$2.log" 2>&1 || { cat "$tmp/apt-$2.log"; return 1; }
}
if ! install_deb go golang-go; then
	if [ "${REC_SKIP_GO:-0}" = 1 ]; then
		echo "flame_pprof: no go (golang-go); skipped (REC_SKIP_GO=1)"
		exit 0
	fi
	echo "FAIL: go tool pprof is needed (apt-get install golang-go, or REC_SKIP_GO=1)"
	exit 1
fi
have_protoc=1
install_deb protoc protobuf-compiler || have_protoc=0

# Offline: nothing of the user's, no module proxy, no network when possible.
mkdir -p "$tmp/home" "$tmp/nobinaries"
export HOME=$tmp/home GOCACHE=$tmp/home/gocache GOPATH=$tmp/home/go GOPROXY=off GOSUMDB=off \
	GOFLAGS= GOTOOLCHAIN=local GOTELEMETRY=off PPROF_TMPDIR=$tmp/home/pprof \
	PPROF_BINARY_PATH=$tmp/nobinaries
gorun=(go)
if unshare -n true 2>/dev/null; then gorun=(unshare -n go); fi
# -symbolize=none: pprof would demangle C++ names (ASan's runtime has some),
# and rec-flame prints them as recorded.  (Nothing is symbolized anyway: every
# mapping says has_functions.)
pprof() { timeout 120 "${gorun[@]}" tool pprof -symbolize=none "$@"; }

# ---- the recordings ----------------------------------------------------------------
REC_OUTPUT=$tmp/work.rec REC_CPU_SAMPLE_PERIOD=2ms "$tests/rec_test_pprof_work" ||
	fail "rec_test_pprof_work: exit $?"
"$tests/rec_test_flame_gen" "$tmp" || fail "rec_test_flame_gen: exit $?"

# check REC EVENT [FIELD [OPTION...]]: the profile against rec-flame (with
# --weight FIELD unless empty, and the options), as described above.
check() {
	local rec=$1 event=$2 name weight=() opts=("${@:4}")
	name=$(basename "$rec" .rec).$event
	[ -n "${3:-}" ] && weight=(--weight "$3")
	[ ${#opts[@]} -gt 0 ] && name=$name.options
	weight+=("${opts[@]}")
	"$bin/rec-flame" --threads --event "$event" "${weight[@]}" "$rec" >"$tmp/$name.folded" \
		2>"$tmp/$name.err" || { fail "$name: rec-flame: exit $?"; cat "$tmp/$name.err"; return; }
	"$bin/rec-flame" --threads --event "$event" --weight count "${opts[@]}" "$rec" >"$tmp/$name.count" ||
		{ fail "$name: rec-flame --weight count: exit $?"; return; }
	"$bin/rec-flame" --event "$event" "${weight[@]}" -o "$tmp/$name.pb.gz" "$rec" 2>"$tmp/$name.err" ||
		{ fail "$name: rec-flame --format pprof: exit $?"; cat "$tmp/$name.err"; return; }
	sed -i "/: note: [0-9]* frames\{0,1\} of modules with a build-id .*'rec-symbolize IN OUT/d" "$tmp/$name.err"
	[ -s "$tmp/$name.err" ] && { fail "$name: rec-flame --format pprof: stderr"; cat "$tmp/$name.err"; }
	pprof -raw "$tmp/$name.pb.gz" >"$tmp/$name.raw" 2>"$tmp/$name.raw.err" ||
		{ fail "$name: go tool pprof -raw: exit $?"; cat "$tmp/$name.raw.err"; return; }
	# totals in the unit of the sample type, not rounded to ms or MB
	local unit=()
	case $event in rec.LockWait | rec.Sleep) unit=(-unit=ns) ;; rec.Alloc) unit=(-unit=B) ;; esac
	pprof -top "${unit[@]}" -nodefraction=0 -nodecount=1000000 "$tmp/$name.pb.gz" >"$tmp/$name.top" \
		2>"$tmp/$name.top.err" ||
		{ fail "$name: go tool pprof -top: exit $?"; cat "$tmp/$name.top.err"; return; }
	"$bin/rec-print" --json-lines --events "$event" "$rec" >"$tmp/$name.jsonl" ||
		{ fail "$name: rec-print: exit $?"; return; }
	python3 - "$tmp/$name" "$event" <<'EOF' || fail "$name: go tool pprof disagrees with rec-flame"
import json, re, sys
base, event = sys.argv[1], sys.argv[2]
ok = True
def bad(msg):
    global ok
    print("FAIL: %s: %s" % (base.rsplit("/", 1)[1], msg))
    ok = False

def folded(path):
    d = {}
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        stack, w = line.rstrip("\n").rsplit(" ", 1)
        d[stack] = d.get(stack, 0) + int(w)
    return d

# go tool pprof -raw: sample types, samples (values: location ids, then
# labels), locations (id: address [M=mapping] function file:line s=start).
lines = open(base + ".raw", encoding="utf-8", errors="surrogateescape").read().split("\n")
sec, types, dflt, samples, locs = None, [], None, [], {}
for ln in lines:
    if ln in ("Samples:", "Locations", "Mappings"):
        sec = ln
        continue
    if sec == "Samples:" and not types and ln.strip():
        for i, t in enumerate(ln.split()):
            if t.endswith("[dflt]"):
                dflt, t = i, t[:-6]
            types.append(t)
        continue
    if sec == "Samples:":
        m = re.match(r"^\s+(-?\d+(?:\s+-?\d+)*):((?: \d+)*)\s*$", ln)
        if m:
            samples.append({"values": [int(v) for v in m.group(1).split()],
                            "locs": [int(x) for x in m.group(2).split()], "labels": {}})
            continue
        m = re.match(r"^\s+(\w+):\[(.*)\]$", ln)
        if m and samples:
            samples[-1]["labels"][m.group(1)] = m.group(2)
        continue
    if sec == "Locations":
        # the file (format 1.2: where the frame's function is; "" unknown),
        # no line (rec-flame adds up by function)
        m = re.match(r"^\s+(\d+): 0x[0-9a-f]+(?: M=\d+)? (.*) (\S*):0 s=0$", ln)
        if m:
            locs[int(m.group(1))] = m.group(2)
        elif ln.strip():
            bad("unexpected location line %r" % ln)

if dflt is None and types:
    dflt = len(types) - 1
want_types = {"rec.CPUSample": ["samples/count", "cpu/nanoseconds"],
              "rec.LockWait": ["contentions/count", "delay/nanoseconds"],
              "rec.Sleep": ["sleeps/count", "delay/nanoseconds"],
              "app.Query": ["events/count", "rows/count"],
              "rec.Alloc": ["allocations/count", "alloc_space/bytes"]}[event]
want_dflt = 0 if event == "rec.CPUSample" else 1
if types != want_types or dflt != want_dflt:
    bad("sample types %s (default %s), expected %s (default %d)" % (types, dflt, want_types, want_dflt))

def rebuild(col):
    d = {}
    for s in samples:
        lab = s["labels"]
        if "thread_id" in lab:
            root = "[%s%stid=%s]" % (lab.get("thread_name", ""), " " if "thread_name" in lab else "",
                                     lab["thread_id"])
        else:
            root = "[no thread]"
        names = [locs.get(i, "?%d" % i) for i in reversed(s["locs"])]
        v = s["values"][col]
        if v:
            key = ";".join([root] + names)
            d[key] = d.get(key, 0) + v
    return d

flame, count = folded(base + ".folded"), folded(base + ".count")
got, got_count = rebuild(dflt), rebuild(0)
for what, g, w in (("default", got, flame), ("count", got_count, count)):
    if g != w:
        bad("%s type: stacks differ from rec-flame --threads:" % what)
        for k in sorted(set(g) | set(w)):
            if g.get(k) != w.get(k):
                print("   %r: pprof %s, rec-flame %s" % (k, g.get(k), w.get(k)))

# CPU time: period x (1 + overruns) of the samples with a stack (all of them:
# not with options that leave some out)
total_cpu = None
if event == "rec.CPUSample" and not base.endswith(".options"):
    total_cpu = 0
    for line in open(base + ".jsonl"):
        v = json.loads(line)["values"]
        st = v.get("stackTrace")
        if st and st.get("frames"):
            total_cpu += v["period"] * (1 + v.get("overruns", 0))
    got_cpu = sum(s["values"][1] for s in samples)
    if got_cpu != total_cpu:
        bad("cpu/nanoseconds total %d, the samples' period x (1 + overruns) sum to %d"
            % (got_cpu, total_cpu))

# go tool pprof -top: every frame rec-flame prints, nothing else; the total
top = open(base + ".top", encoding="utf-8", errors="surrogateescape").read().split("\n")
names, total_line = set(), ""
started = False
for ln in top:
    if ln.lstrip().startswith("flat  flat%"):
        started = True
        continue
    if "Showing nodes accounting for" in ln:
        total_line = ln
    if started and ln.strip():
        names.add(ln.split(None, 5)[5])
frames = set()
for k in flame:
    frames.update(k.split(";")[1:])
if names != frames:
    bad("go tool pprof -top names %s, rec-flame frames %s" % (sorted(names ^ frames), ""))
total = sum(flame.values())
m = re.search(r"of (\S+) total", total_line)
shown = m.group(1) if m else "?"
suffix = {"rec.LockWait": "ns", "rec.Sleep": "ns", "rec.Alloc": "B"}.get(event, "")
if shown != "%d%s" % (total, suffix):
    bad("-top total %s, rec-flame %d%s" % (shown, total, suffix))
print("   %s: %d stacks, %s: total %d (rec-flame %d), count %d%s; -top: %d functions, total %s"
      % (base.rsplit("/", 1)[1], len(samples), types[dflt] if types else "?", sum(got.values()),
         total, sum(got_count.values()),
         ", cpu ns %d" % total_cpu if total_cpu is not None else "", len(names), shown))
sys.exit(0 if ok else 1)
EOF
}

for e in rec.CPUSample rec.LockWait rec.Alloc; do
	check "$tmp/work.rec" "$e"
	check "$tmp/before.rec" "$e"
done
check "$tmp/before.rec" rec.Sleep
# the options shape the profile as they shape the flame graph
check "$tmp/before.rec" rec.CPUSample "" --from 1s --to 3s --include 'hash|json' --exclude poll
check "$tmp/work.rec" rec.Alloc "" --include pprof_alloc --keep-recorder-frames
check "$tmp/before.rec" app.Query rows
for f in "$root"/testdata/valid/*.rec; do
	check "$f" rec.LockWait
done

# The real program's profile has what the recording has: its threads as
# labels, its functions, its modules as mappings.
for want in "thread_name:\[spin-a\]" "thread_name:\[spin-b\]" "pprof_spin_a" "pprof_spin_b" \
	"rec_test_pprof_work"; do
	grep -q -- "$want" "$tmp/work.rec.CPUSample.raw" || fail "work.rec CPU profile: no $want"
done
grep -q "^File: rec_test_pprof_work$" "$tmp/work.rec.CPUSample.top" ||
	fail "work.rec: go tool pprof names the profile '$(grep '^File:' "$tmp/work.rec.CPUSample.top")', not after the program"
grep -q "pprof_take_lock" "$tmp/work.rec.LockWait.raw" || fail "work.rec lock profile: no pprof_take_lock"
grep -q "pprof_alloc_blocks" "$tmp/work.rec.Alloc.raw" || fail "work.rec alloc profile: no pprof_alloc_blocks"
# the mapping of the program carries the ELF build id of the file it names
# (-raw: "ID: START/LIMIT/OFFSET PATH BUILDID [FN]")
read -r map_path map_bid < <(awk '/^Mappings/ { m = 1; next }
	m && $3 ~ /rec_test_pprof_work$/ { print $3, $4; exit }' "$tmp/work.rec.CPUSample.raw") || true
if [ -z "${map_path:-}" ]; then
	fail "work.rec: no mapping of rec_test_pprof_work: $(sed -n '/^Mappings/,$p' "$tmp/work.rec.CPUSample.raw")"
elif command -v readelf >/dev/null 2>&1; then
	bid=$(readelf -n "$map_path" | sed -n 's/^ *Build ID: *//p')
	[ "$map_bid" = "$bid" ] || fail "work.rec: the mapping's build id is '$map_bid', readelf -n $map_path says '$bid'"
fi
# time_nanos: the first event's time, as rec-print gives it
first_ns=$("$bin/rec-print" --json-lines "$tmp/work.rec" |
	python3 -c 'import json,sys; print(min(json.loads(l)["values"]["startTimeNs"] for l in sys.stdin))')
pprof -raw "$tmp/work.rec.CPUSample.pb.gz" 2>/dev/null | grep -q "^Time: " ||
	fail "work.rec: no Time in the profile"
python3 - "$tmp/work.rec.CPUSample.pb.gz" "$first_ns" <<'EOF' || fail "work.rec: time_nanos"
import gzip, sys
data = gzip.open(sys.argv[1]).read()
# field 9 (time_nanos) is a top-level varint: find it by walking the message
i, t = 0, None
while i < len(data):
    key, s = 0, 0
    while True:
        b = data[i]; i += 1; key |= (b & 0x7f) << s; s += 7
        if b < 0x80: break
    f, wt = key >> 3, key & 7
    if wt == 0:
        v, s = 0, 0
        while True:
            b = data[i]; i += 1; v |= (b & 0x7f) << s; s += 7
            if b < 0x80: break
        if f == 9: t = v
    elif wt == 2:
        n, s = 0, 0
        while True:
            b = data[i]; i += 1; n |= (b & 0x7f) << s; s += 7
            if b < 0x80: break
        i += n
    else:
        sys.exit("wire type %d" % wt)
if t != int(sys.argv[2]):
    sys.exit("time_nanos %s, first event at %s" % (t, sys.argv[2]))
EOF

# ---- an empty profile: no such events, and a window with none ---------------------------
"$bin/rec-flame" -o "$tmp/empty.pb.gz" "$root/testdata/valid/tiny.rec" 2>"$tmp/empty.err" ||
	fail "rec-flame, no rec.CPUSample: exit $?"
grep -q "no rec.CPUSample events" "$tmp/empty.err" || fail "rec-flame, no rec.CPUSample: $(cat "$tmp/empty.err")"
"$bin/rec-flame" --from 1h -o "$tmp/window.pb.gz" "$tmp/work.rec" || fail "rec-flame --from 1h: exit $?"
for f in empty window; do
	pprof -raw "$tmp/$f.pb.gz" >"$tmp/$f.raw" 2>"$tmp/$f.raw.err" ||
		{ fail "$f profile: go tool pprof -raw: exit $?"; cat "$tmp/$f.raw.err"; continue; }
	grep -q '^samples/count\[dflt\] cpu/nanoseconds$' <(sed -n '/^Samples:/,$p' "$tmp/$f.raw" | sed -n 2p) ||
		fail "$f profile: sample types: $(cat "$tmp/$f.raw")"
	[ "$(sed -n '/^Samples:/,/^Locations/p' "$tmp/$f.raw" | wc -l)" = 3 ] ||
		fail "$f profile has samples: $(cat "$tmp/$f.raw")"
done

# ---- protoc --decode_raw: the message as protobuf sees it --------------------------------
if [ "$have_protoc" = 1 ]; then
	gzip -dc "$tmp/work.rec.CPUSample.pb.gz" >"$tmp/work.pb"
	protoc --decode_raw <"$tmp/work.pb" >"$tmp/work.decoded" || fail "protoc --decode_raw: exit $?"
	python3 - "$tmp/work.decoded" <<'EOF' || fail "protoc --decode_raw: string table"
import sys
strs = [l[3:].strip() for l in open(sys.argv[1]) if l.startswith("6: ")]
if not strs or strs[0] != '""':
    sys.exit("string_table[0] is %r" % (strs[:1],))
dup = sorted(s for s in set(strs) if strs.count(s) > 1)
if dup:
    sys.exit("strings twice: %s" % dup)
for s in ('"samples"', '"cpu"', '"count"', '"nanoseconds"', '"thread_name"', '"thread_id"', '"spin-a"'):
    if s not in strs:
        sys.exit("no %s in the string table" % s)
print("   protoc: %d strings, each once" % len(strs))
EOF
else
	echo "flame_pprof: no protoc (protobuf-compiler); the --decode_raw check skipped"
fi

# ---- usage errors --------------------------------------------------------------------------
for args in "--diff $tmp/before.rec" "--reverse" "--minwidth 1%"; do
	rc=0
	# shellcheck disable=SC2086 # word splitting intended
	"$bin/rec-flame" --format pprof $args "$tmp/after.rec" >/dev/null 2>"$tmp/u.err" || rc=$?
	[ "$rc" = 2 ] || fail "rec-flame --format pprof $args: exit $rc, expected 2"
done
cli_done flame_pprof
