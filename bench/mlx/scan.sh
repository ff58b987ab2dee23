#!/usr/bin/env bash
# The selective scan through MLX's GPU backend (CUDA, or Metal on Apple silicon), on a GPU
# machine (issue 16, item 4), from the repository root, in about 3 minutes:
#
#   KS_BIN=DIR OUT=DIR bash bench/mlx/scan.sh
#
# 1. `ksearch eval selective_scan tasks/selective_scan/templates/mlx/state_scan.FLAVOUR.mlx
#    --backend mlx` (state_scan.metal.mlx where ksearch-runner-mlx's probe says metal=1,
#    state_scan.cuda.mlx elsewhere) with the template's defaults (DEFINES), timed against
#    MLX native (mlx-lm's
#    per-token recurrence, tasks/selective_scan/baseline.mlx);
# 2. `ksearch export` of the same kernel --to mlx (OUT/ks_scan.py);
# 3. bench/mlx/mamba_prefill.py: mlx-lm's Mamba-1 (mamba-370m configuration) prefill at 128,
#    512, 1024, 2048 tokens, stock against its scan replaced by the exported kernel; writes
#    docs/results/mlx-mamba-prefill.md (copied to OUT).
# Environment:
#   KS_BIN=DIR    ksearch and ksearch-runner-mlx, built elsewhere (default build); their
#                 libraries may sit in DIR/devlibs
#   OUT=DIR       logs, eval JSON, the exported module, the results (default KS_BIN/bench-mlx)
#   MLX_SITE=DIR  MLX's CUDA build unpacked by hand (bench/mlx/gpu_env.sh; default /tmp/site)
#   DEFINES=...   knob values for eval and export (default the template's defaults)
#   REPS=N        timed stock forwards per length (default 2; each 2048-token one takes seconds)
#   PREFILL_ARGS  more options for mamba_prefill.py (a smoke test: "--layers 1 --tokens 8")
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KS_BIN=$(cd "${KS_BIN:-$ROOT/build}" && pwd)
OUT=${OUT:-$KS_BIN/bench-mlx}
mkdir -p "$OUT"
. bench/mlx/gpu_env.sh "${MLX_SITE:-/tmp/site}"
[ -d "$KS_BIN/devlibs" ] && export LD_LIBRARY_PATH="$KS_BIN/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KSEARCH_HOME=$ROOT KSEARCH_CACHE=${KSEARCH_CACHE:-$OUT/cache}
log() { echo "== $(date -u +%H:%M:%S) $*"; }

log "probe"
"$KS_BIN/ksearch-runner-mlx" --probe | tee "$OUT/probe.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$OUT/probe.txt"
if grep -q "metal=1" "$OUT/probe.txt"; then
	K=tasks/selective_scan/templates/mlx/state_scan.metal.mlx
	DEFINES=${DEFINES:-ITEMS=8,CPB=4}
else
	K=tasks/selective_scan/templates/mlx/state_scan.cuda.mlx
	DEFINES=${DEFINES:-ITEMS=8,CPB=8,UNR=2,VEC=8,PF=1}
fi

log "eval $K --define $DEFINES (vs MLX native)"
"$KS_BIN/ksearch" eval selective_scan "$K" --backend mlx --define "$DEFINES" --json \
	>"$OUT/eval.json" 2>"$OUT/eval.err"
echo "exit $?"
tail -5 "$OUT/eval.err"
python3 - "$OUT/eval.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit(f"no JSON from ksearch eval: {e}")
print("status", d.get("status"), "speedup", d.get("speedup"), "vs", d.get("baseline"))
for c in d.get("checks", []):
    print("  check", c.get("name"), c.get("status"))
for w in d.get("workloads", []):
    print("  workload", {k: w.get(k) for k in ("params", "median_us", "baseline_us", "speedup", "status") if k in w})
if d.get("compile_log"):
    print(d["compile_log"][-3000:])
PY

log "export"
"$KS_BIN/ksearch" export "$K" --task selective_scan --to mlx --define "$DEFINES" \
	--out "$OUT/ks_scan.py" || exit 1

log "mamba prefill"
python3 bench/mlx/mamba_prefill.py --kernels "$OUT/ks_scan.py" --reps "${REPS:-2}" --write ${PREFILL_ARGS:-} \
	2>&1 | tee "$OUT/prefill.txt"
rc=${PIPESTATUS[0]}
cp docs/results/mlx-mamba-prefill.md "$OUT/" 2>/dev/null
log "done (mamba_prefill exit $rc)"
exit "$rc"
