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
echo ok
