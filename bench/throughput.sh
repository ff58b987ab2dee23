#!/usr/bin/env bash
# Search throughput: candidates per minute and where each candidate's time goes.
#
#   bash bench/throughput.sh [--backend cpu|cuda] [--budget N] [TASK...]   (default: softmax matmul)
#
# runs `ksearch run TASK --backend B --budget N --json` for each task (built-in policy, a
# fresh run folder and cache each time, so the reference is computed once in each run as a
# user's first run would) and prints one markdown table: the run's wall time, its search
# phase and final re-measurement, candidates per minute in the search phase, and the
# per-candidate breakdown of `ksearch run`'s "time: per candidate" line (compile, reference,
# start, inputs, check, compare, timing, other; docs/evaluation.md).  Environment:
#   KS_BIN=DIR   the directory holding ksearch and its runners (default build); binaries
#                built elsewhere work, with their libraries in DIR/devlibs as for
#                bench/cuda/run.sh
#   BUDGET=N     candidates per run when --budget is not given (default: matmul 40, others 20,
#                the README's runs)
#   OUT=DIR      keep the run folders and logs there (default: a temporary folder)
#   RUN_ARGS=".." more options for each `ksearch run` (e.g. "--time-limit 200s --devices 0")
#   KSEARCH_DEVICE, KSEARCH_NVCC, KSEARCH_CUDA_ARCH   as for ksearch
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "${KS_BIN:-$ROOT/build}" 2>/dev/null && pwd) ||
	{ echo "throughput.sh: no folder '${KS_BIN:-$ROOT/build}' (KS_BIN)" >&2; exit 2; }
BACKEND=cpu
BUDGET_ARG=${BUDGET:-}
TASKS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--backend) BACKEND=${2:?--backend needs cpu or cuda}; shift 2 ;;
	--budget) BUDGET_ARG=${2:?--budget needs a number}; shift 2 ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	-*) echo "throughput.sh: unknown option '$1'" >&2; exit 2 ;;
	*) TASKS+=("$1"); shift ;;
	esac
done
[ ${#TASKS[@]} -gt 0 ] || TASKS=(softmax matmul)
[ -x "$BIN/ksearch" ] || { echo "throughput.sh: no ksearch in '$BIN' (KS_BIN)" >&2; exit 2; }
if [ -d "$BIN/devlibs" ]; then
	export LD_LIBRARY_PATH="$BIN/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
WORK=${OUT:-$(mktemp -d /tmp/ks-throughput.XXXXXX)}
mkdir -p "$WORK"
export KSEARCH_HOME=$ROOT

rows=()
for task in "${TASKS[@]}"; do
	budget=$BUDGET_ARG
	[ -n "$budget" ] || { [ "$task" = matmul ] && budget=40 || budget=20; }
	dir=$WORK/$task-$BACKEND
	rm -rf "$dir" "$dir.cache"
	echo "== $(date -u +%H:%M:%S) ksearch run $task --backend $BACKEND --budget $budget ${RUN_ARGS:-}" >&2
	t0=$(date +%s.%N)
	KSEARCH_CACHE=$dir.cache "$BIN/ksearch" run "$task" --backend "$BACKEND" --budget "$budget" \
		--out "$dir" --json ${RUN_ARGS:-} >"$dir.json" 2>"$dir.log"
	rc=$?
	t1=$(date +%s.%N)
	rm -rf "$dir.cache"
	rows+=("$(python3 - "$task" "$BACKEND" "$budget" "$t0" "$t1" "$rc" "$dir.json" "$dir.log" <<'EOF'
import json, re, sys
task, backend, budget, t0, t1, rc, jpath, lpath = sys.argv[1:]
wall = float(t1) - float(t0)
try:
    doc = json.load(open(jpath))
except Exception:
    doc = {}
log = open(lpath, errors="replace").read()
# the search phase ends where the final's first progress line starts ("[final] 5m49s | ...")
m = re.search(r"\[final\] (?:(\d+)m)?(\d+)s", log)
search = int(m.group(1) or 0) * 60 + int(m.group(2)) if m else wall
n = doc.get("evaluated") or doc.get("candidates") or 0
tpc = doc.get("time_per_candidate") or ""
if not tpc:
    m = re.search(r"^time: per candidate.*$", log, re.M)
    tpc = m.group(0) if m else ""
total = re.search(r"([\d.]+) s =", tpc)
phases = dict((k, v) for v, k in [(p[1], p[0]) for p in re.findall(r"(\w+) ([\d.]+) s", tpc.split("=", 1)[-1])])
names = ["compile", "reference", "start", "inputs", "check", "compare", "timing", "other"]
cpm = n / (search / 60) if search > 0 and n else 0
cells = [task, backend, budget, "%.0f" % wall, "%.0f" % search, "%.0f" % (wall - search),
         str(n), "%.1f" % cpm, total.group(1) if total else "?"] + [phases.get(k, "?") for k in names]
if rc != "0":
    cells[0] += " (exit %s)" % rc
print("| " + " | ".join(cells) + " |")
EOF
)")
done
echo
echo "ksearch: $BIN; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| task | backend | budget | wall s | search s | final s | evaluated | cand/min (search) | s/cand | compile | reference | start | inputs | check | compare | timing | other |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "runs and logs: $WORK"
