#!/usr/bin/env bash
# Registers and spills of the CUDA attention templates at every feasible knob configuration
# (the knob values and require lines of each file's @ksearch block, spelled out below), from
# ptxas -v alone: no GPU needed.  From the repository root:
#
#   bash bench/probes/attention_ptxas.sh [DIR] > table.tsv
#
# DIR holds flash2.cu and flash_wgmma.cu (default tasks/attention/templates/cuda), so an older
# copy can be measured the same way and the two tables compared.  One line per configuration
# and kernel: file, knobs, kernel (name, head_dim, causal), registers, spill stores, spill
# loads (bytes).  ARCH (default 90a); JOBS parallel compiles (default nproc); ONLY=FILE.cu
# measures that template alone.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$(realpath "${1:-$ROOT/tasks/attention/templates/cuda}")
ARCH=${ARCH:-90a} JOBS=${JOBS:-$(nproc)}
configs() {
	local bm bn w st qr ex wg mt
	for bm in 64 128; do for bn in 32 64 128; do for w in 4 8; do for st in 2 3; do
		[ $((bm % (16 * w))) -eq 0 ] || continue
		mt=$((bm / (16 * w)))
		[ $mt -le 2 ] && [ $((mt * bn)) -le 128 ] || continue
		[ $(((bm + 2 * st * bn) * 136 * 2)) -le 232448 ] || continue
		for qr in 0 1; do for ex in 0 1; do
			echo "flash2.cu BM=$bm,BN=$bn,WARPS=$w,STAGES=$st,QREG=$qr,EXP2=$ex"
		done; done
	done; done; done; done
	for wg in 1 2 3; do for bn in 64 128; do for st in 2 3; do for ov in 0 1; do
		[ $(((64 * wg + 2 * st * bn) * 128 * 2 + 1024)) -le 232448 ] || continue
		[ "$wg" -le 2 ] || [ "$bn" -le 64 ] || continue
		echo "flash_wgmma.cu WG=$wg,BN=$bn,STAGES=$st,OVL=$ov"
	done; done; done; done
}
one() { # FILE KNOBS: the table lines of one compile
	local defs
	defs=$(echo "$2" | tr ',' '\n' | sed 's/^/-D/' | tr '\n' ' ')
	# shellcheck disable=SC2086
	nvcc -std=c++17 -O3 -gencode arch=compute_$ARCH,code=sm_$ARCH -Xptxas -v -c -o /dev/null \
		$defs "$DIR/$1" 2>&1 | awk -v f="$1" -v k="$2" '
		/Compiling entry function/ {
			match($0, /_Z[0-9]+/); n = substr($0, RSTART + 2, RLENGTH - 2) + 0
			name = substr($0, RSTART + RLENGTH, n)
			d = ""; if (match($0, /ILi[0-9]+ELb[01]E/)) {
				s = substr($0, RSTART + 3, RLENGTH - 4); split(s, p, "ELb")
				d = " D" p[1] " causal" p[2] }
			kern = name d }
		/spill stores/ { st = $5; ld = $9 }
		/Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") r = $(i + 1)
			printf "%s\t%s\t%s\t%s\t%s\t%s\n", f, k, kern, r, st, ld }
		/error/ { print f "\t" k "\tERROR " $0 }'
}
export -f one
export DIR ARCH
configs | grep "^${ONLY:-}" | xargs -P "$JOBS" -L 1 bash -c 'one "$0" "$1"' | sort
