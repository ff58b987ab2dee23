#!/bin/bash
# A task whose reference is reference.py (numpy): eval checks kernels against it, its
# outputs are cached like reference.c's, and a broken reference is a clear error.
# needs: python3 with numpy
. "$(dirname "$0")/lib.sh"

python3 -c 'import numpy' 2>/dev/null || skip_rest "numpy is not installed for python3"

export KSEARCH_CACHE=$TMP/cache
cp -r tests/fixtures/pyref/pyref_rmsnorm "$TMP/pyref_rmsnorm"
task=$TMP/pyref_rmsnorm

$KS eval "$task" "$task/baseline.c" --json >"$TMP/ok.json" 2>"$TMP/ok.err"
ok $? "the baseline passes against the numpy reference"
is "$(json_get "$TMP/ok.json" 'd["status"]')" PASSED "status PASSED"
n=$(find "$KSEARCH_CACHE/reference" -name '*.bin' | wc -l)
[ "$n" -ge 2 ]
ok $? "reference.py's outputs are cached ($n files)"

# a kernel that is wrong by a little fails numerically, as against reference.c
sed 's/\* w\[c\];/* w[c] * 1.01f;/' "$task/baseline.c" >"$TMP/wrong.c"
$KS eval "$task" "$TMP/wrong.c" --json >"$TMP/wrong.json" 2>/dev/null
is "$?" 1 "a wrong kernel is evaluated and does not pass"
is "$(json_get "$TMP/wrong.json" 'd["status"]')" INCORRECT_NUMERICAL "status INCORRECT_NUMERICAL"


# a broken reference (new content, new hash) says what went wrong
printf 'import numpy as np\ndef reference(x, w, rows, cols, eps):\n    raise ValueError("boom")\n' >"$task/reference.py"
$KS eval "$task" "$task/baseline.c" >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 2 "a failing reference is an error (exit 2)"
grep -q "the reference (reference.py) failed on .*ValueError: boom" "$TMP/bad.err"
ok $? "the error quotes the reference's exception"

printf 'import numpy as np\ndef reference(x, w, rows, cols, eps):\n    return x.reshape(-1)\n' >"$task/reference.py"
$KS eval "$task" "$task/baseline.c" >/dev/null 2>"$TMP/shape.err"
grep -q "output 'y' has shape \[3\], the task says \[3, 1\]" "$TMP/shape.err"
ok $? "an output of the wrong shape is named"

# the reference runs in the jail: no writes outside its exchange folder (the folder is not
# even there: the jail shows the system, the interpreter, the task and the exchange folder)
printf 'def reference(x, w, rows, cols, eps):\n    open("%s/escaped", "w").write("x")\n    return x\n' "$TMP" >"$task/reference.py"
$KS eval "$task" "$task/baseline.c" >/dev/null 2>"$TMP/jail.err"
[ ! -e "$TMP/escaped" ] && grep -qE "PermissionError|FileNotFoundError|Read-only file system" "$TMP/jail.err"
ok $? "reference.py cannot write outside its folder"

done_testing
