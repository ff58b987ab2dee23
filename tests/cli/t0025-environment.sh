#!/bin/bash
# Configuration read once (issue 41, 43): every environment variable ksearch reads is a row of
# one table (src/util/env.h: name, what it does, default), read once into struct ks_env, and
# 'ksearch --help' lists every row in its ENVIRONMENT section.  The getenv check is first
# shown to catch a planted read.
. "$(dirname "$0")/lib.sh"

# the table's names, from the X-macro rows
python3 - "$ROOT/src/util/env.h" >"$TMP/names" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for m in re.finditer(r'\bX\(\s*\w+,\s*"([A-Z_][A-Z0-9_]*)"', text):
    print(m.group(1))
PY
n=$(wc -l <"$TMP/names")
ok $([ "$n" -ge 20 ]; echo $?) "the table has its rows ($n variables)"

"$KS" --help >"$TMP/help" 2>&1
ok $? "ksearch --help exits 0"
grep -q "^ENVIRONMENT" "$TMP/help"
ok $? "--help has an ENVIRONMENT section"
missing=$(while read -r v; do sed -n '/^ENVIRONMENT/,$p' "$TMP/help" | grep -q "^  $v " || echo "$v"; done <"$TMP/names")
ok $([ -z "$missing" ]; echo $?) "every variable of the table is in it${missing:+; missing: $missing}"
long=$(awk 'length($0) > 99' "$TMP/help")
ok $([ -z "$long" ]; echo $?) "--help fits 100 columns${long:+: $long}"

# no read of a named variable outside the table's file (a variable passed through to a
# sandboxed process by a name from data, getenv(name), is not configuration)
reads() { # reads DIR: "file:line: text" of each getenv("NAME") outside src/util/env.c
	grep -rnE 'getenv\("' "$1" --include='*.c' --include='*.cpp' --include='*.h' |
		grep -v '/src/util/env\.[ch]:' || true
}
mkdir -p "$TMP/planted"
printf 'static int f(void)\n{\n\treturn getenv("KSEARCH_NEW") != 0;\n}\n' >"$TMP/planted/p.c"
got=$(reads "$TMP/planted")
ok $([ -n "$got" ]; echo $?) "a planted getenv is found: $got"
got=$(reads "$ROOT/src")
ok $([ -z "$got" ]; echo $?) "src/ reads the environment through the table only${got:+: $got}"

# the table is what takes effect: the cache folder of 'ksearch cache' is KSEARCH_CACHE's
KSEARCH_CACHE="$TMP/mycache" "$KS" cache >"$TMP/cache.out" 2>&1
grep -q "^cache $TMP/mycache" "$TMP/cache.out"
ok $? "KSEARCH_CACHE names the cache: $(head -1 "$TMP/cache.out")"

done_testing
