#!/usr/bin/env bash
# On a GPU machine, from the repository root: the cuBLAS library yardstick (tasks/matmul and
# tasks/matmul_bf16 library.cu).  Builds ksearch unless SKIP_BUILD=1, then runs
#   ksearch eval TASK KERNEL --backend cuda --quick --no-checks --workloads 0,2
# for the shipped tensor-core / tiled kernels, printing eval's table (it has cuBLAS's
# median and the speedup over it) and, per workload, the --json figures.  Success: each
# headline reads "PASSED, N.NNx the baseline, N.NNx cuBLAS (geometric means)", no line
# says "not trusted", and library_us is a number on every workload.  OUT=DIR keeps the logs.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-$ROOT/build}
OUT=${OUT:-$BUILD/library-check}
mkdir -p "$OUT"
export KSEARCH_HOME=$ROOT
if [ -z "${SKIP_BUILD:-}" ]; then
	cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKS_WERROR=OFF >"$OUT/build.log" 2>&1 &&
		cmake --build "$BUILD" -j"$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
for spec in "matmul templates/cuda/smem_tiled.cu" "matmul templates/cuda/mma_3xtf32.cu" \
	"matmul_bf16 templates/cuda/mma_bf16.cu"; do
	set -- $spec
	name=$1-$(basename "$2" .cu)
	echo "== $1 $2"
	"$BUILD/ksearch" eval "$1" "tasks/$1/$2" --backend cuda --quick --no-checks \
		--workloads ${WORKLOADS:-0,2} 2>"$OUT/$name.err" | tee "$OUT/$name.txt"
	grep -i "library\|cublas" "$OUT/$name.err" | sed 's/^/  stderr: /'
	"$BUILD/ksearch" eval "$1" "tasks/$1/$2" --backend cuda --quick --no-checks \
		--workloads ${WORKLOADS:-0,2} --json >"$OUT/$name.json" 2>>"$OUT/$name.err"
	python3 - "$OUT/$name.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("  no JSON:", e); sys.exit()
print("  json: status %s library %s speedup_vs_baseline %s speedup_vs_library %s" %
      (d["status"], d.get("library"), d.get("speedup_vs_baseline"), d.get("speedup_vs_library")))
for w in d.get("workloads", []):
    print("  %-26s median_us %s library_us %s vs library %s" % (
        " ".join("%s=%s" % kv for kv in w["params"].items()), w.get("median_us"),
        w.get("library_us"), w.get("speedup_vs_library")))
    if w.get("log"):
        print("    log:", w["log"][:300].replace("\n", " | "))
PY
done
