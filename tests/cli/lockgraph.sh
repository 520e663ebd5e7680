#!/usr/bin/env bash
# rec-lockgraph end to end, on recordings of real programs:
#   1. rec_test_lockorder takes "alpha" then "beta" on thread order-ab and,
#      after that thread ended, "beta" then "alpha" on thread order-ba (no
#      deadlock can happen, but the order is inconsistent).  --graph order
#      must report the cycle on stderr with both threads and their stacks,
#      exit 0 (3 with --check); the DOT is read back with Graphviz's agread
#      (rec_test_agread) and its nodes and edges checked; --format svg, png
#      and pdf render real files.
#   2. the example service requestwatch under the demo scenario (4
#      concurrent /requests/blocking, 4 /requests/blocking-fixed): in the
#      wait-for graph the global mutex "quote-cache-lock" is the heaviest
#      lock node and the threads that served /requests/blocking (tids from
#      the app.Request events) wait on it; filters --top, --min-wait,
#      --thread, --from/--to change the graph as they should; the holders
#      are charged by hand-off (about 450, 300 and 150 ms for the three
#      holders the three blocked requests waited behind, adding up to the
#      lock's total).
#   3. a dense recording (rec_test_lock_dense: 40 locks x 30 threads, known
#      waits): by default the 10 heaviest locks are drawn, the other 30 are
#      one node, per lock the 3 heaviest waiters and holders, the rest one
#      node each (kind=group) whose edge sums what it replaces, so the drawn
#      wait edges add up to every wait; the title's counts are checked;
#      --all and --top 0 give the complete graph (1480 edges).
# Exits 0 on pass.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
BIN=${REC_BIN:-}
[ -d "$BIN" ] || BIN=$BUILD/bin
TESTS=${REC_TESTS:-}
[ -d "$TESTS" ] || TESTS=$BUILD/tests
export TZ=UTC
# Under SAN=1: Graphviz's and the font libraries' own leaks are not ours.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$PWD/tests/cli/lockgraph/lsan.supp"
for t in "$BIN/rec-lockgraph" "$BIN/rec-print" "$BIN/requestwatch" "$TESTS/rec_test_lockorder" \
	"$TESTS/rec_test_agread" "$TESTS/rec_test_lock_dense"; do
	[ -x "$t" ] || { echo "FAIL: $t missing" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "FAIL: python3 missing" >&2; exit 1; }

work=$(mktemp -d /tmp/lockgraph-test.XXXXXX)
server_pid=
cleanup() {
	if declare -F rw_kill >/dev/null; then rw_kill; fi
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.err; do [ -s "$f" ] && sed "s|^|  $(basename "$f"): |" "$f" >&2; done; exit 1; }
ok() { echo "ok   $*"; }

# ---- 1. lock-order cycle ----------------------------------------------------------
timeout 60 "$TESTS/rec_test_lockorder" "$work/order.rec" || fail "rec_test_lockorder failed"
rc=0
"$BIN/rec-lockgraph" --graph order "$work/order.rec" >"$work/order.dot" 2>"$work/order.err" || rc=$?
[ "$rc" -eq 0 ] || fail "--graph order exited $rc (a cycle is a finding: expected 0)"
grep -q 'lock-order cycle 1 (potential deadlock): \(alpha -> beta -> alpha\|beta -> alpha -> beta\)$' "$work/order.err" ||
	fail "the alpha/beta cycle is not reported on stderr"
[ "$(grep -c 'lock-order cycle' "$work/order.err")" -eq 1 ] || fail "expected exactly one cycle"
grep -q 'by thread order-ab (tid [0-9]*)$' "$work/order.err" || fail "thread order-ab not named in the cycle"
grep -q 'by thread order-ba (tid [0-9]*)$' "$work/order.err" || fail "thread order-ba not named in the cycle"
grep -q '^      at take_alpha_then_beta$' "$work/order.err" || fail "the stack of order-ab is not shown"
grep -q '^      at take_beta_then_alpha$' "$work/order.err" || fail "the stack of order-ba is not shown"
grep -q 'gamma' "$work/order.err" && fail "gamma (taken last, no cycle) is listed as part of a cycle"
ok "cycle alpha <-> beta reported on stderr with both threads and their stacks"
rc=0
"$BIN/rec-lockgraph" --graph order --check "$work/order.rec" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "--check with a cycle exited $rc, expected 3"
ok "--check exits 3 on a cycle"

"$TESTS/rec_test_agread" "$work/order.dot" >"$work/order.agread" 2>"$work/agread.err" || fail "agread could not read the DOT output"
python3 - "$work/order.agread" <<'EOF' || fail "order graph read back by agread"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
def attrs(rest):
    return dict(re.findall(r' (\w+)=((?:(?! \w+=).)*)', rest))
head = lines[0]
nodes = {}
edges = {}
for l in lines[1:]:
    m = re.match(r'node (\S+)( .*)$', l)
    if m:
        nodes[m.group(1)] = attrs(m.group(2))
        continue
    m = re.match(r'edge (\S+) -> (\S+)( .*)$', l)
    if m:
        edges[(m.group(1), m.group(2))] = attrs(m.group(3))
bad = []
if not re.match(r'graph lock_order directed=1 strict=1 nodes=3 edges=4$', head):
    bad.append("header: " + head)
if set(nodes) != {"alpha", "beta", "gamma"}:
    bad.append("nodes: %s" % sorted(nodes))
want = {("alpha", "beta"): "true", ("beta", "alpha"): "true", ("alpha", "gamma"): "false", ("beta", "gamma"): "false"}
if set(edges) != set(want):
    bad.append("edges: %s" % sorted(edges))
for k, cyc in want.items():
    e = edges.get(k, {})
    if e.get("cycle") != cyc or (e.get("color") == "red") != (cyc == "true") or e.get("count") != "1":
        bad.append("edge %s -> %s: %s" % (k[0], k[1], e))
if edges.get(("alpha", "beta"), {}).get("threads") != "order-ab" or edges.get(("beta", "alpha"), {}).get("threads") != "order-ba":
    bad.append("threads on the cycle edges: %s" % edges)
if "take_beta_then_alpha" not in edges.get(("beta", "alpha"), {}).get("tooltip", ""):
    bad.append("the example stack is not in the tooltip")
for n in ("alpha", "beta"):
    if nodes.get(n, {}).get("color") != "red":
        bad.append("node %s is not red" % n)
if nodes.get("gamma", {}).get("color") == "red":
    bad.append("gamma is red")
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
EOF
ok "DOT read back with agread: 3 lock nodes, 4 edges, the 2 cycle edges red"

"$BIN/rec-lockgraph" --graph order --format svg --output "$work/order.svg" "$work/order.rec" 2>/dev/null ||
	fail "--format svg failed"
python3 - "$work/order.svg" <<'EOF' || fail "the SVG"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
text = open(sys.argv[1]).read()
titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
assert "alpha" in titles and "beta" in titles and "gamma" in titles, titles
assert "alpha&#45;&gt;beta" in text or "alpha->beta" in titles, "no alpha->beta edge"
assert 'stroke="red"' in text, "no red edge"
EOF
ok "--format svg: an SVG document with the three locks and red edges"
"$BIN/rec-lockgraph" --graph order --output "$work/order.png" "$work/order.rec" 2>/dev/null || fail "png by extension failed"
[ "$(head -c 4 "$work/order.png" | od -An -tx1 | tr -d ' ')" = "89504e47" ] || fail "order.png is not a PNG"
"$BIN/rec-lockgraph" --graph order --format pdf "$work/order.rec" >"$work/order.pdf" 2>/dev/null || fail "pdf to stdout failed"
[ "$(head -c 5 "$work/order.pdf")" = "%PDF-" ] || fail "the pdf output is not a PDF"
ok "png (from the --output extension) and pdf (to stdout) render"

# ---- 2. the example service ------------------------------------------------------------
# rw_start, burst, rw_stop: the scenario of tests/cli/requestwatch.sh.
# shellcheck source=tests/cli/lib/requestwatch_scenario.sh
source tests/cli/lib/requestwatch_scenario.sh
rec="$work/service.rec"
rw_start "$rec"
burst 4 /requests/blocking
burst 4 /requests/blocking-fixed
rw_stop
[ "$(grep -c ' 200$' "$work/statuses")" -eq 8 ] || fail "expected 8 responses with 200: $(cat "$work/statuses")"

"$BIN/rec-print" --json --events app.Request "$rec" >"$work/requests.json" || fail "rec-print app.Request"
"$BIN/rec-lockgraph" "$rec" >"$work/wait.dot" 2>"$work/wait.err" || fail "rec-lockgraph (wait) exited $?"
"$TESTS/rec_test_agread" "$work/wait.dot" >"$work/wait.agread" 2>"$work/agread2.err" || fail "agread of the wait-for graph"
"$BIN/rec-lockgraph" --top 1 "$rec" >"$work/top1.dot" 2>"$work/top1.err" || fail "--top 1"
"$TESTS/rec_test_agread" "$work/top1.dot" >"$work/top1.agread" || fail "agread --top 1"
"$BIN/rec-lockgraph" --min-wait 1000s "$rec" >"$work/minwait.dot" 2>"$work/minwait.err" || fail "--min-wait"
"$TESTS/rec_test_agread" "$work/minwait.dot" >"$work/minwait.agread" || fail "agread --min-wait"
"$BIN/rec-lockgraph" --thread 'no-such-thread' "$rec" >"$work/nothread.dot" 2>"$work/nothread.err" || fail "--thread none"
"$TESTS/rec_test_agread" "$work/nothread.dot" >"$work/nothread.agread" || fail "agread --thread"
"$BIN/rec-lockgraph" --from 0s --to 1000s "$rec" >"$work/window.dot" 2>"$work/window.err" || fail "--from/--to"
"$TESTS/rec_test_agread" "$work/window.dot" >"$work/window.agread" || fail "agread --from/--to"
"$BIN/rec-lockgraph" --from 1000s "$rec" >"$work/late.dot" 2>"$work/late.err" || fail "--from late"
"$TESTS/rec_test_agread" "$work/late.dot" >"$work/late.agread" || fail "agread --from late"
# Absolute times (UTC here): before the first request nobody waited.
first=$(python3 -c 'import json,sys; print(min(e["values"]["startTime"] for e in json.load(open(sys.argv[1]))["recording"]["events"]))' "$work/requests.json")
"$BIN/rec-lockgraph" --from 2000-01-01T00:00:00Z --to "$first" "$rec" >"$work/before.dot" 2>"$work/before.err" ||
	fail "--from/--to absolute times"
"$TESTS/rec_test_agread" "$work/before.dot" >"$work/before.agread" || fail "agread absolute window"
"$BIN/rec-lockgraph" --from 2000-01-01T00:00:00Z - <"$rec" >"$work/abs-stdin.dot" 2>/dev/null || fail "absolute --from on stdin"
cmp -s "$work/abs-stdin.dot" "$work/wait.dot" || fail "--from a time long ago (stdin) changed the graph"

python3 - "$work" <<'EOF' || fail "wait-for graph of the example service"
import json, re, sys
work = sys.argv[1]
def read(name):
    nodes, edges, head = {}, [], None
    for l in open("%s/%s" % (work, name)).read().splitlines():
        if l.startswith("graph "):
            head = l
            continue
        m = re.match(r'node (.+?)(( \w+=(?:(?! \w+=).)*)*)$', l)
        if l.startswith("node ") and m:
            nodes[m.group(1)] = dict(re.findall(r' (\w+)=((?:(?! \w+=).)*)', m.group(2)))
            continue
        m = re.match(r'edge (.+?) -> (.+?)(( \w+=(?:(?! \w+=).)*)*)$', l)
        if m:
            # node names may hold spaces: split on the known node names
            edges.append((l, dict(re.findall(r' (\w+)=((?:(?! \w+=).)*)', l))))
    return head, nodes, edges
failures = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)

head, nodes, edges = read("wait.agread")
locks = {n: a for n, a in nodes.items() if a.get("kind") == "lock"}
threads = {n: a for n, a in nodes.items() if a.get("kind") == "thread"}
check(all(a.get("shape") == "ellipse" for a in locks.values()) and all(a.get("shape") == "box" for a in threads.values()),
      "locks are ellipses, threads boxes")
heaviest = max(locks, key=lambda n: int(locks[n]["wait_total_ns"])) if locks else None
check(heaviest == "quote-cache-lock", "the heaviest lock node is quote-cache-lock: %s (%s)"
      % (heaviest, {n: a["wait_total_ns"] for n, a in locks.items()}))
total = int(locks.get("quote-cache-lock", {}).get("wait_total_ns", 0))
check(total >= 400 * 10**6, "quote-cache-lock total wait >= 400 ms: %.1f ms" % (total / 1e6))

reqs = [e["values"] for e in json.load(open("%s/requests.json" % work))["recording"]["events"]]
blocking = {r["eventThread"]["tid"] for r in reqs if r["path"] == "/requests/blocking"}
fixed = {r["eventThread"]["tid"] for r in reqs if r["path"] == "/requests/blocking-fixed"}
def tid_of(name):
    m = re.search(r'\(tid (\d+)\)$', name) or re.search(r'^tid (\d+)$', name)
    return int(m.group(1)) if m else None
# Waits and holds of at least 10 ms (blocking-fixed requests may wait a few
# microseconds for each other when they store their result).
MS10 = 10 * 10**6
waiters, holders = {}, set()
for line, a in edges:
    m = re.match(r'edge (.+) -> quote-cache-lock( |$)', line)
    if m and a.get("kind") == "wait" and int(a["total_ns"]) >= MS10:
        waiters[tid_of(m.group(1))] = a
    m = re.match(r'edge quote-cache-lock -> (.+?) (?=\w+=)', line)
    if m and a.get("kind") == "holder" and int(a["total_ns"]) >= MS10:
        holders.add(tid_of(m.group(1)))
check(len(waiters) >= 3, "at least 3 threads wait >= 10 ms on quote-cache-lock: %s" % sorted(waiters))
check(set(waiters) <= blocking, "they are threads that served /requests/blocking: %s within %s" % (sorted(waiters), sorted(blocking)))
check(all(int(a["count"]) >= 1 and "total" in a["label"] and "max" in a["label"] and int(a["max_ns"]) > 0
          for a in waiters.values()), "their edges carry count, total and max wait")
check(holders and holders <= blocking, "the holders that made them wait served /requests/blocking: %s" % sorted(holders))
pw = {tid_of(re.match(r'edge (.+) -> quote-cache-lock', l).group(1)): float(a["penwidth"]) for l, a in edges
      if a.get("kind") == "wait" and re.match(r'edge (.+) -> quote-cache-lock', l)}
longest = max(waiters, key=lambda t: int(waiters[t]["total_ns"])) if waiters else None
check(longest is not None and pw.get(longest) == max(pw.values()), "the edge with the most total wait is the widest: %s" % pw)

# Holders charged by hand-off (issue 20): the first holder made all three
# waiters wait (about 150 ms of each), the second the two behind it (about
# 150 ms each), the third the last one (about 150 ms): about 450, 300 and
# 150 ms, not everything on the first.  The parts add up to the waits.
htot = {}
for line, a in edges:
    m = re.match(r'edge quote-cache-lock -> (.+?) (?=\w+=)', line)
    if m and a.get("kind") == "holder":
        htot[tid_of(m.group(1))] = int(a["total_ns"])
big = sorted((v for v in htot.values() if v >= MS10), reverse=True)
ms = [round(v / 1e6, 1) for v in big]
check(len(big) == 3 and big[0] >= 350 * 10**6 and 200 * 10**6 <= big[1] <= 400 * 10**6 and
      75 * 10**6 <= big[2] <= 225 * 10**6,
      "three holders of quote-cache-lock charged about 450, 300 and 150 ms: %s ms" % ms)
check(sum(htot.values()) == total, "the holders' parts add up to the lock's total wait: %d vs %d ns" % (sum(htot.values()), total))
check("hand-off" in (head or "") or any("hand-off" in l for l in open("%s/wait.dot" % work)),
      "the graph says how holders are charged")

head1, nodes1, _ = read("top1.agread")
check([n for n, a in nodes1.items() if a.get("kind") == "lock"] == ["quote-cache-lock"], "--top 1 keeps only quote-cache-lock")
headm, nodesm, _ = read("minwait.agread")
check(headm.endswith("nodes=0 edges=0"), "--min-wait 1000s leaves an empty graph: " + headm)
headt, _, _ = read("nothread.agread")
check(headt.endswith("nodes=0 edges=0"), "--thread with no match leaves an empty graph: " + headt)
headw, nodesw, _ = read("window.agread")
check(set(nodesw) == set(nodes), "--from 0s --to 1000s keeps everything")
headl, _, _ = read("late.agread")
check(headl.endswith("nodes=0 edges=0"), "--from 1000s leaves an empty graph: " + headl)
headb, _, _ = read("before.agread")
check(headb.endswith("nodes=0 edges=0"), "--from/--to times before the first request: empty graph: " + headb)
sys.exit(1 if failures else 0)
EOF
grep -q 'no rec.LockWait events match the filters' "$work/minwait.err" || fail "--min-wait: no note on stderr"

# ---- 3. a dense graph, pruned and grouped ----------------------------------------------------
"$TESTS/rec_test_lock_dense" "$work/dense.rec" || fail "rec_test_lock_dense failed"
for v in default:"" top5:"--top 5" all:"--all" top0:"--top 0"; do
	# shellcheck disable=SC2086
	"$BIN/rec-lockgraph" ${v#*:} "$work/dense.rec" >"$work/dense-${v%%:*}.dot" 2>"$work/dense.err" ||
		fail "rec-lockgraph ${v#*:} (dense) exited $?"
	"$TESTS/rec_test_agread" "$work/dense-${v%%:*}.dot" >"$work/dense-${v%%:*}.agread" || fail "agread ${v#*:} (dense)"
done
cmp -s "$work/dense-all.dot" "$work/dense-top0.dot" || fail "--top 0 is not --all"
python3 - "$work" <<'EOF' || fail "the dense wait-for graph"
import re, sys
work = sys.argv[1]
failures = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
def read(v):
    nodes, edges = {}, []
    lines = open("%s/dense-%s.agread" % (work, v)).read().splitlines()
    for l in lines:
        if l.startswith("node "):
            m = re.match(r'node (.+?)((?: \w+=(?:(?! \w+=).)*)*)$', l)
            nodes[m.group(1)] = dict(re.findall(r' (\w+)=((?:(?! \w+=).)*)', m.group(2)))
    for l in lines:
        if l.startswith("edge "):
            tail = max((n for n in nodes if l.startswith("edge %s -> " % n)), key=len)
            rest = l[len("edge %s -> " % tail):]
            head = max((n for n in nodes if rest == n or rest.startswith(n + " ")), key=len)
            edges.append((tail, head, dict(re.findall(r' (\w+)=((?:(?! \w+=).)*)', rest[len(head):]))))
    dot = open("%s/dense-%s.dot" % (work, v)).read().replace("\\\n", "")
    title = re.search(r'label="(wait-for graph: [^"\\]*)\\n', dot)
    return nodes, edges, title.group(1) if title else None
# ground truth: thread t waits (i+1)*t us on lock Lii, held by tid 5000 + t % 7
W = lambda i, t: (i + 1) * t * 1000
ALL = sum(W(i, t) for i in range(40) for t in range(1, 31))
def lock_total(i): return sum(W(i, t) for t in range(1, 31))

nodes, edges, title = read("default")
kept = sum(lock_total(i) for i in range(30, 40))
want = ("wait-for graph: 10 of 40 locks (%.1f %% of 381.300 ms of waiting), 1200 lock waits; "
        "30 locks, 31 threads grouped" % (100.0 * kept / ALL))
check(title == want, "default title: %r (want %r)" % (title, want))
locks = {n for n, a in nodes.items() if a["kind"] == "lock"}
check(locks == {"L%02d" % i for i in range(30, 40)}, "the 10 heaviest locks are drawn: %s" % sorted(locks))
check(all(int(nodes["L%02d" % i]["wait_total_ns"]) == lock_total(i) for i in range(30, 40) if "L%02d" % i in nodes),
      "each drawn lock's total is its waits")
g = nodes.get("30 other locks", {})
check(g.get("kind") == "group" and g.get("grouped") == "30" and int(g.get("wait_total_ns", -1)) == ALL - kept
      and g.get("wait_count") == "900", "the other 30 locks are one node with their 900 waits and total: %s" % g)
threads = {n for n, a in nodes.items() if a["kind"] == "thread"}
check(threads == {"w%d (tid %d)" % (t, 1000 + t) for t in (28, 29, 30)} | {"tid %d" % h for h in (5000, 5001, 5002)},
      "the threads drawn are the heaviest waiters w28-w30 and holders 5000-5002: %s" % sorted(threads))
wait = [e for e in edges if e[2]["kind"] == "wait"]
hold = [e for e in edges if e[2]["kind"] == "holder"]
check(sum(int(e[2]["total_ns"]) for e in wait) == ALL and sum(int(e[2]["count"]) for e in wait) == 1200,
      "the drawn waiter edges add up to every wait: %d ns, want %d" % (sum(int(e[2]["total_ns"]) for e in wait), ALL))
check(sum(int(e[2]["total_ns"]) for e in hold) == ALL, "the drawn holder edges add up to every wait")
bad = []
for i in range(30, 40):
    gw = "27 other waiters of L%02d" % i
    gh = "4 other holders of L%02d" % i
    ew = [e for e in wait if e[0] == gw and e[1] == "L%02d" % i]
    eh = [e for e in hold if e[0] == "L%02d" % i and e[1] == gh]
    if not (nodes.get(gw, {}).get("kind") == "group" and nodes[gw]["grouped"] == "27" and len(ew) == 1 and
            int(ew[0][2]["total_ns"]) == sum(W(i, t) for t in range(1, 28)) and ew[0][2]["count"] == "27" and
            int(ew[0][2]["max_ns"]) == W(i, 27) and len(eh) == 1 and
            int(eh[0][2]["total_ns"]) == sum(W(i, t) for t in range(1, 31) if t % 7 >= 3)):
        bad.append(i)
check(not bad, "per lock the other 27 waiters and 4 holders are one node each, their edges the sums: bad %s" % bad)

nodes5, _, title5 = read("top5")
check(title5 is not None and title5.startswith("wait-for graph: 5 of 40 locks") and "; 35 locks, 31 threads grouped" in title5,
      "--top 5 title counts what it shows: %r" % title5)
check(sum(a["kind"] == "lock" for a in nodes5.values()) == 5, "--top 5 draws 5 locks")

nodesa, edgesa, titlea = read("all")
check(titlea == "wait-for graph: 1200 lock waits", "--all title: %r" % titlea)
check(sum(a["kind"] == "lock" for a in nodesa.values()) == 40 and sum(a["kind"] == "thread" for a in nodesa.values()) == 37
      and not any(a["kind"] == "group" for a in nodesa.values()) and len(edgesa) == 40 * 30 + 40 * 7,
      "--all draws the complete graph: 40 locks, 37 threads, 1480 edges (%d)" % len(edgesa))
sys.exit(1 if failures else 0)
EOF

# ---- usage errors --------------------------------------------------------------------------
for args in "--graph bogus $rec" "--format jpeg $rec" "--min-wait 10parsecs $rec" "--top -1 $rec" \
	"--from 2s --to 1s $rec" "--from 1s --to 2030-01-01T00:00:00Z $rec" "--from yesterday $rec" "" "$rec $rec"; do
	rc=0
	# shellcheck disable=SC2086
	"$BIN/rec-lockgraph" $args >/dev/null 2>"$work/usage.out" || rc=$?
	[ "$rc" -eq 2 ] || fail "rec-lockgraph $args: exit $rc, expected 2"
	grep -q "try 'rec-lockgraph --help'" "$work/usage.out" || fail "rec-lockgraph $args: no usage hint"
done
rc=0
"$BIN/rec-lockgraph" --from 1s - <"$rec" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--from with standard input: exit $rc, expected 2"
rc=0
"$BIN/rec-lockgraph" "$work/no-such.rec" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "missing file: exit $rc, expected 1"
"$BIN/rec-lockgraph" - <"$rec" | cmp -s - "$work/wait.dot" || fail "standard input gives a different graph"
ok "usage errors exit 2, a missing file 1; standard input works"
echo "lockgraph: ok"
