#!/usr/bin/env bash
# needs: cc
# What 'ksearch eval' tells a person: compiler diagnostics name the file they gave (not the
# compile cache's copy), a missing entry point is said as such, --workloads is checked
# before anything runs, and the table shows "-" where a failed workload has no value.
. "$(dirname "$0")/lib.sh"
SCALE=$ROOT/tests/fixtures/eval/scale
H=$ROOT/tests/fixtures/hostile
cd "$TMP" || exit 1

# a syntax error on line 2, column 46
printf '#include <stdint.h>\nvoid scale(const float *x, float *y, int32_t n) { int a = ; }\n' >bad.c
"$KS" eval "$SCALE" bad.c --quick >out.txt 2>err.txt
is "$?" 1 "compile error: exit 1"
grep -q '^bad\.c:2:[0-9]*: error' out.txt
ok $? "the diagnostic names bad.c:2"
! grep -q 'kernels/' out.txt
ok $? "no compile-cache path in the output"
"$KS" eval "$SCALE" bad.c --quick --json >out.json 2>/dev/null
grep -q '"compile_log": "bad\.c' out.json && ! grep -q 'kernels/' out.json
ok $? "--json: compile_log names bad.c too"

# the entry point misspelled: a link error, said in the user's terms
printf '#include <stdint.h>\nvoid scal(const float *x, float *y, int32_t n) { }\n' >wrong.c
"$KS" eval "$SCALE" wrong.c --quick >out.txt 2>err.txt
is "$?" 1 "link error: exit 1"
grep -q "wrong.c defines no function 'scale'" out.txt
ok $? "the link error says wrong.c defines no 'scale'"
! grep -q 'kernels/' out.txt
ok $? "no compile-cache path in the link error"

# --workloads: checked before "evaluating ..."
"$KS" eval "$SCALE" "$H/plain.c" --quick --workloads '' >out.txt 2>err.txt
is "$?" 2 "--workloads '': exit 2"
grep -q -- "--workloads: empty list" err.txt && ! grep -q evaluating err.txt
ok $? "--workloads '': 'empty list', nothing evaluated ($(head -c 200 err.txt))"
"$KS" eval "$SCALE" "$H/plain.c" --quick --workloads 5 >out.txt 2>err.txt
is "$?" 2 "--workloads 5: exit 2"
grep -q "workload index 5 out of range" err.txt && ! grep -q evaluating err.txt
ok $? "--workloads 5: out of range before evaluating ($(head -c 200 err.txt))"

# a crashed kernel has no errors, times or speedup: "-", not 0.  The checks run first, so
# the crash is the check row's, and the timed workload says it was not run (issue 39)
"$KS" eval "$SCALE" "$H/segfault.c" --quick --timeout 3 >out.txt 2>err.txt
is "$?" 1 "segfault: exit 1"
check=$(grep '^one ' out.txt)
echo "# $check"
is "$(echo "$check" | awk '{print $2, $3, $4}')" "RUNTIME_ERROR - -" "segfault: the check row is RUNTIME_ERROR, its errors '-'"
row=$(grep '^n=1048576' out.txt)
echo "# $row"
case "$row" in *"not run"*) ok 0 "segfault: the timed workload is 'not run'" ;; *) ok 1 "segfault: the timed workload is 'not run'" ;; esac
! echo "$row" | grep -q -e '0\.00e+00' -e '0\.00x' -e ' 0\.0 '
ok $? "segfault row: no 0.00e+00, 0.0 or 0.00x"
is "$(echo "$row" | awk '{print NF}')" 12 "segfault row: every column has a value or '-'"
is "$(echo "$row" | awk '{print $4, $5, $12}')" "- - -" "segfault row: max_abs, max_rel, speedup are '-'"

# no roofline without a spec: roof% is "-"
"$KS" eval "$SCALE" "$H/plain.c" --quick --spec none >out.txt 2>err.txt
is "$?" 0 "plain --spec none: exit 0"
row=$(grep '^n=1048576' out.txt)
echo "# $row"
is "$(echo "$row" | awk '{print $3, $9}')" "0.00e+00 -" "plain: max_abs 0.00e+00 (measured), roof% '-'"

done_testing
