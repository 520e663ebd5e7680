#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""collapse.py - fold `jfr print --json` output into collapsed stacks.

    jfr print --json --events TYPE FILE | python3 bench/jfr/collapse.py

The script a user would write to get a flame graph's input from a JFR file
(the JFR side of bench/exporters.sh).  It streams standard input: the
"events" array is decoded one event object at a time with the standard
library's json.JSONDecoder.raw_decode, so memory follows one event plus
the distinct stacks, not the file.  Output: one line per distinct stack,
"root;caller;...;leaf COUNT" (frames "package.Class.method", the same
folded format as `rec-flame`), sorted; events without a stack are counted
on standard error.
"""
import json
import sys

CHUNK = 1 << 20


def main() -> int:
    dec = json.JSONDecoder()
    inp = sys.stdin
    buf = ""
    eof = False

    def more() -> bool:
        nonlocal buf, eof
        if eof:
            return False
        data = inp.read(CHUNK)
        if not data:
            eof = True
            return False
        buf += data
        return True

    # find the start of the events array
    while True:
        i = buf.find('"events"')
        if i >= 0:
            j = buf.find("[", i)
            if j >= 0:
                pos = j + 1
                break
        if not more():
            print("collapse.py: no \"events\" array in the input", file=sys.stderr)
            return 1

    folded = {}
    names = {}
    events = nostack = 0
    ws = " \t\r\n,"
    while True:
        while True:
            while pos < len(buf) and buf[pos] in ws:
                pos += 1
            if pos < len(buf) or not more():
                break
        if pos >= len(buf):
            print("collapse.py: truncated input", file=sys.stderr)
            return 1
        if buf[pos] == "]":
            break
        try:
            ev, end = dec.raw_decode(buf, pos)
        except json.JSONDecodeError:
            if not more():
                print("collapse.py: truncated or invalid JSON", file=sys.stderr)
                return 1
            continue
        # drop what was decoded so the buffer stays small
        buf = buf[end:]
        pos = 0
        events += 1
        st = ev.get("values", {}).get("stackTrace")
        if not st or not st.get("frames"):
            nostack += 1
            continue
        parts = []
        for fr in reversed(st["frames"]):
            m = fr["method"]
            key = (m["type"]["name"], m["name"])
            name = names.get(key)
            if name is None:
                name = (key[0].replace("/", ".") + "." + key[1]).replace(";", ":")
                names[key] = name
            parts.append(name)
        stack = ";".join(parts)
        folded[stack] = folded.get(stack, 0) + 1

    out = sys.stdout
    for stack in sorted(folded):
        out.write(f"{stack} {folded[stack]}\n")
    print(f"collapse.py: {events} events, {len(folded)} distinct stacks, {nostack} without a stack",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
