#!/usr/bin/env bash
# needs: g++ with C++20 and _Float16 (scripts/setup.sh installs g++).
# timeout: 1800
# The shipped Metal kernels, which no machine here can compile for a GPU, run on the CPU as
# written (bench/mlx/metal_cpu.py: each threadgroup's threads are coroutines that meet at
# SIMD-group functions and barriers):
# 1. through `ksearch eval --backend cpu` (the task's own inputs, seeds, checks and
#    tolerance; the C++ kernel and its entry shim compiled with -x c++): softmax's
#    simd_row.metal.mlx at 256 and 32 threads a row, matmul's tiled.metal.mlx, the selective
#    scan's state_scan.metal.mlx;
# 2. the scan by bench/mlx/metal_scan_cpu.py, which adds the task's GPU-only checks (32k
#    steps, exp underflow, ragged long) and dstate 20, at three knob settings.  A body that
#    miscomposes the lanes' pairs, takes the carry from the wrong lane or gives lane 0 its
#    neighbour's state fails there (checked by hand: 8, 5 and 9 of the 10 shapes).
. "$(dirname "$0")/lib.sh"
need_metal_cpu
M=$ROOT/bench/mlx/metal_cpu.py
evaluate() { # evaluate TASK TEMPLATE DEFINES: ksearch eval's status of the template on the CPU
	python3 "$M" "$ROOT/tasks/$1/templates/mlx/$2" --task "$1" ${3:+--define "$3"} --out "$TMP/k.c" \
		--ksearch "$KS" --eval -- --workloads 0 --quick --no-baseline --no-library --timeout "$EMU_TIMEOUT" --json \
		>"$TMP/$2.json" 2>"$TMP/$2.err"
	json_get "$TMP/$2.json" 'd["status"]' 2>/dev/null || { head -c 2000 "$TMP/$2.err" | sed 's/^/# /'; echo NO_JSON; }
}
is "$(evaluate softmax simd_row.metal.mlx)" PASSED "softmax simd_row.metal.mlx (TG 256) PASSED on the CPU"
is "$(evaluate softmax simd_row.metal.mlx TG=32)" PASSED "... and with one SIMD group a row (TG 32)"
is "$(evaluate matmul tiled.metal.mlx)" PASSED "matmul tiled.metal.mlx PASSED on the CPU"
is "$(evaluate selective_scan state_scan.metal.mlx)" PASSED "selective_scan state_scan.metal.mlx PASSED on the CPU"

python3 "$ROOT/bench/mlx/metal_scan_cpu.py" --define "" --define ITEMS=4,CPB=1 \
	--define ITEMS=16,CPB=8 >"$TMP/out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/out"
is "$rc" 0 "the scan meets the task's tolerance on every check, GPU-only ones too, at three settings"
is "$(grep -c ': ok (' "$TMP/out")" 30 "30 shape runs (10 shapes x 3 settings), each ok"
done_testing
