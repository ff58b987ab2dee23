#!/usr/bin/env bash
# needs: MLX (pip install "mlx[cpu]") and mlx-lm's model code (pip install --no-deps
# mlx-lm==0.32.2; scripts/setup.sh does both); a GPU MLX for the exported kernel (skipped without).
# bench/mlx/mamba_prefill.py on a one-layer model: the stock prefill runs and is timed, the
# patched block with the task's scan in MLX ops (--scan reference) gives the stock logits,
# and ksearch's exported selective_scan kernel either runs (a GPU MLX) or the script says
# custom kernels need a GPU MLX and exits 2.
. "$(dirname "$0")/lib.sh"
P=$ROOT/bench/mlx/mamba_prefill.py
python3 -c "import mlx.core" 2>/dev/null || skip_rest "no MLX here (pip install \"mlx[cpu]\")"
python3 -c "import importlib.util as u; assert u.find_spec('mlx_lm')" 2>/dev/null ||
	skip_rest "no mlx-lm here (pip install --no-deps mlx-lm==0.32.2)"

# 1. stock against the patched block with the reference scan: the same logits
python3 "$P" --layers 1 --tokens 8 --reps 1 --patched-reps 1 --scan reference >"$TMP/ref.out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/ref.out"
is "$rc" 0 "stock and patched (reference scan) prefill run and agree"
grep -Eq '^\| 8 \| [0-9.]+ \| [0-9]+ \| [0-9.]+ \| [0-9]+ \| [0-9.]+x \| [0-9.e+-]+ \| [0-9.e+-]+ \|$' "$TMP/ref.out"
ok $? "a table row: tokens, stock ms and tok/s, patched ms and tok/s, speedup, max |dlogits|, max |logits|"
grep -q "within the fp16 tolerance" "$TMP/ref.out"
ok $? "the logits are within the fp16 tolerance"

# 2. the kernel ksearch exports: a template exported at its knobs' defaults
"$KS" export "$ROOT/tasks/selective_scan/templates/mlx/state_scan.cuda.mlx" --task selective_scan \
	--to mlx --out "$TMP/ks_scan.py" 2>"$TMP/export.err"
is "$?" 0 "export state_scan.cuda.mlx --to mlx"
grep -q "PF = (1)" "$TMP/ks_scan.py" && grep -q '("PF", PF)' "$TMP/ks_scan.py"
ok $? "the template's knob defaults are baked in and passed as template args"
"$KS" export "$ROOT/tasks/selective_scan/templates/mlx/state_scan.cuda.mlx" --task selective_scan \
	--to mlx --define PF=0,ITEMS=16 2>/dev/null | grep -q "ITEMS = (16)"
ok $? "--define overrides a default"

# the Metal template exports to the same function, built with mx.fast.metal_kernel
"$KS" export "$ROOT/tasks/selective_scan/templates/mlx/state_scan.metal.mlx" --task selective_scan \
	--to mlx --out "$TMP/ks_mscan.py" 2>"$TMP/mexport.err"
is "$?" 0 "export state_scan.metal.mlx --to mlx"
grep -q "mx.fast.metal_kernel" "$TMP/ks_mscan.py" && grep -q "def selective_scan(u, delta, A, B, C, D, z, delta_bias)" "$TMP/ks_mscan.py" &&
	grep -q '("CPB", CPB)' "$TMP/ks_mscan.py"
ok $? "a metal_kernel with the task's signature and the knobs as template args"

python3 "$P" --layers 1 --tokens 8 --reps 1 --patched-reps 1 --kernels "$TMP/ks_scan.py" \
	>"$TMP/k.out" 2>"$TMP/k.err"
rc=$?
sed 's/^/# /' "$TMP/k.out" "$TMP/k.err"
if grep -q "custom kernels need a GPU MLX" "$TMP/k.err"; then
	is "$rc" 2 "without a GPU MLX the patched path exits 2"
	grep -Eq '^\| 8 \| [0-9.]+ \| [0-9]+ \| - \|' "$TMP/k.out"
	ok $? "after the stock row"
else
	is "$rc" 0 "on a GPU MLX the exported kernel's prefill runs and agrees with stock"
fi
done_testing
