#!/usr/bin/env bash
# What each shipped MLX template's kernel text costs MLX on every call, on this machine's
# CPU, before and after ksearch compacts it (docs/mlx.md, "Kernel text"):
#
#   bash bench/mlx/text_cost.sh            # after `make build`; no GPU, no MLX needed
#
# Builds bench/mlx/text_cost.cpp against build/libksearch.a and prints one table row per
# template: bytes and microseconds per call of MLX's per-call string work (a model of it:
# the copy into a new source string and std::hash, as MLX 0.32's custom_kernel.cpp does).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
LIB=${KS_BUILD:-build}/libksearch.a
[ -f "$LIB" ] || { echo "text_cost.sh: $LIB not found: run 'make build' first" >&2; exit 1; }
BIN=$(mktemp -d)/text_cost
trap 'rm -rf "$(dirname "$BIN")"' EXIT
${CXX:-g++} -std=c++17 -O2 -Isrc -Iinclude bench/mlx/text_cost.cpp "$LIB" -o "$BIN"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
echo
echo "| kernel file | bytes | us per call | compacted bytes | us per call | saved us |"
echo "|---|---:|---:|---:|---:|---:|"
for f in tasks/*/templates/mlx/*.cuda.mlx tasks/*/templates/mlx/*.metal.mlx; do
	"$BIN" "$(dirname "$(dirname "$(dirname "$f")")")" "$f"
done
