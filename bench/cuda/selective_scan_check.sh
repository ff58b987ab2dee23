#!/usr/bin/env bash
# On a GPU machine, from the repository root: build ksearch (unless SKIP_BUILD=1) and run
# `ksearch eval selective_scan FILE --backend cuda --quick` for the baseline and every CUDA
# template at its default knobs (every workload and check, three seeds each), then print one
# line per file and workload: status, median, speedup over the baseline.  OUT=DIR keeps the
# JSON and logs.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-$ROOT/build}
OUT=${OUT:-$BUILD/scan-check}
mkdir -p "$OUT"
export KSEARCH_HOME=$ROOT
if [ -z "${SKIP_BUILD:-}" ]; then
	cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKS_WERROR=OFF >"$OUT/build.log" 2>&1 &&
		cmake --build "$BUILD" -j"$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
T=tasks/selective_scan
for f in $T/templates/cuda/*.cu $T/baseline.cu; do
	name=$(basename "$f" .cu)
	"$BUILD/ksearch" eval selective_scan "$f" --backend cuda --quick --json ${EVAL_ARGS:-} \
		>"$OUT/eval-$name.json" 2>"$OUT/eval-$name.err"
	echo "== $f rc=$?"
	python3 - "$OUT/eval-$name.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("  no JSON:", e); sys.exit()
print("  status", d["status"], "speedup", d.get("speedup_vs_baseline"))
for w in d.get("checks", []) + d.get("workloads", []):
    p = w.get("params", {})
    tag = w.get("name") or "b%s d%s L%s n%s" % (p.get("batch"), p.get("dim"), p.get("seqlen"), p.get("dstate"))
    med = w.get("median_us")
    line = "  %-28s %-20s" % (tag, w["status"])
    if med:
        line += " %10.1f us  x%s" % (med, w.get("speedup_vs_baseline"))
    line += "  max_abs_err %s" % w.get("max_abs_err")
    if w["status"] != "PASSED" and w.get("log"):
        line += "  " + w["log"][:300].replace("\n", " | ")
    print(line)
PY
done
