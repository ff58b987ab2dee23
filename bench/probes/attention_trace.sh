#!/usr/bin/env bash
# Where a tile's cycles go inside flash_wgmma.cu's persistent kernel (PERSIST 1, OVL 0), on a
# GPU machine, from the repository root:
#
#   bash bench/probes/attention_trace.sh ["K=V,..." ...]
#
# Each setting (default: the header defaults, spelled out) is compiled twice with
# bench/probes/attention_probe.cu: plain, and with -DKS_TRACE=CTA (default CTA 5), where the
# first thread of each consumer warpgroup of that CTA stamps clock64() at every phase of its
# first 64 tiles (flash_wgmma.cu, "KS_TRACE").  Both run SHAPE (default the headline, "1 32 32
# 2048 2048 128 0"); the script prints both times (the stamps cost a few per cent), the traced
# run's table (cycles per phase and tile: kv_wait = the mbarrier waits for K and V, fence_turn
# = the proxy fence and, with PP, the wait for the turn, s_wgmma = S = Q K^T issued and
# completed, softmax = online softmax, rescale and pack, pv_turn, pv_wgmma = O += P V issued
# and completed; period = top of one tile to the next) and the median of each column.
# OUT (default /tmp/ks-attention-trace) keeps the binaries; PREBUILT=1 reuses them (built
# elsewhere with BUILD_ONLY=1: nvcc needs no GPU).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/ks-attention-trace} CTA=${CTA:-5} SHAPE=${SHAPE:-1 32 32 2048 2048 128 0}
TEMPLATE=$ROOT/tasks/attention/templates/cuda/flash_wgmma.cu
mkdir -p "$OUT"
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=("WG=2,BN=128,STAGES=3,WS=1,PERSIST=1")
i=0
for s in "${settings[@]}"; do
	if [ -z "${PREBUILT:-}" ]; then
		defs=$(echo "$s" | tr ',' '\n' | sed 's/^/-D/' | tr '\n' ' ')
		# shellcheck disable=SC2086
		nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -DKS_TEMPLATE="\"$TEMPLATE\"" \
			$defs -o "$OUT/plain$i" "$ROOT/bench/probes/attention_probe.cu" &
		# shellcheck disable=SC2086
		nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -DKS_TEMPLATE="\"$TEMPLATE\"" \
			$defs -DKS_TRACE="$CTA" -o "$OUT/traced$i" "$ROOT/bench/probes/attention_probe.cu" &
		wait
	fi
	for b in plain traced; do
		[ -x "$OUT/$b$i" ] || { echo "attention_trace: $s did not compile ($OUT/$b$i missing;" \
			"nvcc's errors are above, or build it with BUILD_ONLY=1 first)" >&2; exit 1; }
	done
	i=$((i + 1))
done
[ -n "${BUILD_ONLY:-}" ] && exit 0
i=0 rc=0
for s in "${settings[@]}"; do
	echo "== $s on $SHAPE"
	# shellcheck disable=SC2086
	out=$("$OUT/plain$i" $SHAPE 1 50) || rc=1
	echo "plain:  $out"
	# the probe exits 1 when the output is wrong: that ends the script's exit status too
	# shellcheck disable=SC2086
	"$OUT/traced$i" $SHAPE 1 20 >"$OUT/traced$i.txt" || rc=1
	sed '1s/^/traced: /' "$OUT/traced$i.txt"
	i=$((i + 1))
done
exit $rc
