#!/usr/bin/env bash
# Which OpenBLAS core the library yardstick times, and what it costs (issue 39 item 16):
#
#   bash bench/cpu/openblas_cores.sh [ROUNDS]     (default 3)
#
# builds bench/cpu/openblas_cores.c against pkg-config's openblas and times cblas_sgemm at
# tasks/matmul's CPU workloads (512^3 and 256x1000x768) with the core OpenBLAS detects
# and with each of CORES (default: Prescott SkylakeX Cooperlake), all cores' threads and
# one thread, the cores interleaved round by round.  One line per run:
#   threads core m n k median_us spread_pct gflops calls
set -eu
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
CORES=${CORES:-Prescott SkylakeX Cooperlake}
bin=$(mktemp -d)/openblas_cores
trap 'rm -rf "$(dirname "$bin")"' EXIT
cc -O2 bench/cpu/openblas_cores.c -o "$bin" $(pkg-config --cflags --libs openblas)
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
for r in $(seq 1 "$ROUNDS"); do
	for threads in "$(nproc)" 1; do
		for core in detected $CORES; do
			for wl in "512 512 512" "256 1000 768"; do
				if [ "$core" = detected ]; then
					env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS="$threads" "$bin" $wl 1 |
						sed "s/^/$threads detected:/"
				else
					OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS="$threads" "$bin" $wl 1 |
						sed "s/^/$threads /"
				fi
			done
		done
	done
done
