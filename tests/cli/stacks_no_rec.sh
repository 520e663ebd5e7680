#!/usr/bin/env bash
# No stack of any built-in event starts with (or holds a leading) frame of
# librec: the recorder drops its own frames at capture time by address (the
# section rec_text, libfmt/record/stack_capture.c), so the first frame is the
# program's call site.  Checked against the ELF files, not names:
#   - the build: every function symbol of librec.a is in a section rec_text
#     (objdump -t) and no librec object has code outside it; in the statically
#     linked requestwatch every global function of librec.a lies inside
#     [__start_rec_text, __stop_rec_text) (nm) and every function of
#     requestwatch.o outside;
#   - recordings: the demo scenario (tests/cli/lib/requestwatch_scenario.sh)
#     with the real requestwatch (librec.a linked in) and with
#     requestwatch-shared (linked against librec.so), a CPU-bound program
#     (rec_test_findings cpu: rec.CPUSample) and a crash (rec_test_crash segv:
#     rec.Crash).  Over every frame of every stack of every event
#     (rec-print --json): the frame's module offset is outside the module's
#     rec_text range when the module has one (nm of the module file the
#     recording names; librec.so has one, and no frame may be in it); the first frames are the call sites the programs
#     have: serve_blocking for the lock waits, serve_blocking /
#     serve_blocking_fixed / warm_up (the warm-up) for the sleeps, serve_allocating /
#     warm_up for rec.Alloc, crash_here for the crash.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
cd "$root" || exit 1
need_exe "$bin/rec-print" "$bin/requestwatch" "$tests/requestwatch-shared" \
	"$tests/rec_test_findings" "$tests/rec_test_crash"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
# the build's files (under valgrind $bin holds wrappers: BUILD names the build)
build=$(cd "${BUILD:-$(dirname "$bin")}" && pwd)
lib=$build/lib/librec.a
obj=$build/obj/examples/requestwatch.o
[ -f "$lib" ] && [ -f "$obj" ] || { echo "FAIL: $lib or $obj missing"; exit 1; }

# ---- the build: librec's code is one range
objdump -t "$lib" >"$tmp/lib.syms" 2>/dev/null || fail "objdump -t $lib"
outside=$(awk '$0 ~ / F / && $4 != "rec_text" { print }' "$tmp/lib.syms" | head -5)
[ -z "$outside" ] || fail "functions of librec.a outside rec_text: $outside"
nfunc=$(grep -c ' F rec_text' "$tmp/lib.syms")
[ "$nfunc" -gt 500 ] || fail "only $nfunc functions of librec.a in rec_text"
code=$(objdump -h "$lib" 2>/dev/null | awk '$2 ~ /^\.text/ && $3 !~ /^0+$/ { print $2 }' | sort -u)
[ -z "$code" ] || fail "librec.a has code outside rec_text: $code"
python3 - "$tmp/lib.syms" "$obj" "$build/bin/requestwatch" <<'EOF' || fail "requestwatch: librec's functions are not one range"
import subprocess, sys
libsyms, obj, exe = sys.argv[1:]
glob = set()
for line in open(libsyms):
    f = line.split()
    if len(f) >= 6 and f[1] == 'g' and f[2] == 'F':
        glob.add(f[-1])
def nm(path):
    out = subprocess.run(['nm', '--defined-only', path], capture_output=True, text=True).stdout
    return [(int(a, 16), t, n) for a, t, n in (l.split() for l in out.splitlines() if len(l.split()) == 3)]
syms = nm(exe)
addr = {n: a for a, t, n in syms}
lo, hi = addr['__start_rec_text'], addr['__stop_rec_text']
bad = [n for n in glob if n in addr and not lo <= addr[n] < hi]
found = sum(1 for n in glob if n in addr)
# names the executable has once (ASan's constructors, _sub_I_00099_1, are in
# every object: the program's own and librec's)
count = {}
for a, t, n in syms:
    count[n] = count.get(n, 0) + 1
ours = [n for a, t, n in nm(obj) if t in 'tT' and count.get(n) == 1]
inside = [n for n in ours if n in addr and lo <= addr[n] < hi]
print(f'requestwatch: rec_text [{lo:#x}, {hi:#x}), {found} of librec\'s global functions linked, '
      f'{len(bad)} outside; {len(ours)} functions of requestwatch.o, {len(inside)} inside')
sys.exit(1 if bad or inside or found < 50 or not ours else 0)
EOF

# ---- recordings
BIN=$bin
work=$tmp
server_pid=
trap 'if declare -F rw_kill >/dev/null; then rw_kill; fi; rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*"; [ -f "$work/server.err" ] && sed 's/^/  server: /' "$work/server.err"; exit 1; }
# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source tests/cli/lib/requestwatch_scenario.sh
fail_soft() { echo "FAIL: $*"; fails=$((fails + 1)); }

scenario() { # scenario REC: the demo's requests against $BIN/requestwatch
	fail() { die "$@"; }
	rw_start "$1"
	burst 4 /requests/blocking
	burst 4 /requests/blocking-fixed
	burst 1 /requests/fast
	burst 1 /requests/allocating
	rw_stop
	fail() { fail_soft "$@"; }
}
scenario "$tmp/static.rec"
BIN=$tmp/shared-bin
mkdir -p "$BIN"
ln -s "$(cd "$tests" && pwd)/requestwatch-shared" "$BIN/requestwatch"
scenario "$tmp/shared.rec"
REC_OUTPUT="$tmp/cpu.rec" timeout 60 "$tests/rec_test_findings" cpu 3 200 >/dev/null ||
	fail "rec_test_findings cpu: exit $?"
# the crash helper dies of SIGSEGV (ASan must not take the signal)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}handle_segv=0"
(timeout -k 5 60 "$tests/rec_test_crash" segv "$tmp/crash.rec" >/dev/null 2>&1) 2>/dev/null
for r in static shared cpu crash; do
	"$bin/rec-print" --json "$tmp/$r.rec" >"$tmp/$r.json" 2>"$tmp/$r.err" || fail "rec-print --json $r.rec: exit $? $(head -3 "$tmp/$r.err")"
done

python3 - "$tmp" "$build/lib/librec.so" <<'EOF' || fail "stacks of the recordings (above)"
import collections, json, os, subprocess, sys
tmp, libso = sys.argv[1], os.path.realpath(sys.argv[2])
ranges = {}
def rec_range(path):
    """[__start_rec_text, __stop_rec_text) of a module file, None without."""
    if path not in ranges:
        r = None
        if path and os.path.isfile(path):
            out = subprocess.run(['nm', '--defined-only', path], capture_output=True, text=True).stdout
            a = {l.split()[2]: int(l.split()[0], 16) for l in out.splitlines() if len(l.split()) == 3}
            if '__start_rec_text' in a:
                r = (a['__start_rec_text'], a['__stop_rec_text'])
        ranges[path] = r
    return ranges[path]
def off(v):
    return int(v, 16) if isinstance(v, str) else v
ok = True
def bad(msg):
    global ok
    ok = False
    print('FAIL:', msg)
first = {}
for name in ('static', 'shared', 'cpu', 'crash'):
    evs = json.load(open(f'{tmp}/{name}.json'))['recording']['events']
    firsts = collections.defaultdict(collections.Counter)
    nframes = nstacks = 0
    librec_modules = set()
    for e in evs:
        st = e['values'].get('stackTrace')
        if not st or not st['frames']:
            continue
        nstacks += 1
        for i, fr in enumerate(st['frames']):
            nframes += 1
            r = rec_range(fr['module'])
            if r:
                librec_modules.add(os.path.basename(fr['module']))
            if os.path.basename(fr['module'] or '').startswith('librec.so'):
                bad(f"{name}: {e['type']} frame {i} {fr} is in librec.so")
            if r and r[0] <= off(fr['moduleOffset']) < r[1]:
                bad(f"{name}: {e['type']} frame {i} {fr} lies in librec's rec_text {r[0]:#x}-{r[1]:#x} of {fr['module']}")
            if (fr['function'] or '').startswith('rec_'):
                bad(f"{name}: {e['type']} frame {i} is {fr['function']}")
        firsts[e['type']][st['frames'][0]['function'] or '?'] += 1
    print(f"{name}: {nstacks} stacks, {nframes} frames, modules with librec: {sorted(librec_modules)}")
    for t, c in sorted(firsts.items()):
        print(f"  {t}: first frames {dict(c)}")
    first[name] = firsts
    # statically linked: the program's own file has the range, and frames
    # in it are checked; linked against librec.so: no frame may be there
    if name != 'shared' and not librec_modules:
        bad(f"{name}: no frame's module has librec's range: nothing was checked")
if not rec_range(libso):
    bad(f"{libso} has no rec_text range")
for name in ('static', 'shared'):
    f = first[name]
    # serve_blocking's waits; the fixed endpoint's short holds can add a
    # few at serve_blocking_fixed on a slow host (ASan in the fresh-clone CI)
    if not set(f['rec.LockWait']) <= {'serve_blocking', 'serve_blocking_fixed'} or \
       f['rec.LockWait']['serve_blocking'] < 1:
        bad(f"{name}: rec.LockWait first frames {dict(f['rec.LockWait'])}, want serve_blocking")
    if not set(f['rec.Sleep']) <= {'serve_blocking', 'serve_blocking_fixed', 'warm_up'} or \
       f['rec.Sleep']['serve_blocking'] != 4 or f['rec.Sleep']['serve_blocking_fixed'] != 4:
        bad(f"{name}: rec.Sleep first frames {dict(f['rec.Sleep'])}, want 4 serve_blocking, 4 serve_blocking_fixed, warm_up")
    if not set(f['rec.Alloc']) <= {'serve_allocating', 'warm_up'} or f['rec.Alloc']['serve_allocating'] < 1:
        bad(f"{name}: rec.Alloc first frames {dict(f['rec.Alloc'])}, want serve_allocating and warm_up")
if sum(first["cpu"]["rec.CPUSample"].values()) < 1:
    bad(f"cpu: too few CPU samples: {dict(first['cpu']['rec.CPUSample'])}")
if set(first['crash']['rec.Crash']) != {'crash_here'}:
    bad(f"crash: rec.Crash first frames {dict(first['crash']['rec.Crash'])}, want crash_here")
sys.exit(0 if ok else 1)
EOF
cli_done stacks_no_rec
