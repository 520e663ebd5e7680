# shellcheck shell=bash disable=SC2034,SC2016
# bench/lib.sh - shell helpers shared by the bench scripts (sourced from the
# repository root, after `cd "$(dirname "$0")/.."`).

# quick_args LAST "$@": QUICK=1 with --quick, else 0; -h/--help prints the
# calling script's header comment (its lines 2..LAST) and exits 0; any other
# argument prints the usage and exits 2.
quick_args() {
	local last=$1 a
	shift
	QUICK=0
	for a in "$@"; do
		case "$a" in
		--quick) QUICK=1 ;;
		-h|--help) sed -n "2,${last}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "usage: bash bench/$(basename "$0") [--quick]" >&2; exit 2 ;;
		esac
	done
}

# bench_flags: B_CC, B_CFLAGS and B_LIBS = the compiler, compile flags and
# libraries of the Makefile's build of $BUILD (the same make variables).
bench_flags() {
	local flags rest
	flags=$(make -s BUILD="$BUILD" --eval='bench-print-flags: ; @echo "$(CC)|$(CPPFLAGS_ALL) $(CFLAGS_ALL) $(PKG_CFLAGS)|$(LIBS_ALL)"' bench-print-flags)
	B_CC=${flags%%|*}; rest=${flags#*|}; B_CFLAGS=${rest%%|*}; B_LIBS=${rest#*|}
}

# build_base NAME BASE DIR TARGET...: the tree of commit BASE (`git archive`) in DIR with
# make's TARGETs built there, for a before/after comparison (make's output in DIR.log); on a
# failure says so on stderr, as NAME, with the log's end, and exits 1.
build_base() {
	local name=$1 base=$2 dir=$3
	shift 3
	echo "$name: building the library of $base in $dir" >&2
	mkdir -p "$dir"
	git archive "$base" | tar -x -C "$dir"
	make -s -C "$dir" -j2 "$@" >"$dir.log" 2>&1 ||
		{ echo "$name: building $base failed (see below)" >&2; tail -20 "$dir.log" >&2; exit 1; }
}

# kv KEY LINE: the value of KEY=value in a line of key=value words
kv() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -1; }

# median: of the numbers on stdin, one a line ("nan" for none)
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) {print "nan"; exit}
	print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# results_section HEADING MD: put the markdown file MD into bench/RESULTS.md
# in place of the section that starts with "HEADING " (to the next "## ", or
# to its first "#### " heading: the hand-written notes under a generated
# section stay), or at the end when there is none.
results_section() {
	python3 - "$1" "$2" bench/RESULTS.md <<'PY'
import re, sys
head, sec = sys.argv[1], open(sys.argv[2]).read().rstrip("\n") + "\n"
path = sys.argv[3]
text = open(path).read()
m = re.search(r"^" + re.escape(head) + r" .*?(?=^## |^#### |\Z)", text, re.S | re.M)
text = text[:m.start()] + sec + ("\n" if text[m.end():] else "") + text[m.end():] if m else text.rstrip("\n") + "\n\n" + sec
open(path, "w").write(text)
PY
}

# stdout_args LAST "$@": STDOUT=1 with --stdout (print the section instead of
# writing it into RESULTS.md), else 0; the other arguments go to quick_args.
stdout_args() {
	local last=$1 a rest=()
	shift
	STDOUT=0
	for a in "$@"; do
		if [ "$a" = --stdout ]; then STDOUT=1; else rest+=("$a"); fi
	done
	quick_args "$last" "${rest[@]}"
}
