#!/bin/bash
# ksearch tasks import kernelbench on problems written the way KernelBench's level 1 writes
# them (tests/fixtures/kernelbench, written for these tests): sizes as arithmetic and
# tuples, init inputs, modules with weights, GPU-sized shapes shrunk with --scale and --set;
# each imports with a naive baseline that passes against the reference (the importer's
# numpy form here; torch when installed); the problem's Python never runs outside the jail.
# needs: python3 with numpy
. "$(dirname "$0")/lib.sh"

python3 -c 'import numpy' 2>/dev/null || skip_rest "numpy is not installed for python3"
FIX=tests/fixtures/kernelbench
export KSEARCH_CACHE=$TMP/cache
have_torch=0
${KSEARCH_PYTHON:-python3} -c 'import torch' 2>/dev/null && have_torch=1

# --- the sample: every problem imports with a baseline and a template, and passes
for f in $FIX/*.py; do
	b=$(basename "$f" .py)
	$KS tasks import kernelbench "$f" --scale 0.02 --out "$TMP/s" >"$TMP/$b.out" 2>&1
	ok $? "$b imports at --scale 0.02"
	dir=$(sed -n "s/^wrote task '.*' to //p" "$TMP/$b.out")
	[ -f "$dir/baseline.c" ] && ls "$dir"/templates/cpu/*.c >/dev/null 2>&1
	ok $? "... with a naive baseline and a knob template"
	if ! grep -q '^def _ks_numpy_reference' "$dir/reference.py" && [ $have_torch = 0 ]; then
		skip "... its baseline passes" "no numpy form (a convolution) and no torch here"
		continue
	fi
	$KS eval "$dir" "$dir/baseline.c" --quick --json >"$TMP/$b.eval" 2>"$TMP/$b.err"
	is "$(json_get "$TMP/$b.eval" 'd["status"]' 2>/dev/null)" PASSED "... its baseline passes"
done

# --- sizes: arithmetic folded, tuples unpacked, the shipped task's names for a matmul
$KS tasks import kernelbench $FIX/2_Matmul_rect.py --out "$TMP/full" >/dev/null 2>&1
$KS tasks show "$TMP/full/kb_2_matmul_rect" --json >"$TMP/mm.json" 2>/dev/null
is "$(json_get "$TMP/mm.json" '" ".join(w["label"] for w in d["workloads"])')" "m=1024 n=1024 k=515" \
	"M = 256 * 4, K = 128 * 4 + 3 are folded (the shipped matmul's params)"
grep -q '^#define matmul kb_2_matmul_rect' "$TMP/full/kb_2_matmul_rect/templates/cpu/blocked.c"
ok $? "the shipped matmul's templates, the entry point renamed"
$KS tasks import kernelbench $FIX/26_GELU_tuple.py --out "$TMP/full" >/dev/null 2>&1
$KS tasks show "$TMP/full/kb_26_gelu_tuple" --json >"$TMP/gelu.json" 2>/dev/null
is "$(json_get "$TMP/gelu.json" '" ".join(w["label"] for w in d["workloads"])')" \
	"batch_size=1024 input_shape=16384" "*input_shape with input_shape = (8192 * 2,)"
$KS tasks import kernelbench $FIX/63_Conv2d_bias.py --out "$TMP/full" >/dev/null 2>&1
$KS tasks show "$TMP/full/kb_63_conv2d_bias" --json >"$TMP/conv.json" 2>/dev/null
is "$(json_get "$TMP/conv.json" '[t["name"] for t in d["inputs"]]')" \
	"['x', 'conv2d_weight', 'conv2d_bias']" "the module's weight and bias are inputs"
is "$(json_get "$TMP/conv.json" 'd["outputs"][0]["shape"]')" \
	"['batch_size', 'out_channels', '(height + 2 - (kernel_size - 1) - 1) / 2 + 1', '(width + 2 - (kernel_size - 1) - 1) / 2 + 1']" \
	"the output's shape is an expression of the sizes (stride 2, padding 1)"

# --- --set and --scale
$KS tasks import kernelbench $FIX/20_LeakyReLU_init.py --set dim=100,batch_size=7 --out "$TMP/set" >/dev/null 2>&1
$KS tasks show "$TMP/set/kb_20_leakyrelu_init" --json >"$TMP/set.json" 2>/dev/null
is "$(json_get "$TMP/set.json" '" ".join(w["label"] for w in d["workloads"])')" "batch_size=7 dim=100" \
	"--set gives sizes their values"
grep -q '0.2f \* ' "$TMP/set/kb_20_leakyrelu_init/baseline.c"
ok $? "the slope from get_init_inputs() is in the baseline"
$KS tasks import kernelbench $FIX/20_LeakyReLU_init.py --set dimm=100 --out "$TMP/set2" >/dev/null 2>"$TMP/set2.err"
is "$?" 2 "--set of a name the problem does not have is refused"
grep -q "the problem has no module-level name 'dimm'" "$TMP/set2.err"
ok $? "... naming it"
$KS tasks import kernelbench $FIX/20_LeakyReLU_init.py --set dim=x --out "$TMP/set3" >/dev/null 2>"$TMP/set3.err"
grep -q "expected NAME=INTEGER" "$TMP/set3.err"
ok $? "--set dim=x is a usage error"
$KS tasks import kernelbench $FIX/20_LeakyReLU_init.py --scale 0 --out "$TMP/set4" >/dev/null 2>&1
is "$?" 2 "--scale 0 is refused"

# --- a search on an imported problem
$KS run "$TMP/s/kb_36_rms_middle" --budget 2 --top 1 --out "$TMP/run" --json >"$TMP/run.json" 2>"$TMP/run.err"
ok $? "ksearch run on an imported problem finishes"
[ "$(json_get "$TMP/run.json" 'd["passed"]' 2>/dev/null)" -ge 1 ]
ok $? "... with passing candidates"

# --- the problem's Python runs in the jail, never beside ksearch: a forward the interpreter
# does not know is run once with torch to learn its output's shape; a stand-in torch (the
# test's own module, for a machine without torch) makes it run here, and its module-level
# code tries to leave a file and read the environment
python3 -m venv --system-site-packages "$TMP/venv" >/dev/null 2>&1 ||
	skip_rest "python3 -m venv does not work here"
site=$("$TMP/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site/torch/nn"
printf 'def manual_seed(s):\n    pass\nclass no_grad:\n    def __enter__(self):\n        pass\n    def __exit__(self, *a):\n        pass\ndef rand(*a):\n    return None\n' >"$site/torch/__init__.py"
printf 'class Module:\n    def __init__(self):\n        pass\n    def __call__(self, *a):\n        return self.forward(*a)\n' >"$site/torch/nn/__init__.py"
cat >"$TMP/escape.py" <<PY
import os
import torch
import torch.nn as nn
open("$TMP/escaped", "w").write(os.environ.get("KS_TEST_SECRET", "no secret"))
class Model(nn.Module):
    def forward(self, x):
        return x.some_op_the_importer_does_not_know()
n = 8
def get_inputs():
    return [torch.rand(n, n)]
def get_init_inputs():
    return []
PY
KS_TEST_SECRET=hunter2 KSEARCH_PYTHON=$TMP/venv/bin/python $KS tasks import kernelbench "$TMP/escape.py" \
	--out "$TMP/esc" >"$TMP/esc.out" 2>&1
[ ! -e "$TMP/escaped" ]
ok $? "the problem's module-level code could not write outside the jail"
! grep -rq hunter2 "$TMP/esc.out" "$TMP/esc" 2>/dev/null
ok $? "... nor read ksearch's environment"

done_testing
