#!/usr/bin/env bash
# `make install PREFIX=...` gives a usable library: a program that includes
# <rec/recorder.h>, links through `pkg-config rec` (shared, then static),
# records real events and reads them back with the reader.
set -euo pipefail
cd "$REC_ROOT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s --no-print-directory BUILD="$BUILD" SAN="${SAN:-}" install PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; exit 1; }
for f in include/rec/rec.h include/rec/recorder.h lib/librec.a lib/librec.so lib/pkgconfig/rec.pc bin/rec-summary bin/rec-print; do
	[ -e "$tmp/prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
# never a libfmt.so or <fmt/...>: those belong to the C++ {fmt} library
# (outputs are captured first: `cmd | grep -q` can kill cmd with SIGPIPE, which pipefail reports)
bad=$(find "$tmp/prefix" -name 'libfmt*' -o -name fmt -type d)
[ -z "$bad" ] || { echo "installed a libfmt/fmt name: $bad"; exit 1; }

cat >"$tmp/app.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <rec/recorder.h>

static const rec_field f[] = { { "path", "Path", "", REC_TYPE_STRING, REC_UNIT_NONE },
			       { "status", "Status", "", REC_TYPE_U32, REC_UNIT_NONE } };
static const rec_type req = { 0, REC_EVENT_HAS_DURATION | REC_EVENT_HAS_THREAD, "app.Request", "Request",
			      "One request", "app", 2, f };

int main(int argc, char **argv)
{
	rec_recorder_options o = REC_RECORDER_OPTIONS_INIT;
	rec_recorder *r;
	rec_event_type *t;
	(void)argc;
	o.path = argv[1];
	if (rec_recorder_open(&r, &o) != REC_OK || rec_recorder_register_type(r, &req, 0, 0, &t) != REC_OK)
		return 3;
	for (int i = 0; i < 1000; i++) {
		rec_span s;
		rec_emit e;
		rec_span_begin(&s, t);
		if (rec_span_end(&s, &e)) {
			rec_emit_string_dyn(&e, i % 2 ? "/a" : "/b");
			rec_emit_u64(&e, 200);
			rec_emit_commit(&e);
		}
	}
	if (rec_recorder_close(r) != REC_OK)
		return 4;
	rec_reader *rd;
	rec_event ev;
	rec_status st;
	unsigned n = 0;
	if (rec_reader_open_path(&rd, argv[1], NULL) != REC_OK)
		return 5;
	while ((st = rec_reader_next_event(rd, &ev)) == REC_OK)
		if (strcmp(ev.type->name, "app.Request") == 0 && ev.values[1].v.u == 200)
			n++;
	rec_reader_close(rd);
	printf("%u %s\n", n, rec_version_string());
	return st == REC_END ? 0 : 6;
}
C
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
# a sanitizer build installs a sanitized library: the program must link the runtime too
san=""
[ "${SAN:-}" = 1 ] && san="-fsanitize=address,undefined"
ver=$(pkg-config --modversion rec)
cc $san -std=c17 -Wall -Wextra -Werror $(pkg-config --cflags rec) -o "$tmp/app-shared" "$tmp/app.c" $(pkg-config --libs rec)
out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/app-shared" "$tmp/shared.rec")
[ "$out" = "1000 $ver" ] || { echo "shared: got '$out', want '1000 $ver'"; exit 1; }
deps=$(LD_LIBRARY_PATH="$tmp/prefix/lib" ldd "$tmp/app-shared")
case "$deps" in *"librec.so.0 => $tmp/prefix/lib/librec.so.0"*) ;; *)
	echo "app-shared is not linked with the installed librec.so.0:"; echo "$deps"; exit 1 ;; esac
cc $san -std=c17 -Wall -Wextra -Werror $(pkg-config --cflags rec) -o "$tmp/app-static" "$tmp/app.c" \
	"$tmp/prefix/lib/librec.a" $(pkg-config --libs-only-other --static rec) $(pkg-config --libs-only-l --static rec | sed 's/-lrec//')
out=$("$tmp/app-static" "$tmp/static.rec")
[ "$out" = "1000 $ver" ] || { echo "static: got '$out'"; exit 1; }
"$tmp/prefix/bin/rec-summary" "$tmp/static.rec" | grep -q "app.Request *1000 " || { echo "installed rec-summary"; exit 1; }

# A program that calls no rec function records through REC_OUTPUT (the
# library's constructor) when linked by `pkg-config --libs rec` alone, also
# with the linker's --as-needed (Debian's and Ubuntu's default for many
# builds): the .pc keeps librec.so with --no-as-needed.  Without it,
# `cc prog.c -lrec` under --as-needed drops the library and nothing records.
cat >"$tmp/plain.c" <<'C'
#include <stdio.h>
int main(void)
{
	puts("plain");
	return 0;
}
C
# recorded WHAT FILE: FILE is a recording with a FINAL chunk and the
# program's rec.ThreadStart (the main thread, registered by the recorder)
recorded() {
	[ -s "$2" ] || { echo "$1: nothing recorded at $2"; exit 1; }
	"$tmp/prefix/bin/rec-check" -q "$2" || { echo "$1: rec-check: $("$tmp/prefix/bin/rec-check" "$2" 2>&1)"; exit 1; }
	"$tmp/prefix/bin/rec-summary" "$2" >"$tmp/sum.txt" || { echo "$1: rec-summary"; exit 1; }
	grep -q "rec.ThreadStart" "$tmp/sum.txt" || { echo "$1: no rec.ThreadStart:"; cat "$tmp/sum.txt"; exit 1; }
}
cc $san -std=c17 -Wall -Wextra -Werror -Wl,--as-needed -o "$tmp/plain-shared" "$tmp/plain.c" $(pkg-config --libs rec)
deps=$(LD_LIBRARY_PATH="$tmp/prefix/lib" ldd "$tmp/plain-shared")
case "$deps" in *"librec.so.0 => $tmp/prefix/lib/librec.so.0"*) ;; *)
	echo "plain-shared lost librec.so.0 to --as-needed:"; echo "$deps"; exit 1 ;; esac
out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" REC_OUTPUT="$tmp/plain-shared.rec" "$tmp/plain-shared")
[ "$out" = plain ] || { echo "plain-shared: got '$out'"; exit 1; }
recorded plain-shared "$tmp/plain-shared.rec"

# `pkg-config --static --libs rec` links librec.a: a static program needs no
# librec.so (it is moved away while they run) and records, also when it
# calls no rec function (-u rec_recorder_default pulls the recorder and the
# REC_OUTPUT constructor out of the archive).  Not with SAN=1: the sanitizer
# runtimes do not link statically.
if [ "${SAN:-}" != 1 ]; then
	cc -static -std=c17 -Wall -Wextra -Werror $(pkg-config --cflags rec) -o "$tmp/app-full-static" "$tmp/app.c" \
		$(pkg-config --static --libs rec)
	cc -static -std=c17 -Wall -Wextra -Werror -o "$tmp/plain-static" "$tmp/plain.c" $(pkg-config --static --libs rec)
	mkdir "$tmp/away"
	mv "$tmp/prefix/lib/"librec.so* "$tmp/away/"
	for p in app-full-static plain-static; do
		if LD_LIBRARY_PATH="$tmp/prefix/lib" ldd "$tmp/$p" >"$tmp/ldd.txt" 2>&1; then
			echo "$p is dynamic:"; cat "$tmp/ldd.txt"; exit 1
		fi
	done
	out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/app-full-static" "$tmp/full-static.rec")
	[ "$out" = "1000 $ver" ] || { echo "static (pkg-config --static): got '$out'"; exit 1; }
	out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" REC_OUTPUT="$tmp/plain-static.rec" "$tmp/plain-static")
	[ "$out" = plain ] || { echo "plain-static: got '$out'"; exit 1; }
	mv "$tmp/away/"librec.so* "$tmp/prefix/lib/"
	recorded plain-static "$tmp/plain-static.rec"
fi
echo ok
