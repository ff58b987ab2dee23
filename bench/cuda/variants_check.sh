#!/usr/bin/env bash
# The dtype and gate variants of attention and selective_scan on a GPU machine, from the
# repository root: each variant's CUDA kernels through `ksearch eval --backend cuda --quick`
# (3 seeds of every CUDA workload and every check against the variant's reference), one
# table of statuses and times:
#
#   KS_BIN=DIR OUT=DIR bash bench/cuda/variants_check.sh
#
#   KS_BIN=DIR   ksearch and its runners (DIR/devlibs: libraries the machine lacks; made by
#                scripts/pack-binaries.sh), default build
#   OUT=DIR      the table (variants.md) and one JSON per eval
#   NO_BASELINE=1  do not time the naive baseline.cu beside each kernel (faster)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
B=$(cd "${KS_BIN:-build}" && pwd)
OUT=${OUT:-/tmp/ks-variants}
[ -d "$B/devlibs" ] && bash scripts/pack-binaries.sh --install "$B" 2>/dev/null
export KSEARCH_HOME=$ROOT KSEARCH_CACHE=${KSEARCH_CACHE:-$OUT/cache}
mkdir -p "$OUT/evals"
T=$OUT/variants.md
{
	echo "| task | kernel | status | checks | workload: median us (speedup vs baseline.cu) |"
	echo "|---|---|---|---|---|"
} >"$T"
ev() { # ev TASK FILE [ksearch eval options]
	local t=$1 f=$2 n
	shift 2
	n=$(echo "$t-$(basename "$f" .cu)" | tr -c 'a-zA-Z0-9_\n-' _)
	[ -n "${NO_BASELINE:-}" ] && [[ " $* " != *" --no-baseline "* ]] && set -- "$@" --no-baseline
	timeout 300 "$B/ksearch" eval "$t" "$f" --backend cuda --quick --json "$@" \
		>"$OUT/evals/$n.json" 2>"$OUT/evals/$n.err"
	python3 - "$OUT/evals/$n.json" "$t" "$(basename "$f") $*" >>"$T" <<'PY' || echo "| $t | $(basename "$f") | NO_RESULT | | |" >>"$T"
import json, sys
d = json.load(open(sys.argv[1]))
ck = d.get("checks", [])
ok = sum(c["status"] == "PASSED" for c in ck)
ws = []
for w in d["workloads"]:
    p = w["params"]
    key = ",".join(f"{k}={v}" for k, v in p.items())
    sp = w.get("speedup_vs_baseline")
    ws.append(f"{key}: {w['median_us']:.1f}" + (f" ({sp:.1f}x)" if sp else "") +
              ("" if w["status"] == "PASSED" else f" {w['status']}"))
print(f"| {sys.argv[2]} | {sys.argv[3]} | {d['status']} | {ok}/{len(ck)} | {'; '.join(ws)} |")
PY
	tail -1 "$T"
}
A=tasks/attention_bf16
ev attention_bf16 $A/templates/cuda/flash_wgmma.cu
ev attention_bf16 $A/templates/cuda/flash2.cu --no-baseline
ev attention_bf16 $A/baseline.cu --no-baseline --workloads 2,3
for t in selective_scan_nogate selective_scan_f32; do
	ev $t tasks/$t/templates/cuda/state_scan.cu
	ev $t tasks/$t/templates/cuda/chunk_carry.cu --no-baseline
done
echo "wrote $T"
