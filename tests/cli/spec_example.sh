#!/usr/bin/env bash
# spec/EXAMPLE.md must describe testdata/valid/tiny.rec byte for byte.
#
# Every dump line of the document (an offset 0x.... then hex byte pairs, e.g.
# "0x0008  01 00                     Major_Version       1") is extracted, and
#   (a) the offsets must be contiguous: the first is 0x0000 and each next one is
#       the previous offset plus the previous line's byte count;
#   (b) the bytes, concatenated, must be exactly the golden file: same bytes,
#       same length.
# So the document cannot drift from the golden file: if `make testdata`
# regenerates tiny.rec with other bytes, this test fails and EXAMPLE.md must be
# decoded again.
#
# A dump line starts (after optional indentation) with 0x + hex digits and two
# spaces; its bytes are hex pairs separated by single spaces, ending at the end
# of the line or at the next run of two or more spaces (the field column).
# Env: REC_ROOT (repository), REC_EXAMPLE and REC_EXAMPLE_REC override the
# document and the recording (used to check this test against broken copies).
# Exit: 0 pass, 1 mismatch (with the line number and the bytes that differ).
set -euo pipefail
root=${REC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export SPEC_DOC=${REC_EXAMPLE:-$root/spec/EXAMPLE.md}
export SPEC_REC=${REC_EXAMPLE_REC:-$root/testdata/valid/tiny.rec}
exec python3 - <<'PY'
import os, re, sys

doc_path, rec_path = os.environ["SPEC_DOC"], os.environ["SPEC_REC"]

def fail(msg, hint=True):
    print("spec_example: FAIL: %s" % msg)
    if hint:
        print("spec_example: %s no longer matches %s; decode the file again and update the "
              "document (see its first section)" % (doc_path, rec_path))
    sys.exit(1)

try:
    lines = open(doc_path, encoding="utf-8").read().splitlines()
except OSError as e:
    fail("cannot read %s: %s" % (doc_path, e.strerror), hint=False)
try:
    data = open(rec_path, "rb").read()
except OSError as e:
    fail("cannot read %s: %s" % (rec_path, e.strerror), hint=False)

start = re.compile(r"^\s*0x([0-9A-Fa-f]+)  ")
dump = re.compile(r"^\s*0x([0-9A-Fa-f]+)  +([0-9A-Fa-f]{2}(?: [0-9A-Fa-f]{2})*)(?:  .*)?$")

expect = 0  # offset the next dump line must have
nlines = 0
for no, text in enumerate(lines, 1):
    if not start.match(text):
        continue
    m = dump.match(text)
    if not m:
        fail("line %d starts like a dump line but its bytes are not hex pairs "
             "separated by single spaces:\n    %s" % (no, text))
    off = int(m.group(1), 16)
    got = bytes.fromhex(m.group(2).replace(" ", ""))
    nlines += 1
    if off != expect:
        fail("line %d: offset 0x%04x, expected 0x%04x (the previous dump line ends there): "
             "offsets are not contiguous\n    %s" % (no, off, expect, text))
    want = data[off:off + len(got)]
    if got != want:
        for i, b in enumerate(got):
            if i >= len(want):
                fail("line %d: byte at 0x%04x is past the end of %s (%d bytes)\n    %s"
                     % (no, off + i, rec_path, len(data), text))
            if b != want[i]:
                fail("line %d: byte at 0x%04x is %02x in the document, %02x in the file\n    %s"
                     % (no, off + i, b, want[i], text))
    expect = off + len(got)

if nlines == 0:
    fail("no dump lines (0x.... followed by hex byte pairs) found")
if expect != len(data):
    fail("the dump ends at 0x%04x but the file has %d bytes (0x%04x): %d byte(s) are not "
         "described" % (expect, len(data), len(data), len(data) - expect))
print("spec_example: %d dump lines cover all %d bytes of %s, contiguous and identical"
      % (nlines, len(data), rec_path))
PY
