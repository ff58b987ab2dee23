#!/usr/bin/env bash
# Where state_scan.cu's time goes, from the hardware counters (Nsight Compute), on a GPU
# machine whose runtime lets ncu read them, from the repository root:
#
#   OUT=DIR bash bench/probes/scan_profile.sh ["NAME:KERNEL.cu:K=V,..." ...]
#
# Each setting (default: the template's defaults and the fastest measured setting, PF 2
# ITEMS 16 CPB 16) is built by bench/probes/state_scan_probe.py and launched once at b1 d2048
# L2048 n16; ncu profiles that launch with the clocks left as they are (--clock-control
# none) and prints, per kernel, the speed-of-light, occupancy, scheduler and warp-state
# (stall reason) sections, and the cycles per issued instruction each stall reason costs.  OUT gets the full report (scan-profile.txt).
# HOTSPOTS=1 adds a second ncu pass with PC sampling (SourceCounters): OUT gets its report
# (scan-hot.ncu-rep), the SASS source page (scan-hot.csv) and bench/probes/sass_hotspots.py's
# digest of it: which instructions the warps wait at, and why.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
S=tasks/selective_scan/templates/cuda/state_scan.cu
settings=("$@")
# the probe needs one define a setting: FAST=1 is the header's default already
[ ${#settings[@]} -gt 0 ] || settings=("defaults:$S:FAST=1" "cpw2unr4:$S:CPW=2,UNR=4")
list=$(mktemp)
printf '%s\n' "${settings[@]}" >"$list"
out=${OUT:-/tmp}/scan-profile.txt
ncu --clock-control none -k regex:scan_state --section SpeedOfLight --section Occupancy \
	--section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
	--section MemoryWorkloadAnalysis --section InstructionStats \
	--metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
	python3 bench/probes/state_scan_probe.py "$list" --once >"$out" 2>&1
rc=$?
grep -E '^  [a-z_]+.*\(|Duration|Warp Cycles Per Issued|Issued Warp|Achieved Occupancy|Theoretical Occupancy|Registers Per|No Eligible|Stall|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc|Issue Slots Busy|SM Busy|One or More Eligible|Eligible Warps|Active Warps|issue_stalled' "$out" | grep -vE ' 0(\.0+)?$' | head -90
echo "ncu rc=$rc; full report: $out"
if [ -n "${HOTSPOTS:-}" ]; then
	hot=${OUT:-/tmp}/scan-hot
	ncu --clock-control none -k regex:scan_state --section SourceCounters -o "$hot" -f \
		python3 bench/probes/state_scan_probe.py "$list" --once >"$hot.log" 2>&1
	echo "ncu (hotspots) rc=$?"
	python3 bench/probes/sass_hotspots.py "$hot.ncu-rep"
fi
