#!/usr/bin/env bash
# The compacted kernel text MLX gets compiles to the same GPU code as the file it came from
# (docs/mlx.md, "Kernel text"): each CUDA template the MLX templates include, compacted by
# ksearch's own function (bench/mlx/text_cost.cpp --compact), and nvcc -cubin for sm_90a on
# both, at the knob defaults and at a second knob setting; the CUBINs must be byte-equal.
# Needs `make build` and nvcc; no GPU.  About 4 minutes on 2 cores.
#
#   bash bench/mlx/compact_check.sh
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
LIB=${KS_BUILD:-build}/libksearch.a
[ -f "$LIB" ] || { echo "compact_check.sh: $LIB not found: run 'make build' first" >&2; exit 1; }
command -v nvcc >/dev/null || { echo "compact_check.sh: nvcc not found" >&2; exit 1; }
W=$(mktemp -d)
c=""
trap 'rm -rf "$W" ${c:+"$c"}' EXIT
${CXX:-g++} -std=c++17 -O2 -Isrc -Iinclude bench/mlx/text_cost.cpp "$LIB" -o "$W/text_cost"
fail=0
# FILE:second knob setting
for fk in "tasks/attention/templates/cuda/flash_wgmma.cu:-DWS=1 -DPERSIST=1 -DSTAGES=3" \
	"tasks/attention/templates/cuda/flash2.cu:-DQREG=1 -DEXP2=1 -DSTAGES=2" \
	"tasks/selective_scan/templates/cuda/state_scan.cu:-DCPW=2 -DUNR=4 -DFAST=1"; do
	f=${fk%%:*}
	# the compacted copy sits beside the original: the same includes resolve
	c="$(dirname "$f")/.compact_$(basename "$f")"
	"$W/text_cost" --compact "$f" >"$c"
	for defs in "" "${fk#*:}"; do
		nvcc -cubin -arch=sm_90a -O3 -w $defs -o "$W/a.cubin" "$f"
		nvcc -cubin -arch=sm_90a -O3 -w $defs -o "$W/b.cubin" "$c"
		if cmp -s "$W/a.cubin" "$W/b.cubin"; then
			echo "ok: $f [${defs:-defaults}]: $(wc -c <"$f") -> $(wc -c <"$c") bytes, equal CUBINs ($(wc -c <"$W/a.cubin") bytes)"
		else
			echo "DIFFERENT: $f [${defs:-defaults}]"
			fail=1
		fi
	done
	rm -f "$c"
done
exit $fail
