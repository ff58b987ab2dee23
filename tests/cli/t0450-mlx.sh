#!/usr/bin/env bash
# needs: MLX (pip install "mlx[cpu]", scripts/setup.sh does) for everything but the first
# check; a GPU MLX (Metal or CUDA) for custom kernels (skipped without).
# The mlx backend: without MLX `--backend mlx` exits 2 and says what to install; with the
# CPU build every task's native MLX baseline (baseline.mlx) passes against the reference
# and is timed against itself, and a custom kernel exits 2 saying it needs a GPU backend.
. "$(dirname "$0")/lib.sh"
BIN=$(cd "$(dirname "$KS")" && pwd)
K=$ROOT/tests/fixtures/mlx

# 0. the kernel format as `tasks show` prints it (needs no MLX)
"$KS" tasks show softmax --backend mlx >"$TMP/show.out" 2>&1
is "$?" 0 "tasks show softmax --backend mlx"
grep -q "__global__ void custom_kernel_softmax" "$TMP/show.out" &&
	grep -q "\[\[kernel\]\] void custom_kernel_softmax" "$TMP/show.out" &&
	grep -q "const device float\* x \[\[buffer(0)\]\]" "$TMP/show.out" &&
	grep -q "// @mlx grid:" "$TMP/show.out" && grep -q "^Example" "$TMP/show.out"
ok $? "prints the format, both signatures MLX generates and an example"

# 1. a ksearch built without MLX (simulated: no runner where ksearch looks for it)
mkdir -p "$TMP/norunner"
KSEARCH_RUNNER_DIR=$TMP/norunner "$KS" eval softmax "$ROOT/tasks/softmax/baseline.mlx" \
	--backend mlx >"$TMP/nomlx.out" 2>"$TMP/nomlx.err"
is "$?" 2 "--backend mlx without ksearch-runner-mlx exits 2"
grep -q "built without MLX" "$TMP/nomlx.err" && grep -q 'pip install' "$TMP/nomlx.err"
ok $? "and says MLX is missing and what to install"

if [ ! -x "$BIN/ksearch-runner-mlx" ]; then
	echo "# skip the rest: ksearch was built without MLX (pip install \"mlx[cpu]\", re-run cmake)"
	done_testing
	exit $?
fi
probe=$("$BIN/ksearch-runner-mlx" --probe)
ok $? "ksearch-runner-mlx --probe: $probe"
gpu=0
case "$probe" in *metal=1*|*cuda=1*) gpu=1 ;; esac

# 2. every task's native MLX baseline passes every check and the first workload (softmax: the first two,
# chained 2 calls per eval); MLX's CPU build is slow, so the rest are left out
for task in softmax matmul matmul_bf16 attention selective_scan; do
	[ -f "$ROOT/tasks/$task/baseline.mlx" ] || { ok 1 "$task has a baseline.mlx"; continue; }
	chain=1 wl=0
	[ $task = softmax ] && chain=2 wl=0,1
	KSEARCH_MLX_CHAIN=$chain "$KS" eval "$task" "$ROOT/tasks/$task/baseline.mlx" --backend mlx \
		--quick --reps 3 --workloads $wl --json >"$TMP/$task.json" 2>"$TMP/$task.err"
	rc=$?
	[ $rc -ne 0 ] && head -c 2000 "$TMP/$task.err" "$TMP/$task.json" | sed 's/^/# /'
	is "$rc" 0 "$task: MLX native baseline exits 0"
	is "$(json_get "$TMP/$task.json" 'd["status"]')" PASSED "$task: MLX native baseline PASSED"
	is "$(json_get "$TMP/$task.json" 'd["baseline"]')" "MLX native" "$task: --json says the speedup is vs MLX native"
	is "$(json_get "$TMP/$task.json" 'all(c["status"] == "PASSED" for c in d["checks"]) and len(d["checks"]) > 0')" \
		True "$task: every check passed"
	is "$(json_get "$TMP/$task.json" 'all(w["baseline_us"] > 0 and w["median_us"] > 0 for w in d["workloads"])')" \
		True "$task: timed against the native baseline in the same session"
done

# 3. a kernel file the parser rejects is a compile error (status, exit 1)
"$KS" eval softmax "$K/bad_flavour.mlx" --backend mlx --quick --json >"$TMP/bad.json" 2>/dev/null
is "$?" 1 "a malformed launch block exits 1"
is "$(json_get "$TMP/bad.json" 'd["status"]')" COMPILE_ERROR "and is a COMPILE_ERROR"
grep -q "expected cuda, metal or native" "$TMP/bad.json"
ok $? "whose log says what was expected"
# an include that does not resolve is the candidate's compile error too, on any MLX
"$KS" eval softmax "$K/bad_include.mlx" --backend mlx --quick --json >"$TMP/badinc.json" 2>/dev/null
is "$?" 1 "an include the task's folder lacks exits 1"
is "$(json_get "$TMP/badinc.json" 'd["status"]')" COMPILE_ERROR "and is a COMPILE_ERROR"
grep -q "6:9: include 'templates/cuda/missing.cu'" "$TMP/badinc.json"
ok $? "whose log names the line and the file"

# 5. export: a run's best.mlx (knob values baked in as #define) becomes a Python module that
# imports on any MLX and, on the CPU build, says clearly that it needs a GPU when called
mkdir -p "$TMP/run"
{ printf '/* ksearch: best kernel of run x\n * task softmax, backend mlx, candidate 3: warp\n */\n'
  printf '#define WARPS 8\n#define EXP2 0\n\n'
  cat "$ROOT/tasks/softmax/templates/mlx/warp_row.cuda.mlx"; } >"$TMP/run/best.mlx"
"$KS" export "$TMP/run" --to mlx --out "$TMP/ks_found.py" 2>"$TMP/export.err"
is "$?" 0 "export RUN_DIR --to mlx"
grep -q '("WARPS", WARPS)' "$TMP/ks_found.py" && grep -q "WARPS = (8)" "$TMP/ks_found.py" &&
	grep -q "mx.fast.cuda_kernel" "$TMP/ks_found.py"
ok $? "the module launches the kernel with the run's knob values as template args"
"$KS" export "$ROOT/tasks/softmax/baseline.mlx" --task softmax --to mlx >/dev/null 2>"$TMP/export2.err"
is "$?" 2 "a native baseline is not exported"
(cd "$TMP" && python3 - >"$TMP/py.out" 2>&1) <<'PY'
import mlx.core as mx
import ks_found
x = mx.random.normal((8, 64))
try:
    y = ks_found.softmax(x)
    ok = mx.allclose(y, mx.softmax(x, axis=-1), atol=1e-6, rtol=1e-4).item()
    print("ran on the GPU, equal to mx.softmax:", ok)
except RuntimeError as e:
    print("RuntimeError:", e)
PY
is "$?" 0 "the exported module imports and its function can be called"
if [ $gpu -eq 0 ]; then
	grep -q "RuntimeError: softmax: this kernel needs MLX's CUDA backend" "$TMP/py.out"
	ok $? "on the CPU build calling it says it needs MLX's CUDA backend"
else
	grep -q "equal to mx.softmax: True\|needs MLX's CUDA backend" "$TMP/py.out"
	ok $? "on a GPU MLX it equals mx.softmax (or says it needs the other backend)"
fi
sed 's/^/# /' "$TMP/py.out"

# the attention template's include becomes flash2.cu's text in the exported module
{ printf '#define BM 128\n#define BN 32\n#define WARPS 4\n#define STAGES 2\n#define QREG 0\n'
  printf '#define EXP2 1\n\n'; cat "$ROOT/tasks/attention/templates/mlx/flash2.cuda.mlx"; } >"$TMP/attn.mlx"
"$KS" export "$TMP/attn.mlx" --task attention --to mlx --out "$TMP/ks_attn.py" 2>"$TMP/export3.err"
is "$?" 0 "export of the attention template (an include in its header)"
grep -q '"#define BM 128' "$TMP/ks_attn.py" && grep -q 'fa2_cta' "$TMP/ks_attn.py" &&
	grep -q '"#undef BM' "$TMP/ks_attn.py" && ! grep -q '@mlx include' "$TMP/ks_attn.py"
ok $? "the module holds flash2.cu's device code between the knob macros"
# the wgmma template's persistent grid (PERSIST): the module launches the grid the mlx backend
# computes (tests/unit/test_mlx_kernel.c: 132 CTAs of 384 threads on the headline, the
# ordinary grid where the items are too many or head_dim 32 takes the plain rows)
"$KS" export "$ROOT/tasks/attention/templates/mlx/flash_wgmma.cuda.mlx" --task attention --to mlx \
	--define WG=2,BN=128,STAGES=3,WS=1,PERSIST=1 --out "$TMP/ks_wgmma.py" 2>"$TMP/export4.err"
is "$?" 0 "export of the wgmma template with PERSIST"
(cd "$TMP" && python3 - >"$TMP/grid.out" 2>&1) <<'PY'
import mlx.core as mx
import ks_wgmma as m
seen = []
def kernel(**kw):
    seen.append((kw["grid"], dict(kw["template"])["PGRID"]))
    return [None]
m._need_gpu = lambda *a: None  # only the launch's arguments are looked at
m._kernel = lambda *a: kernel
for b, h, l, d in ((1, 32, 2048, 128), (4, 32, 4096, 128), (1, 32, 2048, 32)):
    q = mx.zeros((b, h, l, d), dtype=mx.float16)
    m.attention(q, q, q, causal=1)
print(seen)
PY
is "$(tail -1 "$TMP/grid.out")" "[((50688, 1, 1), 1), ((12288, 128, 1), 0), ((6144, 32, 1), 0)]" \
	"the module's grids: persistent on the headline, ordinary for 4096 items and head_dim 32"

# 4. custom kernels: the CPU build says it needs a GPU backend
if [ $gpu -eq 0 ]; then
	"$KS" eval attention "$ROOT/tasks/attention/templates/mlx/flash2.cuda.mlx" --backend mlx \
		--define BM=64,BN=64,WARPS=4,STAGES=2,QREG=1,EXP2=1 >"$TMP/a.out" 2>"$TMP/a.err"
	is "$?" 2 "the attention template on the CPU build of MLX exits 2"
	grep -q "custom kernels need MLX's Metal or CUDA backend" "$TMP/a.err"
	ok $? "and says custom kernels need MLX's Metal or CUDA backend"
	"$KS" eval softmax "$K/softmax_cuda.mlx" --backend mlx >"$TMP/k.out" 2>"$TMP/k.err"
	is "$?" 2 "a custom kernel on the CPU build of MLX exits 2"
	grep -q "custom kernels need MLX's Metal or CUDA backend (this MLX .* is the CPU build" "$TMP/k.err"
	ok $? "and says custom kernels need MLX's Metal or CUDA backend"
else
	echo "# this MLX has a GPU backend: custom kernels run (docs/mlx.md)"
fi
# 5. a template of the flavour this MLX cannot run is left out of the search: ksearch beside
# a runner whose probe says "CUDA" (the search space is set up before any kernel runs)
BIN=$(cd "$(dirname "$KS")" && pwd)
FAKE=$TMP/fake-cuda-mlx
mkdir -p "$FAKE"
cp "$BIN/ksearch" "$BIN/ksearch-runner" "$BIN/ksearch-cc-jail" "$FAKE/"
printf '#!/bin/sh\n[ "$1" = --probe ] && echo "mlx 0.32.4 metal=0 cuda=1 device=Probe only" && exit 0\nexit 3\n' \
	>"$FAKE/ksearch-runner-mlx"
chmod +x "$FAKE/ksearch-runner-mlx"
"$FAKE/ksearch" run softmax --backend mlx --budget 1 --verbose --out "$TMP/fake-run" >"$TMP/f.out" 2>&1
grep -q "simd_row.metal.mlx' cannot run here (a Metal template; this MLX (Probe only) runs CUDA kernels)" "$TMP/f.out" &&
	grep -q "in 2 templates" "$TMP/f.out" && ! grep -q "family: mlx-metal" "$TMP/f.out"
ok $? "on MLX's CUDA build the Metal templates are left out of the search ($(grep -m1 'templates' "$TMP/f.out"))"
done_testing
