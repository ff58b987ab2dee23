#!/bin/bash
# needs: OpenBLAS (libopenblas-dev, pkg-config openblas); skipped without.
# The library yardstick (library.<ext>, task.yaml's `library` map): timed beside the
# baseline through OpenBLAS in the sandbox, shown in eval's table and --json; a wrong
# library is reported and not trusted; one that is not installed is skipped with a note.
. "$(dirname "$0")/lib.sh"

if ! pkg-config --exists openblas 2>/dev/null; then
	skip_rest "OpenBLAS is not installed (apt-get install libopenblas-dev)"
fi
FIX="$ROOT/tests/fixtures/library/scale"
KERNEL="$ROOT/tests/fixtures/eval/scale/templates/cpu/unrolled.c"
QUICK=(--min-time 0.01 --reps 3 --no-checks)

"$KS" tasks show "$FIX" | grep -qx "library (backend cpu): OpenBLAS, library.c, pkg-config openblas"
ok $? "tasks show names the library"
is "$("$KS" tasks show "$FIX" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["library"])')" \
	OpenBLAS "tasks show --json: library"

"$KS" eval "$FIX" "$KERNEL" "${QUICK[@]}" >"$TMP/out" 2>"$TMP/err"
ok $? "eval with the OpenBLAS yardstick exits 0"
grep -qE ', [0-9.]+x the baseline, [0-9.]+x OpenBLAS \(geometric means\)' "$TMP/out"
ok $? "the headline gives the speedup over the baseline and over OpenBLAS"
grep -qE 'OpenBLAS_us +vs OpenBLAS' "$TMP/out" && grep -qE '^n=1048576 .* [0-9.]+ +[0-9.]+x$' "$TMP/out"
ok $? "the table has OpenBLAS's median and the speedup over it"

"$KS" eval "$FIX" "$KERNEL" "${QUICK[@]}" --json >"$TMP/j" 2>/dev/null
is "$(json_get "$TMP/j" 'd["library"]')" OpenBLAS "--json: library"
is "$(json_get "$TMP/j" 'd["speedup_vs_library"] > 0 and d["workloads"][0]["library_us"] > 0')" True \
	"--json: speedup_vs_library and library_us"
is "$(json_get "$TMP/j" 'abs(d["workloads"][0]["speedup_vs_library"] * d["workloads"][0]["median_us"] - d["workloads"][0]["library_us"]) < 1e-6 * d["workloads"][0]["library_us"]')" True \
	"--json: speedup_vs_library is library_us / median_us"

"$KS" eval "$FIX" "$KERNEL" "${QUICK[@]}" --json --no-library >"$TMP/j" 2>/dev/null
is "$(json_get "$TMP/j" 'd["library"], d["workloads"][0]["library_us"]')" "None None" \
	"--no-library: nothing timed against the library"

# a wrong library (y = 3 x) is caught by the reference check and never trusted
cp -rL "$FIX" "$TMP/scale"
sed -i 's/cblas_sscal(n, 2.0f/cblas_sscal(n, 3.0f/' "$TMP/scale/library.c"
"$KS" eval "$TMP/scale" "$KERNEL" "${QUICK[@]}" --json >"$TMP/j" 2>"$TMP/err"
is "$(json_get "$TMP/j" 'd["status"], d["workloads"][0]["library_us"], d["speedup_vs_library"]')" \
	"PASSED None None" "a wrong library: the candidate passes, the library is not timed"
json_get "$TMP/j" 'd["workloads"][0]["log"]' | grep -q "OpenBLAS (library.c) is not trusted on this workload"
ok $? "a wrong library: the workload's log says so"
grep -q "library 'OpenBLAS' fails the reference check" "$TMP/err"
ok $? "a wrong library: a warning says so"

# a library that is not installed: skipped with a note, never an error
sed -i 's/pkg-config: openblas/pkg-config: ksearch-no-such-package/' "$TMP/scale/task.yaml"
"$KS" eval "$TMP/scale" "$KERNEL" "${QUICK[@]}" --json >"$TMP/j" 2>"$TMP/err"
ok $? "a library not installed: eval still exits 0"
is "$(json_get "$TMP/j" 'd["status"], d["library"], d["speedup_vs_baseline"] > 0')" "PASSED None True" \
	"a library not installed: the baseline's speedup, no library's"
grep -q "library 'OpenBLAS' is not timed: pkg-config does not know 'ksearch-no-such-package'" "$TMP/err"
ok $? "a library not installed: the note names the package"

# task.yaml errors in the library map point at the line
{ cat "$ROOT/tests/fixtures/eval/scale/task.yaml"; printf 'library:\n  gpu9: {name: X}\n'; } \
	>"$TMP/scale/task.yaml"
"$KS" tasks show "$TMP/scale" >/dev/null 2>"$TMP/err"
is "$?" 2 "an unknown backend in library: exit 2"
grep -q "expected a backend name (cpu, cuda, mlx, ...), got 'gpu9'" "$TMP/err"
ok $? "an unknown backend in library: says what was expected"

done_testing
