#!/bin/bash
# One name per call: no ks_ function of src/ is only another ks_ function under a second
# name (a body that calls it with the function's own parameters and does nothing else).  A
# second name splits the callers and the documentation in two (issue 41: ks_secret_add,
# ks_redact_add_secret and ks_llm_add_secret were one call).  The check is first shown to
# catch a planted alias.  And one clock: CLOCK_MONOTONIC is read in src/util/clock.c only
# (device_mlx.c had a second copy).
# needs: python3
. "$(dirname "$0")/lib.sh"

cat >"$TMP/aliases.py" <<'PY'
import os, re, sys

# a definition whose whole body is "[return ]ks_other(its own parameters);"
DEF = re.compile(r"^[a-z][^\n;{}#]*?\b(ks_\w+)\(([^)]*)\)\n\{\n\t(?:return )?(ks_\w+)\(([^;]*)\);\n\}",
                 re.M)
# names kept for a while, each with its reason
KEPT = {
    # src/run/final.c still calls it; the run-final split moves that file to ks_clock_s
    "ks_run_now",
}

def params(text):
    names = []
    for p in text.split(","):
        p = p.strip()
        if p and p != "void":
            names.append(re.split(r"[\s*]+", p)[-1])
    return names

found = 0
for root, _, files in os.walk(sys.argv[1]):
    for f in sorted(files):
        if not f.endswith(".c"):
            continue
        path = os.path.join(root, f)
        text = open(path, errors="replace").read()
        for m in DEF.finditer(text):
            args = [a.strip() for a in m.group(4).split(",") if a.strip()]
            if m.group(1) in KEPT or not all(a in params(m.group(2)) for a in args):
                continue
            line = text.count("\n", 0, m.start()) + 1
            print("%s:%d: %s is %s under a second name: call %s" %
                  (path, line, m.group(1), m.group(3), m.group(3)))
            found += 1
sys.exit(1 if found else 0)
PY

# the check sees a planted alias
mkdir -p "$TMP/planted"
printf 'int ks_secret_add(const char *value);\n\nint ks_store_add_secret(const char *value)\n{\n\treturn ks_secret_add(value);\n}\n' \
	>"$TMP/planted/alias.c"
python3 "$TMP/aliases.py" "$TMP/planted" >"$TMP/planted.out"
is "$?" 1 "a planted alias is found"
grep -q "alias.c:3: ks_store_add_secret is ks_secret_add under a second name" "$TMP/planted.out"
ok $? "... and named with its file and line: $(head -1 "$TMP/planted.out")"

python3 "$TMP/aliases.py" "$ROOT/src" >"$TMP/src.out"
rc=$?
ok $rc "no function of src/ is another under a second name"
sed 's/^/# /' "$TMP/src.out"

# one monotonic clock
others=$(grep -rlE "clock_gettime\(CLOCK_MONOTONIC" "$ROOT/src" | grep -v "/src/util/clock.c$")
ok $([ -z "$others" ]; echo $?) "CLOCK_MONOTONIC is read in src/util/clock.c only${others:+: also in $others}"

done_testing
