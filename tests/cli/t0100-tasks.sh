#!/bin/bash
# ksearch tasks list / show against the fixture tasks (never the shipped tasks/).
# needs: nothing (no GPU, no network)
set -u
KS="${KS_BIN:?KS_BIN must point at the build directory}/ksearch"
SRC="${KSEARCH_HOME:-$(pwd)}"
export KSEARCH_HOME="$SRC/tests/fixtures"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 n=0

check() { # check NAME COND...
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		fails=$((fails + 1))
	fi
}
has() { grep -qF -- "$1" "$2"; }
run() { # run WANT_RC ARGS... (stdout in $TMP/out, stderr in $TMP/err)
	local want=$1
	shift
	timeout 30 "$KS" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	[ "$rc" = "$want" ] || { echo "# '$*' exited $rc, expected $want"; cat "$TMP/err"; return 1; }
}

check "tasks list exits 0" run 0 tasks list
check "list shows softmax with its class and summary" \
	grep -qE '^softmax +reduction +Row-wise softmax over the last axis\.$' "$TMP/out"
check "list is sorted and skips folders without task.yaml" \
	bash -c "[ \"\$(cut -d' ' -f1 '$TMP/out' | tr '\n' ' ')\" = 'mixed softmax ' ]"
check "bare 'tasks' lists too" run 0 tasks
check "bare 'tasks' output" has "softmax" "$TMP/out"

check "show softmax exits 0" run 0 tasks show softmax
check "show prints the exact C prototype" \
	has "  void softmax(const float *x, float *y, int32_t rows, int32_t cols);" "$TMP/out"
check "show says what the kernel must define" has "Your kernel must define" "$TMP/out"
check "show prints the README math" has "y[r, c] = exp(x[r, c] - m[r])" "$TMP/out"
check "show prints tensors" grep -qE '^  in +x +f32 +\[rows, cols\] +init normal\(0, 3\)$' "$TMP/out"
check "show prints params" grep -qE '^  cols +i32$' "$TMP/out"
check "show prints flops" has "flops: 5*rows*cols" "$TMP/out"
check "show prints tolerance" has "tolerance: atol 1e-05, rtol 1e-05, relative L2 1e-05" "$TMP/out"
check "show prints workloads with GFLOP and MB" \
	grep -qE '^   0  rows=4096 cols=4096 +0\.08389 GFLOP +134\.2 MB$' "$TMP/out"
check "backend-restricted workload is marked" has "[cuda only; skipped here]" "$TMP/out"
check "a task without templates lists none" bash -c "! grep -q 'knob templates' '$TMP/out'"
check "and has no --workloads number on this backend" \
	grep -qE '^      rows=32768 cols=512 .*skipped here' "$TMP/out"
check "show prints checks with init overrides" \
	grep -qE '^  large-logits \(rows=67 cols=1000\) .* x: normal\(0, 80\)$' "$TMP/out"

check "show --backend cuda exits 0" run 0 tasks show softmax --backend cuda
check "cuda prototype has the stream last" \
	has "void softmax(const float *x, float *y, int32_t rows, int32_t cols, cudaStream_t stream);" "$TMP/out"
check "show --backend metal" run 0 tasks show mixed --backend metal
check "metal spells f16 as half" has "device const half *a [[buffer(0)]]" "$TMP/out"
check "show of a folder path" run 0 tasks show "$KSEARCH_HOME/tasks/mixed"
check "f16 is _Float16 and bf16 uint16_t in C" \
	has "void mixed(const _Float16 *a, const uint16_t *b, const int32_t *idx" "$TMP/out"

check "show --json exits 0" run 0 tasks show softmax --json
check "--json prints one valid object" python3 -c "
import json, sys
o = json.load(open('$TMP/out'))
assert o['name'] == 'softmax' and o['class'] == 'reduction', o
assert o['prototype'] == 'void softmax(const float *x, float *y, int32_t rows, int32_t cols);'
assert o['inputs'][0] == {'name': 'x', 'dtype': 'f32', 'shape': ['rows', 'cols'], 'init': 'normal(0, 3)'}
assert o['params'] == [{'name': 'rows', 'dtype': 'i32'}, {'name': 'cols', 'dtype': 'i32'}]
w = o['workloads']
assert w[0]['params'] == {'rows': 4096, 'cols': 4096} and w[0]['applies'] is True
assert abs(w[0]['gflop'] - 5 * 4096 * 4096 / 1e9) < 1e-9
assert w[1]['backends'] == ['cuda'] and w[1]['applies'] is False
assert [c['name'] for c in o['checks']] == ['large-logits', 'odd-width']
assert o['checks'][0]['init'] == {'x': 'normal(0, 80)'}
assert o['tolerance']['atol'] == 1e-5
"
check "list --json" run 0 tasks list --json
check "list --json content" python3 -c "
import json
o = json.load(open('$TMP/out'))
assert [t['name'] for t in o['tasks']] == ['mixed', 'softmax'], o
"

check "unknown task exits 2" run 2 tasks show nosuchtask
check "unknown task is named" has "unknown task 'nosuchtask'" "$TMP/err"
check "unknown task lists the available ones" has "available tasks: mixed, softmax" "$TMP/err"
check "nothing on stdout for an error" test ! -s "$TMP/out"

check "broken task exits 2" run 2 tasks show "$KSEARCH_HOME/tasks/broken/bad_shape_expr"
check "broken task error is FILE:LINE:COL" \
	has "tests/fixtures/tasks/broken/bad_shape_expr/task.yaml:6:42: expected ')'" "$TMP/err"
check "YAML syntax error is FILE:LINE:COL" run 2 tasks show "$KSEARCH_HOME/tasks/broken/syntax_error"
check "syntax error text" grep -qE 'syntax_error/task.yaml:10:1: invalid YAML: ' "$TMP/err"

check "unknown backend exits 2" run 2 tasks show softmax --backend tpu
check "unknown backend named" has "unknown backend 'tpu'" "$TMP/err"
check "show without a name exits 2" run 2 tasks show
check "unknown subcommand exits 2" run 2 tasks frobnicate
check "--help exits 0" run 0 tasks --help
check "--help shows usage" has "usage: ksearch tasks" "$TMP/out"

# show lists the knob templates a search explores on the backend, with their knobs
check "show of a task with templates exits 0" run 0 tasks show "$SRC/tests/fixtures/eval/scale"
check "its knob templates are listed" has "knob templates (backend cpu; what 'ksearch run' explores):" "$TMP/out"
check "with family, size and knob values" \
	bash -c "grep -qE '^  unrolled.c +unrolled, 8 configurations' '$TMP/out' && grep -qF 'UNROLL {1,2,4,8} SCALE_BY_ADD {0,1}' '$TMP/out'"

# a data root whose list contains a broken task: listed, flagged, exit 2
mkdir -p "$TMP/root/tasks"
cp -r "$SRC/tests/fixtures/tasks/softmax" "$TMP/root/tasks/"
cp -r "$SRC/tests/fixtures/tasks/broken/bad_dtype" "$TMP/root/tasks/"
check "list with a broken task exits 2" env KSEARCH_HOME="$TMP/root" bash -c "'$KS' tasks list >'$TMP/out' 2>'$TMP/err'; [ \$? = 2 ]"
check "broken task flagged in the list" grep -qE '^bad_dtype .*invalid task.yaml' "$TMP/out"
check "its error on stderr" has "bad_dtype/task.yaml:8:14: expected the dtype" "$TMP/err"

# bytes libfyaml would read as the end of the file: a NUL or a non-UTF-8 byte anywhere in
# task.yaml or a template's block is an error at its place, not a silently shorter task
mkdir -p "$TMP/bytes" "$TMP/tplbytes" "$TMP/fifo"
cp -r "$SRC/tests/fixtures/tasks/softmax" "$TMP/bytes/"
python3 - "$TMP/bytes/softmax/task.yaml" <<'PY'
import sys
p = sys.argv[1]
lines = open(p, 'rb').read().split(b'\n')
lines.insert(3, b'\xff')
open(p, 'wb').write(b'\n'.join(lines))
PY
check "a non-UTF-8 byte in task.yaml exits 2" run 2 tasks show "$TMP/bytes/softmax"
check "named at its line" has "bytes/softmax/task.yaml:4:1: a byte that is not UTF-8" "$TMP/err"
python3 -c "import sys; p=sys.argv[1]; s=open(p,'rb').read(); open(p,'wb').write(s.replace(b'\xff', b'x: \x00', 1))" "$TMP/bytes/softmax/task.yaml"
check "a NUL byte in task.yaml exits 2" run 2 tasks show "$TMP/bytes/softmax"
check "named at its column" has "bytes/softmax/task.yaml:4:4: a NUL byte" "$TMP/err"
cp -r "$SRC/tests/fixtures/eval/scale" "$TMP/tplbytes/"
python3 -c "import sys; p=sys.argv[1]; s=open(p,'rb').read(); open(p,'wb').write(s.replace(b'@ksearch\n', b'@ksearch\n\xfe: 3\n', 1))" "$TMP/tplbytes/scale/templates/cpu/unrolled.c"
check "a non-UTF-8 byte in a template's block: show exits 2" run 2 tasks show "$TMP/tplbytes/scale"
check "the template's error on stderr" grep -qE "unrolled.c:[0-9]+:1: a byte that is not UTF-8" "$TMP/err"
# a FIFO where task.yaml should be: an error, not a wait for a writer
cp -r "$SRC/tests/fixtures/tasks/softmax" "$TMP/fifo/"
rm "$TMP/fifo/softmax/task.yaml"
mkfifo "$TMP/fifo/softmax/task.yaml"
check "a FIFO task.yaml exits 2 at once" run 2 tasks show "$TMP/fifo/softmax"
check "said to be a FIFO" has "a FIFO, not a file" "$TMP/err"

# show evaluates each template's `require` as run does: a name it cannot resolve is the
# same error, and the count that holds here is shown
mkdir -p "$TMP/req"
cp -r "$SRC/tests/fixtures/eval/scale" "$TMP/req/"
check "show counts the feasible configurations" run 0 tasks show "$TMP/req/scale"
check "8 of 8 here" has "unrolled, 8 configurations before 'require', 8 feasible here" "$TMP/out"
sed -i 's/THREADS <= spec.cores/THREADS <= NOPE/' "$TMP/req/scale/templates/cpu/threaded.c"
check "a require that names nothing: show exits 2" run 2 tasks show "$TMP/req/scale"
check "with run's FILE:LINE:COL error" grep -qE "threaded.c:[0-9]+:[0-9]+: unknown name 'NOPE'" "$TMP/err"

# two templates of one backend with one family: the search could not tell them apart
mkdir -p "$TMP/fam"
cp -r "$SRC/tests/fixtures/eval/scale" "$TMP/fam/"
sed -i 's/^family: threaded$/family: unrolled/' "$TMP/fam/scale/templates/cpu/threaded.c"
check "two templates with one family: show exits 2" run 2 tasks show "$TMP/fam/scale"
check "naming both files" grep -qE "unrolled.c: family 'unrolled' is taken by .*threaded.c already" "$TMP/err"

# subcommand words: what was expected, and the nearest one
check "tasks shwo exits 2" run 2 tasks shwo
check "with a suggestion" has "unknown 'tasks' subcommand 'shwo' (expected list, show or import); did you mean 'show'?" "$TMP/err"
check "spec frob exits 2" run 2 spec frob
check "spec names its subcommands" has "unknown 'spec' subcommand 'frob' (expected list, show or detect)" "$TMP/err"
check "spec show without a name exits 2" run 2 spec show
check "and says what it needs" has "spec show needs one spec" "$TMP/err"
check "translate without --to exits 2" run 2 translate "$TMP/fifo/softmax/reference.c"
check "and says it needs a target" has "translate needs a target: --to metal, cpu or opencl" "$TMP/err"

# a GPU's spec for kernels that run on the CPU is refused, not applied
check "eval --spec h200 on the cpu backend exits 2" run 2 eval "$SRC/tests/fixtures/eval/scale" "$SRC/tests/fixtures/eval/scale/baseline.c" --spec "$SRC/knowledge/specs/h200.yaml"
check "saying why" has "describes a gpu, but backend 'cpu' runs kernels on this machine's CPU" "$TMP/err"

check "eval --spec of an unknown name exits 2" run 2 eval "$SRC/tests/fixtures/eval/scale" "$SRC/tests/fixtures/eval/scale/baseline.c" --spec nope
check "naming it" has "unknown spec 'nope'" "$TMP/err"

# spec detect --save: a target that cannot be written is refused before detection, with why
check "spec detect --save into a missing folder exits 2" run 2 spec detect --save "$TMP/none/x.yaml"
check "with the system's reason" has "cannot write in '$TMP/none': No such file or directory" "$TMP/err"
check "spec detect --save of a folder exits 2" run 2 spec detect --save "$TMP"
check "saying it is a directory" has "a directory; name a file" "$TMP/err"

echo "1..$n"
[ "$fails" = 0 ]
