#!/bin/bash
# needs: OpenBLAS (libopenblas-dev, pkg-config openblas) on x86_64; skipped without.
# The library yardstick says which core it times (issue 39 item 16): task.yaml's describe
# asks OpenBLAS (openblas_get_corename) before it is timed and the answer labels every
# speedup over it; where it runs a core that does not use the CPU's vector ISA (a fallback),
# the core that does is asked for through OPENBLAS_CORETYPE with a warning; a user's
# OPENBLAS_CORETYPE is passed on as it is.
. "$(dirname "$0")/lib.sh"

pkg-config --exists openblas 2>/dev/null || skip_rest "OpenBLAS is not installed (apt-get install libopenblas-dev)"
grep -qw sse2 /proc/cpuinfo && grep -qw avx2 /proc/cpuinfo ||
	skip_rest "not an x86_64 CPU with AVX2 (the cores asked for here are OpenBLAS's x86 ones)"
export KSEARCH_CACHE=$TMP/cache
unset OPENBLAS_CORETYPE
KERNEL="$ROOT/tests/fixtures/eval/scale/templates/cpu/unrolled.c"
QUICK=(--min-time 0.01 --reps 3 --no-checks --json)

# what OpenBLAS itself says it runs here, with and without the variable (the oracle)
cat >"$TMP/core.c" <<'EOF'
#include <stdio.h>
char *openblas_get_corename(void);
int main(void) { puts(openblas_get_corename()); return 0; }
EOF
cc "$TMP/core.c" -o "$TMP/core" $(pkg-config --cflags --libs openblas) || skip_rest "cannot link OpenBLAS"
native=$("$TMP/core")
haswell=$(OPENBLAS_CORETYPE=Haswell "$TMP/core")
[ "$haswell" = Haswell ] || skip_rest "this OpenBLAS has no Haswell core to ask for (got '$haswell')"

mkdir -p "$TMP/t" && cp -r "$ROOT/tests/fixtures/library/scale" "$TMP/t/scale"
yaml=$TMP/t/scale/task.yaml
with_cores() { # with_cores "CORES MAP": the library entry asks its core, fits it by the map
	sed -i "s|^  cpu: {name: OpenBLAS, pkg-config: openblas.*|  cpu: {name: OpenBLAS, pkg-config: openblas, describe: [openblas_get_corename, openblas_get_config]$1}|" "$yaml"
}

# describe alone: the label is the core OpenBLAS picks here
with_cores ""
"$KS" eval "$TMP/t/scale" "$KERNEL" "${QUICK[@]}" >"$TMP/j" 2>"$TMP/err"
ok $? "eval with describe exits 0"
is "$(json_get "$TMP/j" 'd["library"]')" "OpenBLAS ($native)" "the yardstick is labelled with its core"
grep -q "OpenBLAS runs: $native; OpenBLAS [0-9.]* .*$native" "$TMP/err"
ok $? "the log gives openblas_get_config's answer ($(grep 'OpenBLAS runs' "$TMP/err"))"
"$KS" eval "$TMP/t/scale" "$KERNEL" --min-time 0.01 --reps 3 --no-checks >"$TMP/out" 2>/dev/null
grep -qE "x OpenBLAS \($native\) \(geometric means\)" "$TMP/out"
ok $? "eval's headline names the core"

# a map in which the core picked here is not one that fits (every x86 CPU has sse2):
# Haswell is asked for, with a warning, and timed
if [ "$native" != Haswell ]; then
	with_cores ", cores: {variable: OPENBLAS_CORETYPE, sse2: [Haswell]}"
	"$KS" eval "$TMP/t/scale" "$KERNEL" "${QUICK[@]}" >"$TMP/j" 2>"$TMP/err"
	ok $? "eval with a fallback core exits 0"
	is "$(json_get "$TMP/j" 'd["library"]')" "OpenBLAS (Haswell)" "the core that fits is timed"
	grep -q "warning: OpenBLAS picked its $native core, a fallback on this CPU with sse2: timing its Haswell core instead (OPENBLAS_CORETYPE=Haswell" "$TMP/err"
	ok $? "a warning says which core it picked and which is timed"
else
	skip "a fallback is replaced" "OpenBLAS picks Haswell here already"
fi

# the user's variable is passed on: no replacement, a warning that the timings understate it
with_cores ", cores: {variable: OPENBLAS_CORETYPE, avx2: [Haswell]}"
OPENBLAS_CORETYPE=Prescott "$KS" eval "$TMP/t/scale" "$KERNEL" "${QUICK[@]}" >"$TMP/j" 2>"$TMP/err"
is "$(json_get "$TMP/j" 'd["library"]')" "OpenBLAS (Prescott)" "OPENBLAS_CORETYPE=Prescott is what is timed"
grep -q "warning: OpenBLAS runs its Prescott core (OPENBLAS_CORETYPE=Prescott) on this CPU with avx2, which its Haswell core uses: its timings understate it" "$TMP/err"
ok $? "... with a warning that its timings understate it"

# the shipped matmul task asks too, and never times a core older than the CPU's ISA
"$KS" eval matmul "$ROOT/tasks/matmul/templates/cpu/blocked.c" "${QUICK[@]}" --workloads 0 >"$TMP/j" 2>"$TMP/err"
lib=$(json_get "$TMP/j" 'd["library"]')
case "$lib" in
"OpenBLAS (Prescott)" | "OpenBLAS (Core2)" | "OpenBLAS (Nehalem)" | "OpenBLAS (Sandybridge)")
	ok 1 "matmul's OpenBLAS times a core of this CPU's ISA (got '$lib')" ;;
"OpenBLAS ("*")") ok 0 "matmul's OpenBLAS times a core of this CPU's ISA ($lib)" ;;
*) ok 1 "matmul's OpenBLAS is labelled with its core (got '$lib')" ;;
esac

done_testing
