#!/bin/bash
# No C source calls a libc function whose hidden state all threads share (strtok, localtime,
# gmtime, ctime, asctime, rand): ksearch compiles a round's candidates in parallel threads
# (src/search/loop.c) and compares outputs and checksums inputs over threads, and such a call
# in any of those paths garbles another thread's work.  It happened: strtok in the compile
# path split two flag lists at once on a 16-core machine, and 2 of 40 selective-scan
# candidates failed to compile with each other's flags.  Use the _r forms.  First proves on a
# planted tree that it catches one.
# needs: nothing (reads the sources only)
set -u
SRC="${KSEARCH_HOME:-$(pwd)}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 n=0
check() { # check NAME COND...
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $name"; else echo "not ok $n - $name"; fails=$((fails + 1)); fi
}
# scan ROOT: every call of one of them in ROOT's src/ and include/ (a word boundary before
# the name, so "torch.rand(" inside a string does not count)
scan() {
	grep -rnE '(^|[^.A-Za-z0-9_])(strtok|localtime|gmtime|ctime|asctime|rand)[[:space:]]*\(' \
		--include='*.c' --include='*.h' --include='*.cpp' "$1/src" "$1/include" 2>/dev/null
}
mkdir -p "$TMP/planted/src" "$TMP/planted/include"
printf 'int f(char *s) { return strtok(s, " ") != 0; }\nint g(void) { return rand(); }\n' >"$TMP/planted/src/x.c"
check "the scan catches a planted strtok and rand" test "$(scan "$TMP/planted" | wc -l)" -eq 2
found=$(scan "$SRC")
[ -n "$found" ] && echo "$found" | sed 's/^/# /'
check "no shared-state libc call in src/ or include/" test -z "$found"
echo "1..$n"
[ "$fails" -eq 0 ]
