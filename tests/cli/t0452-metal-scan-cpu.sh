#!/usr/bin/env bash
# needs: g++ with C++20 and _Float16 (scripts/setup.sh installs g++).
# The selective scan's Metal body (tasks/selective_scan/templates/mlx/state_scan.metal.mlx),
# which no machine here can compile for a GPU, run on the CPU as written by
# bench/mlx/metal_scan_cpu.py (a SIMD group = 32 coroutines exchanging values in rounds)
# against a float64 reference on the task's checks: at its defaults and at the smallest and
# largest tiles.  A body that miscomposes the lanes' pairs, takes the carry from the wrong
# lane or gives lane 0 its neighbour's state fails here (checked by hand: those three
# mutations fail 8, 5 and 9 of the 10 shapes).
. "$(dirname "$0")/lib.sh"
echo '#include <ucontext.h>
int main() { ucontext_t c; getcontext(&c); _Float16 h = (_Float16)1.0f; return (float)h == 1.0f ? 0 : 1; }' \
	>"$TMP/probe.cc"
g++ -std=c++20 -o "$TMP/probe" "$TMP/probe.cc" 2>/dev/null && "$TMP/probe" ||
	skip_rest "no g++ with C++20 and _Float16 here (apt-get install g++)"
python3 "$ROOT/bench/mlx/metal_scan_cpu.py" --define "" --define ITEMS=4,CPB=1 \
	--define ITEMS=16,CPB=8 >"$TMP/out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/out"
is "$rc" 0 "the Metal body meets the task's tolerance on every check, at three settings"
is "$(grep -c ': ok (' "$TMP/out")" 30 "30 shape runs (10 shapes x 3 settings), each ok"
done_testing
