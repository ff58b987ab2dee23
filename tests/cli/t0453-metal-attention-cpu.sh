#!/usr/bin/env bash
# needs: g++ with C++20 and _Float16 (scripts/setup.sh installs g++).
# timeout: 1800
# Attention's Metal template (tasks/attention/templates/mlx/flash_simd.metal.mlx: SIMD-group
# matrices, each lane's own elements of a fragment for the online softmax), which no machine
# here can compile for a GPU, runs on the CPU as written through bench/mlx/metal_cpu.py (its
# SIMD-group matrices: each lane keeps the whole 8x8 matrix, and a lane's thread_elements()
# are gathered from the other lanes' copies before the next whole-matrix operation) and
# `ksearch eval --backend cpu`: the task's inputs, seeds, every check the cpu backend runs
# and the task's tolerance, at the defaults and at the smallest tiles with two row blocks a
# SIMD group.  A body that drops the online-softmax rescale, reduces a row's maximum over the
# wrong lanes, or loads K untransposed fails there (checked by hand: docs/mlx.md).  The
# task's GPU-only checks (1111-long ragged shapes) take too long for CI:
# `python3 bench/mlx/metal_cpu.py ... --all-checks --eval` runs them.
. "$(dirname "$0")/lib.sh"
need_metal_cpu
evaluate() { # evaluate DEFINES: ksearch eval's status of the template on the CPU
	python3 "$ROOT/bench/mlx/metal_cpu.py" "$ROOT/tasks/attention/templates/mlx/flash_simd.metal.mlx" \
		--task attention ${1:+--define "$1"} --out "$TMP/k.c" --ksearch "$KS" --eval -- \
		--workloads 0 --quick --no-baseline --no-library --timeout "$EMU_TIMEOUT" --json >"$TMP/out.json" 2>"$TMP/err"
	json_get "$TMP/out.json" 'd["status"] + " " + str(len(d["checks"]))' 2>/dev/null ||
		{ head -c 2000 "$TMP/err" | sed 's/^/# /'; echo NO_JSON; }
}
is "$(evaluate)" "PASSED 24" "flash_simd.metal.mlx (BK 16, WM 4, QR 1) PASSED workload 0 and its 24 CPU checks"
is "$(evaluate BK=8,WM=1,QR=2)" "PASSED 24" "... and at BK 8, one SIMD group, two row blocks a group"
done_testing
