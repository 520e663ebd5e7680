#!/usr/bin/env bash
# -o FILE and --output FILE in the three exporters, as the README says:
# rec-flame, rec-lockgraph and rec-timeline write to FILE exactly what they
# write on standard output without it (-o FILE, -oFILE, --output FILE,
# --output=FILE), nothing on stdout then; rec-lockgraph takes the format from
# -o's extension as from --output's; -o without a file name, or with an empty
# one, is a usage error (exit 2, "try 'TOOL --help'").  Before, rec-lockgraph
# and rec-timeline said "unknown option '-o'".
set -uo pipefail
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh" # bin, tests, tmp, fail, need_exe, cli_done
need_exe "$bin/rec-flame" "$bin/rec-lockgraph" "$bin/rec-timeline" "$tests/rec_test_flame_gen"
export TZ=UTC
# Under SAN=1: Graphviz's and the font libraries' own leaks (-o g.svg) are not ours.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$root/tests/cli/lockgraph/lsan.supp"
"$tests/rec_test_flame_gen" "$tmp" || { echo "FAIL: rec_test_flame_gen"; exit 1; }
rec=$tmp/before.rec

for tool in rec-flame rec-lockgraph rec-timeline; do
	"$bin/$tool" "$rec" >"$tmp/$tool.stdout" 2>"$tmp/err" || fail "$tool: exit $?: $(cat "$tmp/err")"
	[ -s "$tmp/$tool.stdout" ] || fail "$tool: empty output"
	n=0
	for form in "-o F" "-oF" "--output F" "--output=F"; do
		n=$((n + 1))
		out=$tmp/$tool-$n.out
		# shellcheck disable=SC2086 # the form is split on purpose
		args=(${form//F/$out})
		rc=0
		"$bin/$tool" "${args[@]}" "$rec" >"$tmp/so" 2>"$tmp/err" || rc=$?
		[ "$rc" = 0 ] || { fail "$tool $form: exit $rc: $(cat "$tmp/err")"; continue; }
		[ ! -s "$tmp/so" ] || fail "$tool $form: wrote to stdout"
		[ ! -s "$tmp/err" ] || fail "$tool $form: stderr: $(cat "$tmp/err")"
		cmp -s "$out" "$tmp/$tool.stdout" || fail "$tool $form: FILE differs from standard output"
	done
	for bad in "-o" "-o="; do
		rc=0
		if [ "$bad" = -o ]; then
			"$bin/$tool" "$rec" -o >"$tmp/so" 2>"$tmp/err" || rc=$?
		else
			"$bin/$tool" -o "" "$rec" >"$tmp/so" 2>"$tmp/err" || rc=$?
		fi
		[ "$rc" = 2 ] || fail "$tool $bad: exit $rc, want 2"
		[ "$(tail -n 1 "$tmp/err")" = "try '$tool --help'" ] || fail "$tool $bad: stderr $(cat "$tmp/err")"
	done
	"$bin/$tool" --help | grep -q -- "-o, --output FILE" || fail "$tool --help does not list -o, --output FILE"
done

# rec-lockgraph: the format follows -o's extension
"$bin/rec-lockgraph" -o "$tmp/g.svg" "$rec" || fail "rec-lockgraph -o g.svg: exit $?"
head -c 300 "$tmp/g.svg" | grep -q "<svg" || grep -q "<svg" "$tmp/g.svg" || fail "rec-lockgraph -o g.svg is not SVG"
# rec-flame: an .html name gives the HTML page, with -o as with --output
"$bin/rec-flame" -o "$tmp/f.html" "$rec" && "$bin/rec-flame" --output "$tmp/f2.html" "$rec" || fail "rec-flame html"
cmp -s "$tmp/f.html" "$tmp/f2.html" || fail "rec-flame -o f.html differs from --output"

cli_done output_option
