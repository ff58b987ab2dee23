#!/usr/bin/env bash
# Where an attention template's time goes, from the hardware counters (Nsight Compute), on a
# GPU machine whose runtime lets ncu read them, from the repository root:
#
#   OUT=DIR bash bench/probes/attention_profile.sh ["K=V,..." ...]
#
# Each setting (default: flash_wgmma.cu's header defaults, spelled out, since the probe's
# macros default to the plain kernel) is built by bench/probes/attention_probe.sh (PREBUILT=1
# with the same settings in the same order reuses OUT's binaries, e.g. built elsewhere with
# BUILD_ONLY=1) and launched once on SHAPE (default the headline, "1 32 32 2048 2048 128 0":
# batch heads kv_heads seqlen kv_seqlen head_dim causal).  ncu profiles the template's kernel
# (not the probe's reference) with the clocks left as they are (--clock-control none):
# speed of light, occupancy, scheduler and warp-state sections, each pipe's share of its peak
# (tensor, FMA, ALU, MUFU = xu, LSU) and the cycles per issued instruction each stall reason
# costs.  OUT gets the full reports (profile-N.txt) and prints a digest of each.  HOTSPOTS=1
# adds a second ncu pass per setting with PC sampling (SourceCounters): OUT gets hot-N.ncu-rep,
# the SASS source page hot-N.csv and bench/probes/sass_hotspots.py's digest of it (which
# instructions the warps wait at, and why).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=$(mkdir -p "${OUT:-/tmp/ks-attention-profile}" && cd "${OUT:-/tmp/ks-attention-profile}" && pwd)
SHAPE=${SHAPE:-1 32 32 2048 2048 128 0}
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=("WG=2,BN=128,STAGES=3,WS=1,PERSIST=1")
if [ -z "${PREBUILT:-}" ]; then
	BUILD_ONLY=1 OUT=$OUT bash bench/probes/attention_probe.sh "${settings[@]}" >/dev/null || exit 1
fi
# one --metrics option: ncu refuses a second
METRICS='regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active$'
METRICS+=',regex:sm__inst_executed_pipe_[a-z_]*\.avg\.pct_of_peak_sustained_active$'
METRICS+=',regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$'
i=0
for s in "${settings[@]}"; do
	rep=$OUT/profile-$i.txt
	echo "== $s on $SHAPE"
	[ -x "$OUT/probe$i" ] || { echo "attention_profile: $s did not compile (see $OUT/compile$i.log)" >&2; exit 1; }
	# shellcheck disable=SC2086
	ncu --clock-control none -k regex:'^attention_(wgmma|generic)' \
		--section SpeedOfLight --section Occupancy --section SchedulerStats \
		--section WarpStateStats --section ComputeWorkloadAnalysis \
		--section MemoryWorkloadAnalysis --section InstructionStats \
		--metrics "$METRICS" \
		"$OUT/probe$i" $SHAPE >"$rep" 2>&1
	rc=$?
	grep -E '^  [a-z_]+.*\(|Duration|Elapsed Cycles|SM Frequency|Warp Cycles Per Issued|Issued Warp|Registers Per|No Eligible|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|DRAM Throughput|Executed Ipc|Issue Slots Busy|SM Busy|Eligible Warps|Active Warps|pct_of_peak|issue_stalled' "$rep" |
		grep -vE ' 0(\.0+)?$' | head -120
	echo "ncu rc=$rc; full report: $rep"
	if [ -n "${HOTSPOTS:-}" ]; then
		hot=$OUT/hot-$i
		# shellcheck disable=SC2086
		ncu --clock-control none -k regex:'^attention_(wgmma|generic)' \
			--section SourceCounters -o "$hot" -f "$OUT/probe$i" $SHAPE >"$hot.log" 2>&1
		echo "ncu (hotspots) rc=$?"
		python3 bench/probes/sass_hotspots.py "$hot.ncu-rep"
	fi
	i=$((i + 1))
done
