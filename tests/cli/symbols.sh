#!/usr/bin/env bash
# Frames named, with source file, line and inline frames (issue 19), checked
# against an independent oracle, elfutils' eu-addr2line -f -i (installed here
# when missing, with libc6-dbg for libc's debug file):
#   1. tests/cli/symbols/prog.c built with -O2 -g (functions inlined two
#      levels deep), recorded with rec-record; it dlopen()s plugin.c's library
#      after the recording started.  For every frame of every stack of the
#      program and the plugin, the recorded chain (inlined functions, then the
#      function; names, file base names, lines) equals eu-addr2line's for the
#      same address (module offset - 1: a return address), and the expected
#      call sites are there (leaf_sleep < middle < worker, plugin_nap <
#      plugin_run);
#   2. the same program and library stripped (objcopy --only-keep-debug,
#      strip, debug files under DIR/.build-id/xx/yyyy.debug), recorded, then
#      rec-symbolize --debug-dir DIR: every stack equals the unstripped
#      recording's, frame for frame (function, offsets, file, line, inline);
#      the stripped recording's own frames are unnamed;
#   3. the program recorded with REC_OPTIONS=symbolize=off: its frames are
#      module + offset only, flagged (rec-print's note points to
#      rec-symbolize); rec-symbolize gives the unstripped recording's stacks
#      again; with --only-debug-dirs and an empty DIR, libc's unexported
#      __libc_start_call_main stays unnamed at the same module offset, while
#      with libc6-dbg (/usr/lib/debug, the recorder's own lookup too) it is
#      named with its file and line;
#   4. a static executable (static.c, librec.a): frames against eu-addr2line;
#   5. damaged and hostile debug files (truncated, wrong build-id, a section
#      that claims 2^62 bytes, random bytes): rec-symbolize neither crashes
#      nor hangs (timeout) and leaves the frames unresolved or resolves them
#      correctly; the recorder with a damaged .gnu_debuglink file beside a
#      stripped program neither (its recording reads back, unnamed frames);
#   6. rec-symbolize's report counts what it resolved and left;
#   7. whose sources the recorder reads: plain.rec is recorded with
#      symbolize=all (every module's files, lines and inline frames); the
#      default (symbolize=on) gives the same stacks except that the frames of
#      the system's libraries (libc) keep their names and offsets without
#      file, line or inline frames, and rec-symbolize of it gives plain.rec's
#      stacks again; symbolize=names gives no file anywhere, every name.
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
cd "$root" || exit 1
need_exe "$bin/rec-print" "$bin/rec-symbolize"
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }
command -v cc >/dev/null || { echo "FAIL: cc missing"; exit 1; }
need_pkg() { # PACKAGE: installed unless it is
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed" && return 0
	apt-get install -y "$1" >"$tmp/apt.log" 2>&1 || { echo "FAIL: apt-get install $1"; cat "$tmp/apt.log"; exit 1; }
}
need_pkg elfutils
need_pkg libc6-dbg
build=$(cd "${BUILD:-$(dirname "$bin")}" && pwd)
bin=$(cd "$bin" && pwd)
# The recordings are made with rec-record (the preload library) and a static
# program linked with librec.a.  Under SAN=1 the preload cannot run (ASan's
# runtime must come first in a process, tests/cli/lib/preload.sh) and a
# sanitized librec.a needs the sanitizers at link time, so the recordings
# come from the plain build ($root/build) while rec-symbolize, rec-print and
# the reader under test are the sanitized ones.
recbin=$bin reclib=$build/lib/librec.a
if [ "${SAN:-}" = 1 ]; then
	recbin=$root/build/bin reclib=$root/build/lib/librec.a
	need_exe "$recbin/rec-record"
	[ -f "$reclib" ] || { echo "FAIL: $reclib missing (SAN=1 records with the plain build)"; exit 1; }
fi
src=$root/tests/cli/symbols
export REC_OPTIONS=quiet=1

# ---- the programs
mkdir -p "$tmp/plain" "$tmp/stripped" "$tmp/dbg"
cc -O2 -g -fno-omit-frame-pointer -o "$tmp/plain/prog" "$src/prog.c" -ldl || fail "cc prog"
cc -O2 -g -fno-omit-frame-pointer -shared -fPIC -o "$tmp/plain/libplug.so" "$src/plugin.c" || fail "cc plugin"
for f in prog libplug.so; do
	cp "$tmp/plain/$f" "$tmp/stripped/$f"
	objcopy --only-keep-debug "$tmp/plain/$f" "$tmp/$f.debug" || fail "objcopy $f"
	strip "$tmp/stripped/$f" || fail "strip $f"
	bid=$(readelf -n "$tmp/plain/$f" | sed -n 's/.*Build ID: //p')
	[ -n "$bid" ] || fail "$f has no build-id"
	mkdir -p "$tmp/dbg/.build-id/${bid:0:2}"
	cp "$tmp/$f.debug" "$tmp/dbg/.build-id/${bid:0:2}/${bid:2}.debug"
done
readelf -S "$tmp/stripped/prog" | grep -q '\.symtab' && fail "stripped prog still has a symbol table"

record() { # DIR OUT [ENV...]: record DIR/prog, which dlopens DIR/libplug.so
	local d=$1 out=$2; shift 2
	(cd "$d" && env "$@" "$recbin/rec-record" -q -o "$out" ./prog "$d/libplug.so") || fail "record $d -> $out"
}
record_opt() { # DIR OUT OPTION...: record() with rec-record's own options
	local d=$1 out=$2; shift 2
	(cd "$d" && "$recbin/rec-record" -q "$@" -o "$out" ./prog "$d/libplug.so") || fail "record $d -> $out ($*)"
}
# symbolize= through REC_OPTIONS and through rec-record --symbolize: the
# same checks below hold for both ways in.
record "$tmp/plain" "$tmp/plain.rec" REC_OPTIONS=quiet=1,symbolize=all
record "$tmp/plain" "$tmp/default.rec"
record "$tmp/plain" "$tmp/names.rec" REC_OPTIONS=quiet=1,symbolize=names
record "$tmp/stripped" "$tmp/stripped.rec"
record "$tmp/plain" "$tmp/off.rec" REC_OPTIONS=quiet=1,symbolize=off
record_opt "$tmp/plain" "$tmp/cli-all.rec" --symbolize all
record_opt "$tmp/plain" "$tmp/cli-on.rec" --symbolize on
record_opt "$tmp/plain" "$tmp/cli-names.rec" --symbolize names
record_opt "$tmp/plain" "$tmp/cli-off.rec" --symbolize off
for f in plain default names stripped off cli-all cli-on cli-names cli-off; do
	"$bin/rec-print" --json "$tmp/$f.rec" >"$tmp/$f.json" || fail "rec-print --json $f.rec"
done
"$bin/rec-symbolize" --debug-dir "$tmp/dbg" "$tmp/stripped.rec" "$tmp/stripped-sym.rec" 2>"$tmp/sym1.err" ||
	fail "rec-symbolize stripped: $(cat "$tmp/sym1.err")"
"$bin/rec-symbolize" "$tmp/off.rec" "$tmp/off-sym.rec" 2>"$tmp/sym2.err" || fail "rec-symbolize off: $(cat "$tmp/sym2.err")"
"$bin/rec-symbolize" "$tmp/default.rec" "$tmp/default-sym.rec" 2>"$tmp/sym4.err" ||
	fail "rec-symbolize default: $(cat "$tmp/sym4.err")"
mkdir -p "$tmp/empty"
"$bin/rec-symbolize" --only-debug-dirs --debug-dir "$tmp/empty" "$tmp/off.rec" "$tmp/off-nolibc.rec" 2>"$tmp/sym3.err" ||
	fail "rec-symbolize --only-debug-dirs: $(cat "$tmp/sym3.err")"
for f in stripped-sym off-sym off-nolibc default-sym; do
	"$bin/rec-print" --json "$tmp/$f.rec" >"$tmp/$f.json" || fail "rec-print --json $f.rec"
done
"$bin/rec-print" "$tmp/off.rec" >"$tmp/off.txt" || fail "rec-print off.rec"
grep -q "^note: [0-9]* printed frames of modules with a build-id have no name (module+offset only): 'rec-symbolize IN OUT \[--debug-dir DIR\]'" "$tmp/off.txt" ||
	fail "rec-print does not point to rec-symbolize: $(tail -1 "$tmp/off.txt")"
"$bin/rec-print" "$tmp/plain.rec" | grep -q "^note:" && fail "rec-print notes unsymbolized frames in plain.rec"
# The exporters and rec-print --json say it on stderr, with the frames
# without names the file defines (counted per chunk); not for a file whose
# frames are named, nor after rec-symbolize.
undefined=$(python3 - "$tmp/off.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["recording"]["events"]
print(sum(1 for e in ev for f in (e["values"].get("stackTrace") or {}).get("frames", [])
          if not f.get("function") and f.get("module")))
PY
)
[ "${undefined:-0}" -gt 0 ] || fail "off.rec has no frame without a name to note"
note_re="note: [0-9]+ frames? of modules with a build-id ha(s|ve) no name \(module\+offset only\): 'rec-symbolize IN OUT \[--debug-dir DIR\]'"
for tool in "rec-flame -o /dev/null" "rec-export --format pprof -o /dev/null" "rec-timeline -o /dev/null" "rec-print --json"; do
	# shellcheck disable=SC2086 # the tool and its options
	$bin/$tool "$tmp/off.rec" >/dev/null 2>"$tmp/note.err" || fail "$tool off.rec: $(cat "$tmp/note.err")"
	grep -Eq "$note_re" "$tmp/note.err" || fail "$tool does not point to rec-symbolize: $(cat "$tmp/note.err")"
	# shellcheck disable=SC2086
	$bin/$tool "$tmp/off-sym.rec" >/dev/null 2>"$tmp/note2.err" || fail "$tool off-sym.rec"
	grep -q "note:" "$tmp/note2.err" && fail "$tool notes unsymbolized frames after rec-symbolize: $(cat "$tmp/note2.err")"
done
# rec-export's Parquet and JSON lines: the rows of the frames table without
# a name (build-id, no function), counted from the exported rows themselves
for fmt in parquet jsonl; do
	"$bin/rec-export" --format $fmt -o "$tmp/exp-$fmt" "$tmp/off.rec" >/dev/null 2>"$tmp/exp.err" ||
		fail "rec-export $fmt off.rec: $(cat "$tmp/exp.err")"
	grep -Eq "$note_re" "$tmp/exp.err" || fail "rec-export $fmt does not point to rec-symbolize: $(cat "$tmp/exp.err")"
	if [ $fmt = jsonl ]; then
		rows=$(cat "$tmp"/exp-jsonl/type=frames/*/*/*.jsonl | python3 -c '
import json, sys
print(sum(1 for l in sys.stdin for f in [json.loads(l)]
          if not f["function"] and f["build_id"] and f["inline_depth"] == 0))')
		grep -q "note: $rows frames\? of" "$tmp/exp.err" ||
			fail "rec-export jsonl: $rows frames rows without a name, the note says: $(cat "$tmp/exp.err")"
	fi
	"$bin/rec-export" --format $fmt -o "$tmp/exp-$fmt-sym" "$tmp/off-sym.rec" >/dev/null 2>"$tmp/exp2.err" ||
		fail "rec-export $fmt off-sym.rec"
	grep -q "note:" "$tmp/exp2.err" && fail "rec-export $fmt notes after rec-symbolize: $(cat "$tmp/exp2.err")"
done

# ---- 4. the static executable
pcl=$(pkg-config --static --libs libzstd liblz4 zlib libdw 2>/dev/null)
if cc -static -O2 -g -fno-omit-frame-pointer -I"$root/libfmt/include" -o "$tmp/static" "$src/static.c" \
	"$reclib" -Wl,-u,rec_recorder_default $pcl -pthread -ldl -lm 2>"$tmp/static.err"; then
	REC_OUTPUT=$tmp/static.rec "$tmp/static" || fail "static program"
	"$bin/rec-print" --json "$tmp/static.rec" >"$tmp/static.json" || fail "rec-print static.rec"
else
	fail "cannot link the static program: $(grep -v warning "$tmp/static.err" | head -3)"
fi

# ---- 5. damaged and hostile debug files
python3 - "$tmp" <<'EOF' || fail "making the hostile debug files"
import os, struct, sys, random
tmp = sys.argv[1]
good = open(os.path.join(tmp, "prog.debug"), "rb").read()
plug = open(os.path.join(tmp, "libplug.so.debug"), "rb").read()
def huge(b):  # every section claims 2^62 bytes at offset 2^40
    b = bytearray(b)
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3A)
    for i in range(1, shnum):
        o = shoff + i * shentsize
        struct.pack_into("<QQ", b, o + 0x18, 1 << 40, 1 << 62)
    return bytes(b)
random.seed(19)
rnd = bytearray(good)
for _ in range(2000):
    rnd[random.randrange(64, len(rnd))] = random.randrange(256)
for name, data in [("truncated", good[:len(good) // 3]), ("wrongid", plug), ("huge", huge(good)),
                   ("random", bytes(rnd)), ("empty", b"")]:
    open(os.path.join(tmp, "hostile-" + name), "wb").write(data)
EOF
bid=$(readelf -n "$tmp/plain/prog" | sed -n 's/.*Build ID: //p')
for h in truncated wrongid huge random empty; do
	d=$tmp/h-$h
	mkdir -p "$d/.build-id/${bid:0:2}"
	cp "$tmp/hostile-$h" "$d/.build-id/${bid:0:2}/${bid:2}.debug"
	rc=0
	timeout 60 "$bin/rec-symbolize" --only-debug-dirs --debug-dir "$d" "$tmp/stripped.rec" "$tmp/h-$h.rec" 2>"$tmp/h-$h.err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "rec-symbolize with a $h debug file: exit $rc: $(head -3 "$tmp/h-$h.err")"
		continue
	fi
	"$bin/rec-print" --json "$tmp/h-$h.rec" >"$tmp/h-$h.json" || fail "rec-print h-$h.rec"
done
# the recorder: a stripped program whose .gnu_debuglink file beside it is damaged
mkdir -p "$tmp/linked"
cp "$tmp/plain/prog" "$tmp/linked/prog"
cp "$tmp/plain/libplug.so" "$tmp/linked/libplug.so"
objcopy --only-keep-debug "$tmp/linked/prog" "$tmp/linked/prog.debug"
strip "$tmp/linked/prog"
objcopy --add-gnu-debuglink="$tmp/linked/prog.debug" "$tmp/linked/prog"
for h in truncated huge; do
	cp "$tmp/hostile-$h" "$tmp/linked/prog.debug"
	rc=0
	(cd "$tmp/linked" && timeout 60 "$recbin/rec-record" -q -o "$tmp/linked-$h.rec" ./prog "$tmp/linked/libplug.so") || rc=$?
	[ "$rc" -eq 0 ] || fail "recording with a $h debuglink file: exit $rc"
	"$bin/rec-print" --json "$tmp/linked-$h.rec" >"$tmp/linked-$h.json" || fail "rec-print linked-$h.rec"
done

# ---- the checks
python3 - "$tmp" <<'EOF' || fail "frames"
import json, os, re, subprocess, sys
tmp = sys.argv[1]
bad = 0
def fail(msg):
    global bad
    bad += 1
    print("FAIL: " + msg)

def stacks(name):
    out = []
    for ev in json.load(open(os.path.join(tmp, name + ".json")))["recording"]["events"]:
        st = ev["values"].get("stackTrace")
        if st and ev["type"] == "rec.Sleep":
            out.append(st["frames"])
    return out

def key(fr):  # a frame without its module's path (the copies live in other directories)
    return (fr["function"], fr["functionOffset"], os.path.basename(fr["module"] or ""),
            fr["moduleOffset"], fr["file"], fr["line"], fr["inline"])

def groups(frames):  # [(physical frame, [inlined frames innermost first])]
    out, pend = [], []
    for fr in frames:
        if fr["inline"]:
            pend.append(fr)
        else:
            out.append((fr, pend))
            pend = []
    if pend:
        fail("inline frames without their function at the end of a stack")
    return out

def oracle(module, offsets):
    """eu-addr2line -f -i for return addresses offset - 1: per address the
    chain [(function, file base name, line)], innermost first."""
    addrs = ["0x%x" % (o - 1) for o in offsets]
    out = subprocess.run(["eu-addr2line", "-f", "-i", "--pretty-print", "-e", module] + addrs,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    res, cur = [], None
    for line in out:
        m = re.match(r"^( \(inlined by\) )?(\S+) at (.*?):(\d+)(:\d+)?$", line)
        if not m:
            fail("eu-addr2line said %r" % line)
            continue
        item = (m.group(2), os.path.basename(m.group(3)), int(m.group(4)))
        if m.group(1):
            cur.append(item)
        else:
            cur = [item]
            res.append(cur)
    if len(res) != len(addrs):
        fail("eu-addr2line gave %d answers for %d addresses" % (len(res), len(addrs)))
    return res

def check_oracle(name, modules):
    seen, checked = set(), 0
    chains = set()
    for frames in stacks(name):
        for phys, inl in groups(frames):
            mod = phys["module"] or ""
            if os.path.basename(mod) not in modules:
                continue
            off = int(phys["moduleOffset"], 16)
            if (mod, off) in seen:
                continue
            seen.add((mod, off))
            got = [(f["function"], os.path.basename(f["file"] or "??"), f["line"] or 0)
                   for f in inl + [phys]]
            want = oracle(modules[os.path.basename(mod)], [off])[0]
            if got != want:
                fail("%s: %s+0x%x: recorded %s, eu-addr2line %s" % (name, os.path.basename(mod), off, got, want))
            depths = [f["inline"] for f in inl + [phys]]
            if depths != list(range(len(inl), -1, -1)):
                fail("%s: inline depths %s" % (name, depths))
            chains.add(tuple(g[0] for g in got))
            checked += 1
    return checked, chains

progs = {"prog": os.path.join(tmp, "plain/prog"), "libplug.so": os.path.join(tmp, "plain/libplug.so")}
n, chains = check_oracle("plain", progs)
for want in [("leaf_sleep", "middle", "worker"), ("direct",), ("main",), ("plugin_nap", "plugin_run")]:
    if want not in chains:
        fail("plain: no frame chain %s among %s" % (want, sorted(chains)))
if n < 5:
    fail("plain: only %d frames checked against eu-addr2line" % n)
n2, chains2 = check_oracle("static", {"static": os.path.join(tmp, "static")})
if ("st_leaf", "st_worker") not in chains2 or n2 < 2:
    fail("static: frames %s (%d checked)" % (sorted(chains2), n2))

# 2./3. symbolized copies equal the unstripped recording, stack for stack
def stackset(name):
    return sorted(set(tuple(key(f) for f in fr) for fr in stacks(name)))
plain = stackset("plain")
for name in ["stripped-sym", "off-sym", "default-sym"]:
    got = stackset(name)
    if got != plain:
        fail("%s differs from the unstripped recording:\n  %s\n  vs\n  %s" % (name, got[:3], plain[:3]))
for name in ["stripped", "off"]:
    for frames in stacks(name):
        for f in frames:
            mod = os.path.basename(f["module"] or "")
            # the plugin's exported plugin_run is named from .dynsym
            if (mod == "prog" and f["function"]) or (mod in progs and f["file"]):
                fail("%s: a frame of the program is named before rec-symbolize: %s" % (name, f))
                break

# rec-record --symbolize MODE records what REC_OPTIONS=symbolize=MODE does
for cli, env in [("cli-all", "plain"), ("cli-on", "default"), ("cli-names", "names"), ("cli-off", "off")]:
    if not stackset(cli):
        fail("%s: no stacks" % cli)
    elif stackset(cli) != stackset(env):
        fail("rec-record --symbolize %s differs from %s.rec:\n  %s\n  vs\n  %s"
             % (cli[4:], env, stackset(cli)[:2], stackset(env)[:2]))

# 7. the default: the system's libraries by name, the program's sources
def system(f):
    return re.match(r"/(usr/)?lib(32|64|x32)?/", f["module"] or "") is not None
def no_system_sources(frames):
    return tuple((f["function"], f["functionOffset"], os.path.basename(f["module"] or ""), f["moduleOffset"],
                  None, None, 0) if system(f) else key(f)
                 for f in frames if not (system(f) and f["inline"]))
if sorted(set(no_system_sources(fr) for fr in stacks("plain"))) != \
        sorted(set(tuple(key(f) for f in fr) for fr in stacks("default"))):
    fail("default: the stacks are not plain's with the system libraries' sources left out")
libc_named = [f for fr in stacks("default") for f in fr if system(f) and f["function"]]
if not libc_named:
    fail("default: no frame of a system library named")
for fr in stacks("default"):
    for f in fr:
        if system(f) and (f["file"] or f["line"] or f["inline"]):
            fail("default: a system library's frame with a source: %s" % f)
            break
if not any(f["file"] and system(f) for fr in stacks("plain") for f in fr):
    fail("plain (symbolize=all): no system library's frame has a file")
if not any(f["file"] and os.path.basename(f["module"] or "") == "prog" for fr in stacks("default") for f in fr):
    fail("default: the program's frames have no files")
for fr in stacks("names"):
    for f in fr:
        if f["file"] or f["inline"]:
            fail("names: a frame with a source: %s" % f)
            break
        if os.path.basename(f["module"] or "") == "prog" and not f["function"]:
            fail("names: an unnamed frame of prog: %s" % f)
            break
if not stacks("names"):
    fail("names: no stacks")

# libc's unexported __libc_start_call_main: named with libc6-dbg, unnamed but stable without
def libc_roots(name):
    return {(f["function"], f["moduleOffset"], f["file"] is not None)
            for fr in stacks(name) for f in fr if os.path.basename(f["module"] or "") == "libc.so.6"}
named = libc_roots("plain")
if not any(fn == "__libc_start_call_main" and has_file for fn, _, has_file in named):
    fail("plain: libc's __libc_start_call_main not named with file and line: %s" % named)
if libc_roots("off-sym") != named:
    fail("off-sym: libc frames %s, recorder's %s" % (libc_roots("off-sym"), named))
bare = libc_roots("off-nolibc")
want = {(None, off, False) for fn, off, _ in named if fn == "__libc_start_call_main"}
if not want or not want <= bare:
    fail("off-nolibc: libc frames %s, want %s among them (unnamed, same offset)" % (bare, want))
if stackset("off-nolibc") == plain:
    fail("off-nolibc equals the recorder's stacks: libc was named without its debug file")
# prog's frames are named in off-nolibc (from prog's own symbols and DWARF)
for fr in stacks("off-nolibc"):
    for f in fr:
        if os.path.basename(f["module"] or "") == "prog" and not f["function"]:
            fail("off-nolibc: an unnamed frame of prog: %s" % f)

# 5. hostile debug files: each frame either resolved exactly as in plain or left as read
plain_keys = {key(f) for fr in stacks("plain") for f in fr}
stripped_keys = {key(f) for fr in stacks("stripped") for f in fr}
for h in ["truncated", "wrongid", "huge", "random", "empty"]:
    p = os.path.join(tmp, "h-%s.json" % h)
    if not os.path.exists(p):
        continue
    for fr in stacks("h-" + h):
        for f in fr:
            if key(f) not in plain_keys and key(f) not in stripped_keys:
                fail("h-%s: a frame neither resolved right nor left as read: %s" % (h, f))
    if h in ("wrongid", "empty", "truncated"):
        for fr in stacks("h-" + h):
            for f in fr:
                if os.path.basename(f["module"] or "") == "prog" and f["file"]:
                    fail("h-%s: a frame of prog resolved from a wrong debug file: %s" % (h, f))
for h in ["truncated", "huge"]:
    if len(stacks("linked-" + h)) < 5:
        fail("linked-%s: %d sleeps recorded" % (h, len(stacks("linked-" + h))))
print("symbols: %d distinct frames of prog and the plugin, %d of the static program equal eu-addr2line's" % (n, n2))
sys.exit(1 if bad else 0)
EOF

# ---- 6. the report
grep -Eq "^rec-symbolize: .*stripped.rec: [0-9]+ frames: [1-9][0-9]* resolved, 0 left unresolved, [0-9]+ had source lines already; [0-9]+ events, [0-9]+ chunks?$" "$tmp/sym1.err" ||
	fail "rec-symbolize report: $(cat "$tmp/sym1.err")"
grep -q "no debug file or binary found" "$tmp/sym1.err" && fail "rec-symbolize missed a module: $(cat "$tmp/sym1.err")"
grep -Eq "[1-9][0-9]* left unresolved" "$tmp/h-wrongid.err" || fail "wrong build-id: frames not counted as unresolved: $(cat "$tmp/h-wrongid.err")"
cli_done symbols
