#!/bin/bash
# No C source calls a libc function whose hidden state all threads share (strtok, localtime,
# gmtime, ctime, asctime, rand): ksearch compiles a round's candidates in parallel threads
# (src/run/loop.c) and compares outputs and checksums inputs over threads, and such a call
# in any of those paths garbles another thread's work.  It happened: strtok in the compile
# path split two flag lists at once on a 16-core machine, and 2 of 40 selective-scan
# candidates failed to compile with each other's flags.  Use the _r forms.  First proves on a
# planted tree that it catches one.
# needs: nothing (reads the sources only)
. "$(dirname "$0")/lib.sh"
SRC=$ROOT
# scan ROOT: every call of one of them in ROOT's src/ and include/ (a word boundary before
# the name, so "torch.rand(" inside a string does not count)
scan() {
	grep -rnE '(^|[^.A-Za-z0-9_])(strtok|localtime|gmtime|ctime|asctime|rand)[[:space:]]*\(' \
		--include='*.c' --include='*.h' --include='*.cpp' "$1/src" "$1/include" 2>/dev/null
}
mkdir -p "$TMP/planted/src" "$TMP/planted/include"
printf 'int f(char *s) { return strtok(s, " ") != 0; }\nint g(void) { return rand(); }\n' >"$TMP/planted/src/x.c"
is "$(scan "$TMP/planted" | wc -l)" 2 "the scan catches a planted strtok and rand"
found=$(scan "$SRC")
[ -n "$found" ] && echo "$found" | sed 's/^/# /'
is "$found" "" "no shared-state libc call in src/ or include/"
done_testing
