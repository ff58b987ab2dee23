#!/usr/bin/env bash
# needs: zig's C compiler (pip install ziglang; .ci/cross-macos installs it), else skipped.
# The macOS check from Linux (.ci/cross-macos compiles every target for aarch64-macos; this
# is its quick part, for every test run): the sources only macOS builds (*_macos.c, the
# Seatbelt profiles) compile for aarch64-macos 14 with ksearch's warnings as errors, and the
# check can fail: tests/fixtures/macos/linux_only.c, which compiles on Linux, does not
# compile for macOS (a Linux-only call on a line only macOS builds).
. "$(dirname "$0")/lib.sh"
python3 -m ziglang version >/dev/null 2>&1 || skip_rest "no zig here (pip install ziglang)"
zcc() { python3 -m ziglang cc -target aarch64-macos.14.0 -std=gnu11 -D_GNU_SOURCE \
	-DKS_SOURCE_DIR='"x"' -DKS_VERSION='"0"' -I"$ROOT/include" -I"$ROOT/src" -Wall -Wextra \
	-Werror -Wno-unused-parameter -Wshadow -Wformat=2 -Wno-format-nonliteral \
	-Wno-missing-field-initializers -c -o "$TMP/out.o" "$@"; }
fixture=$ROOT/tests/fixtures/macos/linux_only.c
cc -std=gnu11 -Wall -Werror -c -o "$TMP/host.o" "$fixture"
ok $? "the fixture compiles on Linux"
zcc "$fixture" >"$TMP/fixture.log" 2>&1
is "$?" 1 "... and not for macOS"
grep -q "linux_only.c:[0-9]*:[0-9]*: error: call to undeclared function 'memfd_create'" "$TMP/fixture.log"
ok $? "... at its Mac-only line, naming the call"
mapfile -t mac < <(cd "$ROOT" && ls src/*/*_macos.c src/eval/sandbox.c src/eval/sandbox_none.c \
	src/eval/sandbox_sbpl.c src/runner/cc_jail.c src/runner/runner_report.c)
for f in "${mac[@]}"; do
	zcc "$ROOT/$f" >"$TMP/log" 2>&1
	ok $? "$f compiles for aarch64-macos"
	[ -s "$TMP/log" ] && sed 's/^/# /' "$TMP/log" | head -10
done
done_testing
