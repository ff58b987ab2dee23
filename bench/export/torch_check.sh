#!/usr/bin/env bash
# On the GPU machine (torch + CUDA), from the repository root: check `ksearch export` against
# torch, end to end, in about 3 minutes.
#   1. ksearch run softmax --budget 8 (cpu backend), export --to torch: the op imports and
#      matches torch.softmax on CPU tensors; --to flashinfer: main.py::run from the Solution's
#      own sources matches too
#   2. ksearch run softmax --backend cuda --budget CUDA_BUDGET (default 4; 0 skips the run;
#      tasks/softmax/baseline.cu is exported instead, as when the run fails), export --to torch: matches torch.softmax on CUDA tensors;
#      --to c: `make` with nvcc builds libsoftmax.a and a CUDA C++ program linking it matches
#      torch's result
# Prints one "PASS name" or "FAIL name" line per check and "ALL PASS" at the end when all
# passed.  Environment: BUILD (default build; SKIP_BUILD=1 uses it as it is, libraries from
# BUILD/devlibs as in bench/cuda/run.sh), OUT=DIR keeps the logs.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-$ROOT/build}
W=$(mktemp -d)
OUT=${OUT:-$W/out}
mkdir -p "$OUT"
export KSEARCH_HOME=$ROOT KSEARCH_CACHE=${KSEARCH_CACHE:-$W/cache} KSEARCH_TORCH_BUILD=$W/torch
if [ -d "$BUILD/devlibs" ]; then
	for f in "$BUILD"/devlibs/*.so*; do
		ldconfig -p | grep -q "$(basename "$f") " || cp -n "$f" /usr/local/lib/
	done
	ldconfig 2>/dev/null
fi
if [ -z "${SKIP_BUILD:-}" ]; then
	cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKS_WERROR=OFF >"$OUT/build.log" 2>&1 &&
		cmake --build "$BUILD" -j"$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
KS=$BUILD/ksearch
FAILS=0
check() { # check NAME COMMAND...: PASS or FAIL with the command's last lines
	local name=$1
	shift
	if "$@" >"$OUT/$name.log" 2>&1; then
		echo "PASS $name"
	else
		echo "FAIL $name"
		tail -15 "$OUT/$name.log" | sed 's/^/    /'
		FAILS=$((FAILS + 1))
	fi
}

py_check() { # py_check MODULE_DIR MODULE FUNCTION DEVICE
	(cd "$1" && python3 - "$2" "$3" "$4") <<'PY'
import importlib, sys, torch
mod, fn, dev = importlib.import_module(sys.argv[1]), sys.argv[2], sys.argv[3]
f = getattr(mod, fn)
for rows, cols in ((67, 1000), (5, 1), (1, 4096), (33, 1023), (2048, 2048), (8192, 512)):
    x = torch.randn(rows, cols, device=dev) * 3
    y = f(x)
    want = torch.softmax(x, -1)
    err = (y - want).abs().max().item()
    assert torch.allclose(y, want, atol=1e-6, rtol=1e-4), f"{rows}x{cols}: max abs err {err}"
    print(f"{rows}x{cols} on {dev}: max abs err {err:.3g}")
assert torch.equal(torch.ops.ksearch.softmax(x), f(x)) or dev == "cuda"
try:
    f(x.double())
    raise SystemExit("float64 was accepted")
except TypeError as e:
    print("dtype check:", e)
PY
}

fi_check() { # fi_check SOLUTION.json DEVICE: write its sources to a folder, import main.py::run
	python3 - "$1" "$W/fi-$2" <<'PY' && py_check "$W/fi-$2" main run "$2"
import json, os, sys
d = json.load(open(sys.argv[1]))
os.makedirs(sys.argv[2], exist_ok=True)
for f in d["sources"]:
    open(os.path.join(sys.argv[2], f["path"]), "w").write(f["content"])
print(d["name"], d["spec"])
PY
}

# 1. a CPU run
check cpu-run "$KS" run softmax --budget 8 --top 2 --min-time 0.01 --out "$W/cpu"
check cpu-export-torch "$KS" export "$W/cpu" --to torch --out "$W/ks_cpu.py"
check cpu-torch-matches py_check "$W" ks_cpu softmax cpu
check cpu-export-flashinfer "$KS" export "$W/cpu" --to flashinfer --out "$W/sol_cpu.json"
check cpu-flashinfer-matches fi_check "$W/sol_cpu.json" cpu

# 2. a CUDA kernel
KERNEL=$W/cuda
if [ "${CUDA_BUDGET:-4}" = 0 ]; then
	echo "note: CUDA_BUDGET=0, no CUDA run; exporting tasks/softmax/baseline.cu"
	KERNEL=tasks/softmax/baseline.cu
else
	"$KS" run softmax --backend cuda --budget "${CUDA_BUDGET:-4}" --top 2 --out "$W/cuda" >"$OUT/cuda-run.log" 2>&1 ||
		{ echo "note: the CUDA run failed (see cuda-run.log); exporting tasks/softmax/baseline.cu"; KERNEL=tasks/softmax/baseline.cu; }
fi
TASKARG=()
[ "$KERNEL" = tasks/softmax/baseline.cu ] && TASKARG=(--task softmax)
check cuda-export-torch "$KS" export "$KERNEL" "${TASKARG[@]}" --to torch --out "$W/ks_cuda.py"
check cuda-torch-matches py_check "$W" ks_cuda softmax cuda
check cuda-export-flashinfer "$KS" export "$KERNEL" "${TASKARG[@]}" --to flashinfer --out "$W/sol_cuda.json"
check cuda-flashinfer-matches fi_check "$W/sol_cuda.json" cuda
check cuda-export-c "$KS" export "$KERNEL" "${TASKARG[@]}" --to c --out "$W/c"
cat >"$W/c_main.cu" <<'CU'
// softmax from libsoftmax.a on 33x1023, written to stdout as floats
#include <cstdio>
#include <cmath>
#include <vector>
#include "softmax.h"
int main()
{
	int r = 33, c = 1023;
	std::vector<float> x(r * c), y(r * c);
	for (int i = 0; i < r * c; i++)
		x[i] = (float)(3 * std::sin(0.37 * i));
	float *dx, *dy;
	cudaMalloc(&dx, x.size() * 4);
	cudaMalloc(&dy, y.size() * 4);
	cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
	softmax(dx, dy, r, c, 0);
	cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost);
	fwrite(y.data(), 4, y.size(), stdout);
	return cudaGetLastError() != cudaSuccess;
}
CU
c_check() {
	make -C "$W/c" &&
		nvcc -O2 -I"$W/c" "$W/c_main.cu" "$W/c/libsoftmax.a" -o "$W/c_main" &&
		"$W/c_main" >"$W/c_out.bin" &&
		python3 - "$W/c_out.bin" <<'PY'
import math, sys, torch
y = torch.frombuffer(bytearray(open(sys.argv[1], "rb").read()), dtype=torch.float32).view(33, 1023)
x = torch.tensor([3 * math.sin(0.37 * i) for i in range(33 * 1023)], dtype=torch.float32).view(33, 1023)
want = torch.softmax(x, -1)
assert torch.allclose(y, want, atol=1e-6, rtol=1e-4), (y - want).abs().max()
print("max abs err", (y - want).abs().max().item())
PY
}
check cuda-c-library-matches c_check
cp -r "$W"/*.py "$W"/*.json "$OUT"/ 2>/dev/null
[ "$FAILS" -eq 0 ] && echo "ALL PASS" || echo "$FAILS FAILED (logs in $OUT)"
rm -rf "$W/torch" "$W/cache"
[ "$FAILS" -eq 0 ]
