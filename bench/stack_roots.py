#!/usr/bin/env python3
# stack_roots.py - how many CPU samples of a recording reach their thread's
# root, judged independently of the recorder's unwinder: the last frame of
# each rec.CPUSample stack (module + offset, from `rec-print --json-lines
# --events rec.CPUSample --stack-depth 4096`) is resolved by elfutils'
# eu-addr2line (debug files, e.g. Debian's libc6-dbg, found by build-id)
# and is a root when it is libc's start_thread/__clone3/__clone (a thread)
# or the program's main/_start (the main thread).  Used by
# tests/cli/stacks_complete.sh and bench/unwind.sh.
#
#   stack_roots.py SAMPLES.jsonl PROGRAM [--top N] [--thread PREFIX] [--stacked]
#                  [--require MIN:PCT]
#
# Any event type's JSON lines will do (tests/cli/record_memcached.sh checks
# the stacks its threads captured themselves: lock waits, sleeps).
# --thread PREFIX counts only the events of threads whose name starts with
# PREFIX; --stacked leaves out events recorded without a stack (rec.Alloc's
# tail records), which otherwise count as not reaching a root.
# Prints "samples=N rooted=R pct=P frames=F recorder_frames=K" (F: mean
# frames per sample; K: frames in the recorder's own modules, librec*.so,
# which no stack may hold), then the N (default 8) most common last frames,
# one a line.  --require MIN:PCT (the tests' check) exits 1, saying why on
# stderr, unless at least MIN events were counted, at least PCT % of them
# reach a root and no frame is the recorder's.
import collections, json, os, subprocess, sys

def main():
    path, program = sys.argv[1], os.path.realpath(sys.argv[2])
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 8
    prefix = sys.argv[sys.argv.index("--thread") + 1] if "--thread" in sys.argv else None
    stacked = "--stacked" in sys.argv
    require = sys.argv[sys.argv.index("--require") + 1] if "--require" in sys.argv else None
    lasts = collections.Counter()
    n = frames_total = recorder_frames = 0
    for line in open(path):
        s = json.loads(line)["values"]
        if prefix is not None and not (s.get("eventThread") or {}).get("name", "").startswith(prefix):
            continue
        if stacked and not s.get("stackTrace"):
            continue
        frames = s["stackTrace"]["frames"] if s.get("stackTrace") else []
        n += 1
        frames_total += len(frames)
        recorder_frames += sum(1 for f in frames
                               if os.path.basename(f.get("module") or "").startswith("librec"))
        lasts[(frames[-1]["module"], frames[-1]["moduleOffset"]) if frames else (None, None)] += 1
    by_module = collections.defaultdict(list)
    for mod, off in lasts:
        if mod:
            by_module[mod].append(off)
    names = {}
    for mod, offs in by_module.items():
        res = subprocess.run(["eu-addr2line", "-f", "-e", mod] + offs, capture_output=True, text=True)
        lines = res.stdout.split("\n")
        for i, off in enumerate(offs):
            fn = lines[2 * i] if 2 * i < len(lines) else "??"
            if " inlined at " in fn:  # "f inlined at FILE:LINE in g": the function is g
                fn = fn.rsplit(" in ", 1)[1]
            names[(mod, off)] = fn

    def is_root(mod, off):
        if mod is None:
            return False
        fn = names.get((mod, off), "??")
        if os.path.basename(mod).startswith("libc.so"):
            return fn in ("start_thread", "__clone3", "clone3", "__clone", "clone")
        return os.path.realpath(mod) == program and fn in ("main", "_start")

    rooted = sum(c for k, c in lasts.items() if is_root(*k))
    print("samples=%d rooted=%d pct=%.2f frames=%.1f recorder_frames=%d" %
          (n, rooted, 100.0 * rooted / max(n, 1), frames_total / max(n, 1), recorder_frames))
    for (mod, off), c in lasts.most_common(top):
        print("  %6d  last frame %s (%s+%s)%s" % (c, names.get((mod, off), "??"),
                                                 os.path.basename(mod or "?"), off,
                                                 "" if is_root(mod, off) else "  <- not a root"))
    if require:
        least, pct = require.split(":")
        why = None
        if n < int(least):
            why = "only %d events with a stack, want >= %s" % (n, least)
        elif rooted * 100 < n * float(pct):
            why = "%d of %d stacks reach the thread's root, want >= %s %%" % (rooted, n, pct)
        elif recorder_frames:
            why = "%d frames of the recorder's own (librec*) in the stacks" % recorder_frames
        if why:
            sys.stderr.write(why + "\n")
            sys.exit(1)

main()
