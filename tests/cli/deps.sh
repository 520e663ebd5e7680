#!/usr/bin/env bash
# The fresh-machine path of the Makefile's deps rule, without a network and
# without changing the machine: in an empty build directory, with stubs on
# PATH for dpkg-query (every package "missing"), id (root) and apt-get (logs
# its arguments and succeeds),
#   1. make deps succeeds on the first try (it once failed: the log was
#      redirected into $(BUILD)/ before the directory existed), calls
#      apt-get update, then apt-get install -y with exactly the build
#      packages (no cmocka: building the library and tools must not need it),
#      and leaves its stamp;
#   2. make test-deps then installs exactly the test packages;
#   3. a failing apt-get makes the step fail with apt-get's output on stderr.
# shellcheck source=tests/cli/lib/common.sh
source "$(dirname "$0")/lib/common.sh"

stubs=$tmp/stubs
mkdir -p "$stubs"
cat >"$stubs/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat >"$stubs/id" <<'EOF'
#!/bin/sh
echo 0
EOF
cat >"$stubs/apt-get" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/apt.calls"
[ -z "\${APT_FAIL:-}" ] || { echo "E: stub apt-get failed"; exit 100; }
exit 0
EOF
chmod +x "$stubs"/*

make_deps() { # BUILDDIR TARGET
	PATH="$stubs:$PATH" make --no-print-directory -C "$root" "$2" BUILD="$1" 2>&1
}

# 1. build packages, first try, in a build directory that does not exist yet
b=$tmp/fresh/build
out=$(make_deps "$b" deps) || fail "make deps failed in an empty build directory: $out"
[ -f "$b/.deps-ok" ] || fail "no stamp $b/.deps-ok after make deps"
want_install="install -y -qq libzstd-dev liblz4-dev libgraphviz-dev pkg-config libsqlite3-dev zlib1g-dev libdw-dev"
calls=$(cat "$tmp/apt.calls" 2>/dev/null)
[ "$(printf '%s\n' "$calls" | sed -n 1p)" = "update -qq" ] || fail "first apt-get call is not 'update -qq': $calls"
[ "$(printf '%s\n' "$calls" | sed -n 2p)" = "$want_install" ] || fail "apt-get install call: '$(printf '%s\n' "$calls" | sed -n 2p)', want '$want_install'"
[ "$(printf '%s\n' "$calls" | wc -l)" -eq 2 ] || fail "apt-get called $(printf '%s\n' "$calls" | wc -l) times, want 2"
case "$calls" in *cmocka*) fail "make deps installs cmocka: $calls" ;; esac
case "$out" in *"installing Debian packages: libzstd-dev liblz4-dev libgraphviz-dev pkg-config libsqlite3-dev zlib1g-dev libdw-dev"*) ;;
*) fail "make deps did not say what it installs: $out" ;; esac

# 2. the test packages, once the build packages are there
rm -f "$tmp/apt.calls"
out=$(make_deps "$b" test-deps) || fail "make test-deps failed: $out"
[ -f "$b/.deps-test-ok" ] || fail "no stamp $b/.deps-test-ok after make test-deps"
[ "$(sed -n 2p "$tmp/apt.calls" 2>/dev/null)" = "install -y -qq libcmocka-dev zstd" ] ||
	fail "test packages installed as '$(sed -n 2p "$tmp/apt.calls" 2>/dev/null)', want 'install -y -qq libcmocka-dev zstd'"
# the stamps hold: a second make deps calls nothing
rm -f "$tmp/apt.calls"
make_deps "$b" deps >/dev/null || fail "second make deps failed"
[ ! -e "$tmp/apt.calls" ] || fail "second make deps called apt-get again: $(cat "$tmp/apt.calls")"

# 3. apt-get fails: the step fails, saying why, and leaves no stamp
b2=$tmp/fresh2/build
rc=0; out=$(APT_FAIL=1 make_deps "$b2" deps) || rc=$?
[ "$rc" -ne 0 ] || fail "make deps succeeded although apt-get failed"
case "$out" in *"E: stub apt-get failed"*) ;; *) fail "apt-get's error not shown: $out" ;; esac
[ ! -e "$b2/.deps-ok" ] || fail "stamp left after a failed install"

cli_done deps
