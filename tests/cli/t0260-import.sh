#!/bin/bash
# ksearch tasks import: a flashinfer-bench Definition with its Workloads and KernelBench
# level-1 problems (fixtures written for these tests in the public formats) become task
# folders that eval and run accept; what cannot be imported says why.
# needs: python3 with numpy (the references are reference.py)
. "$(dirname "$0")/lib.sh"

python3 -c 'import numpy' 2>/dev/null || skip_rest "numpy is not installed for python3"
FIX=tests/fixtures/import
export KSEARCH_CACHE=$TMP/cache
have_torch=0
python3 -c 'import torch' 2>/dev/null && have_torch=1

# --- flashinfer-bench: axes -> params, scalar input -> param, workloads from the JSONL
$KS tasks import flashinfer-bench $FIX/rmsnorm_h256.json $FIX/rmsnorm_h256.jsonl --out "$TMP" >"$TMP/fib.out" 2>&1
ok $? "a flashinfer-bench rmsnorm Definition imports"
task=$TMP/rmsnorm_h256
grep -q "recognised rmsnorm: generated baseline.c and a knob template" "$TMP/fib.out"
ok $? "the importer says it generated a baseline and a template"
$KS tasks show "$task" --json >"$TMP/fib.json" 2>/dev/null
is "$(json_get "$TMP/fib.json" '",".join(p["name"]+":"+p["dtype"] for p in d["params"])')" \
	"batch_size:i32,hidden_size:i32,eps:f32" "axes and the scalar input are the params"
is "$(json_get "$TMP/fib.json" '" ".join(w["label"] for w in d["workloads"])')" \
	"batch_size=64 hidden_size=256 eps=1e-06 batch_size=300 hidden_size=256 eps=1e-05" \
	"both workload lines (bare and Trace-shaped) are the workloads"
is "$(json_get "$TMP/fib.json" 'd["inputs"][0]["shape"]')" "['batch_size', 'hidden_size']" \
	"shapes stay symbolic"
$KS eval "$task" "$task/baseline.c" --json >"$TMP/fib_eval.json" 2>/dev/null
is "$(json_get "$TMP/fib_eval.json" 'd["status"]')" PASSED "the generated baseline passes against the reference"
$KS tasks import flashinfer-bench $FIX/rmsnorm_h256.json $FIX/rmsnorm_h256.jsonl --out "$TMP" >/dev/null 2>"$TMP/again.err"
is "$?" 2 "importing over an existing task is refused"
grep -q "already holds a task" "$TMP/again.err"
ok $? "... and says so"
$KS tasks import flashinfer-bench $FIX/rmsnorm_h256.json --out "$TMP/nowl" >/dev/null 2>"$TMP/nowl.err"
grep -q "axis 'batch_size' of 'rmsnorm_h256' is var: give the workloads" "$TMP/nowl.err"
ok $? "var axes without workloads are an error naming the axis"

# a definition whose reference is plain numpy runs its own run(); no baseline for an
# operator the importer does not know, and it says what to add
$KS tasks import flashinfer-bench $FIX/scale_rows_numpy.json $FIX/scale_rows_numpy.jsonl --out "$TMP" >"$TMP/np.out" 2>&1
ok $? "a definition with a numpy reference imports"
grep -q "note: no baseline generated (no operator was recognised): write .*baseline.c" "$TMP/np.out"
ok $? "the note says what the user must add"
cat >"$TMP/scale_rows_d64/baseline.c" <<'C'
#include <stdint.h>
void scale_rows_d64(const float *x, const float *s, float *y, int32_t rows, int32_t d)
{
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < d; c++)
			y[r * d + c] = x[r * d + c] * s[r];
}
C
$KS eval "$TMP/scale_rows_d64" "$TMP/scale_rows_d64/baseline.c" --json >"$TMP/np_eval.json" 2>/dev/null
is "$(json_get "$TMP/np_eval.json" 'd["status"]')" PASSED "a hand-written kernel passes against the definition's own run()"

# --- KernelBench level 1
$KS tasks import kernelbench $FIX/23_Softmax_small.py --out "$TMP" >"$TMP/kb.out" 2>&1
ok $? "a KernelBench softmax problem imports"
kb=$TMP/kb_23_softmax_small
$KS tasks show "$kb" --json >"$TMP/kb.json" 2>/dev/null
is "$(json_get "$TMP/kb.json" '" ".join(w["label"] for w in d["workloads"])')" "rows=128 cols=1000" \
	"get_inputs() sizes are the workload (a softmax's as rows and cols)"
$KS eval "$kb" "$kb/baseline.c" --json >"$TMP/kb_eval.json" 2>"$TMP/kb_eval.err"
is "$(json_get "$TMP/kb_eval.json" 'd["status"]')" PASSED "the generated softmax baseline passes"
! grep -q "skipped" "$TMP/kb_eval.err"
ok $? "the reduction class's checks apply (none skipped)"
# a wrong kernel is caught by the imported reference
grep -q '^#define softmax kb_23_softmax_small' "$kb/baseline.c"
ok $? "the shipped softmax's baseline, its entry point renamed"
ls "$kb"/templates/cpu/online.c "$kb"/templates/cpu/multipass.c >/dev/null
ok $? "... and the shipped softmax's knob templates"
sed 's|yr\[j\] = yr\[j\] / s;|yr[j] = yr[j] / s * 1.001f;|' "$kb/baseline.c" >"$TMP/kb_wrong.c"
! cmp -s "$kb/baseline.c" "$TMP/kb_wrong.c"
ok $? "... (the wrong kernel differs)"
$KS eval "$kb" "$TMP/kb_wrong.c" --json >"$TMP/kb_wrong.json" 2>/dev/null
is "$(json_get "$TMP/kb_wrong.json" 'd["status"]')" INCORRECT_NUMERICAL "a slightly wrong softmax fails"

$KS tasks import kernelbench $FIX/1_Matmul_small.py --out "$TMP" >"$TMP/mm.out" 2>&1
ok $? "a matmul problem imports without torch (the shapes from the interpreter)"
$KS eval "$TMP/kb_1_matmul_small" "$TMP/kb_1_matmul_small/baseline.c" --json >"$TMP/mm_eval.json" 2>/dev/null
is "$(json_get "$TMP/mm_eval.json" 'd["status"]')" PASSED "... and the shipped matmul's baseline passes against its numpy form"
printf 'import torch\nclass Other:\n    pass\n' >"$TMP/bad.py"
$KS tasks import kernelbench "$TMP/bad.py" --out "$TMP" >/dev/null 2>"$TMP/bad.err"
grep -q "is not a KernelBench problem ksearch can import: no class Model" "$TMP/bad.err"
ok $? "a file without Model is refused with the reason"
$KS tasks import kernelbnch $FIX/19_ReLU_small.py >/dev/null 2>"$TMP/dym.err"
grep -q "did you mean 'kernelbench'" "$TMP/dym.err"
ok $? "a misspelt format gets a suggestion"
$KS tasks import flashinfer $FIX/rmsnorm_h256.json >/dev/null 2>"$TMP/dym2.err"
grep -q "did you mean 'flashinfer-bench'" "$TMP/dym2.err"
ok $? "a shortened format name gets a suggestion"

# --- the done-when: ksearch run on both imported problems finishes with passing candidates
$KS tasks import kernelbench $FIX/19_ReLU_small.py --out "$TMP" >/dev/null 2>&1
for t in rmsnorm_h256 kb_19_relu_small; do
	$KS run "$TMP/$t" --budget 2 --out "$TMP/run_$t" --json >"$TMP/run_$t.json" 2>"$TMP/run_$t.err"
	ok $? "ksearch run on the imported $t finishes"
	passed=$(json_get "$TMP/run_$t.json" 'd["passed"]' 2>/dev/null)
	[ "${passed:-0}" -ge 1 ]
	ok $? "... with passing candidates ($passed)"
done

# --- the run's evaluations as flashinfer-bench Traces
$KS report "$TMP/run_rmsnorm_h256" --to flashinfer-trace >"$TMP/trace.jsonl" 2>"$TMP/trace.err"
ok $? "report --to flashinfer-trace"
python3 - "$TMP/trace.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) >= 2, lines  # two candidates or more on two workloads
for t in lines:
    assert t["definition"] == "rmsnorm_h256"
    assert t["solution"].startswith("rmsnorm_h256_ksearch_")
    w, ev = t["workload"], t["evaluation"]
    assert set(w["axes"]) == {"batch_size"}, w  # the var axes: hidden_size is const
    assert w["inputs"]["eps"]["type"] == "scalar"
    assert w["inputs"]["hidden_states"] == {"type": "random"}, w  # every input is there
    assert w["inputs"]["weight"] == {"type": "random"}, w
    assert w["uuid"].startswith("7f0c2a8e-"), w  # the workload's own uuid
    assert ev["status"] in ("PASSED", "INCORRECT_NUMERICAL", "RUNTIME_ERROR", "COMPILE_ERROR")
    if ev["status"] == "PASSED":
        p = ev["performance"]
        assert p["latency_ms"] > 0 and p["reference_latency_ms"] > 0
        assert abs(p["speedup_factor"] - p["reference_latency_ms"] / p["latency_ms"]) < 1e-6 * p["speedup_factor"] + 1e-9
        assert ev["correctness"]["max_absolute_error"] >= 0
    # flashinfer-bench's Evaluation fields only: its models drop any other key unread
    assert set(ev) <= {"status", "log", "environment", "timestamp", "correctness", "performance"}, ev
    for k in ("log", "environment", "timestamp"):
        assert k in ev
PY
ok $? "every line is a Trace: definition, solution, workload axes, evaluation"

done_testing
