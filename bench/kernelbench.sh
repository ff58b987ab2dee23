#!/usr/bin/env bash
# KernelBench level 1 on the CPU: every problem imported, searched with a small budget, and
# its best kernel timed against the naive baseline and against PyTorch's own CPU op.
#
#   bash bench/kernelbench.sh [--corpus DIR] [--budget N] [--top N] [--mib M] [--gflop G] [--only 1,19,..]
#                             [--page FILE] [--page-only] [--no-run]
#
# The corpus is KernelBench's public repository: --corpus names a checkout (its
# KernelBench/level1 folder is used), else it is cloned (git clone --depth 1) into
# $WORK/KernelBench.  torch (from PyPI, CPU timing only) and numpy go into a virtual
# environment $WORK/venv, which is also the Python of the imported references
# (KSEARCH_PYTHON).  For each problem:
#   1. `ksearch tasks import kernelbench` with the largest --scale (1, 1/2, 1/4, ...) at
#      which the workload needs at most M MiB (default 16) and G GFLOP (default 0.2): the
#      GPU-sized problems shrink to what a naive loop finishes here in seconds;
#   2. `ksearch run DIR --budget N --top T` (default 4 and 1, built-in policy) and `ksearch eval`
#      of the best kernel: its speedup over the naive baseline, its median time; the
#      reference is the problem's Model with torch, or the importer's numpy form of the
#      forward (numpy starts at once, torch in seconds a call) once the naive baseline
#      passed against torch on the workload;
#   3. the problem's own Model at the same sizes, timed with torch in one process (median
#      of repeated forward calls after a warm-up, torch's default threads).
# It writes the page (default docs/results/kernelbench-level1-cpu.md): per problem,
# imported or why not, the speedups, failures with their reason (--page-only: write it again
# from the rows of the last run, $WORK/kernelbench-runs/rows.tsv; --no-run: import only, each
# row "not searched").  Environment:
#   WORK=DIR     corpus, venv, task folders, runs and logs (default ~/.cache/ksearch-bench)
#   KS_BIN=DIR   ksearch and its runners (default build)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "${KS_BIN:-$ROOT/build}" 2>/dev/null && pwd) ||
	{ echo "kernelbench.sh: no folder '${KS_BIN:-$ROOT/build}' (KS_BIN)" >&2; exit 2; }
WORK=${WORK:-$HOME/.cache/ksearch-bench}
CORPUS= BUDGET=4 TOP=1 NO_RUN=0 MIB=16 GFLOP=0.2 ONLY= PAGE=$ROOT/docs/results/kernelbench-level1-cpu.md PAGE_ONLY=0
while [ $# -gt 0 ]; do
	case "$1" in
	--corpus) CORPUS=${2:?--corpus needs a folder}; shift 2 ;;
	--budget) BUDGET=${2:?--budget needs a number}; shift 2 ;;
	--top) TOP=${2:?--top needs a number}; shift 2 ;;
	--mib) MIB=${2:?--mib needs a number}; shift 2 ;;
	--gflop) GFLOP=${2:?--gflop needs a number}; shift 2 ;;
	--only) ONLY=,${2:?--only needs numbers},; shift 2 ;;
	--page) PAGE=${2:?--page needs a file}; shift 2 ;;
	--page-only) PAGE_ONLY=1; shift ;;
	--no-run) NO_RUN=1; shift ;;
	-h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "kernelbench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
mkdir -p "$WORK" || exit 2
RUNS=$WORK/kernelbench-runs
ROWS=$RUNS/rows.tsv
if [ $PAGE_ONLY = 0 ]; then
if [ -z "$CORPUS" ]; then
	CORPUS=$WORK/KernelBench
	[ -d "$CORPUS/.git" ] || git clone --depth 1 https://github.com/ScalingIntelligence/KernelBench "$CORPUS" ||
		{ echo "kernelbench.sh: could not clone KernelBench; give --corpus DIR" >&2; exit 2; }
fi
LEVEL=$CORPUS/KernelBench/level1
[ -d "$LEVEL" ] || LEVEL=$CORPUS
ls "$LEVEL"/*.py >/dev/null 2>&1 || { echo "kernelbench.sh: no problems in '$LEVEL'" >&2; exit 2; }
PY=$WORK/venv/bin/python
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
	python3 -m venv "$WORK/venv" && "$WORK/venv/bin/pip" install -q torch numpy ||
		{ echo "kernelbench.sh: could not install torch into $WORK/venv" >&2; exit 2; }
fi
export KSEARCH_PYTHON=$PY
rm -rf "$RUNS" && mkdir -p "$RUNS"
: >"$ROWS"

# the workload's MiB and GFLOP as `tasks show` prints them
size_of() {
	"$BIN/ksearch" tasks show "$1" 2>/dev/null | awk '/^   0 / {
		for (i = 1; i <= NF; i++) { if ($i == "GFLOP") g = $(i-1); if ($i == "MB") m = $(i-1) }
		print m / 1.048576, g; exit }'
}

# import $1 into $2 at the largest scale that fits; prints the scale, or the error
import_fitted() {
	local f=$1 out=$2 scale=1 i
	for i in $(seq 1 40); do
		rm -rf "$out" && mkdir -p "$out"
		if ! "$BIN/ksearch" tasks import kernelbench "$f" --out "$out" --scale "$scale" >"$out.log" 2>&1; then
			grep -m1 '^ksearch:' "$out.log" | cut -c10-; return 1
		fi
		read -r mib gf < <(size_of "$out"/*/)
		if awk -v m="${mib:-0}" -v g="${gf:-0}" -v M="$MIB" -v G="$GFLOP" 'BEGIN { exit !(m <= M && g <= G) }'; then
			echo "$scale"; return 0
		fi
		scale=$(awk -v s="$scale" -v m="${mib:-0}" -v g="${gf:-0}" -v M="$MIB" -v G="$GFLOP" 'BEGIN {
			r = m / M; if (g / G > r) r = g / G; f = 1 / sqrt(r); if (f > 0.7) f = 0.7; if (f < 0.1) f = 0.1
			printf "%.6g", s * f }')
	done
	echo "did not fit $MIB MiB / $GFLOP GFLOP at any scale"; return 1
}

# PyTorch's time for the problem at the task's sizes: median of forward calls, one process
torch_us() {
	"$PY" - "$1" "$2" <<'PY'
import json, subprocess, sys, time
problem, scanjson = sys.argv[1], sys.argv[2]
sizes = {s['name']: s['value'] for s in json.load(open(scanjson)).get('sizes', [])}
import torch
ns = {}
exec(compile(open(problem).read(), problem, 'exec'), ns)
for k, v in sizes.items():
    base = k.rsplit('_', 1)
    if k in ns and isinstance(ns[k], int):
        ns[k] = v
    elif k in ns and isinstance(ns[k], tuple) and len(ns[k]) == 1:
        ns[k] = (v,)
    elif len(base) == 2 and base[0] in ns and isinstance(ns[base[0]], tuple) and base[1].isdigit():
        t = list(ns[base[0]]); t[int(base[1])] = v; ns[base[0]] = tuple(t)
torch.manual_seed(0)
model = ns['Model'](*ns['get_init_inputs']())
inputs = ns['get_inputs']()
ts = []
with torch.no_grad():
    for _ in range(2):
        model(*inputs)
    t_end = time.perf_counter() + 1.0
    while len(ts) < 5 or (time.perf_counter() < t_end and len(ts) < 200):
        t0 = time.perf_counter(); model(*inputs); ts.append(time.perf_counter() - t0)
ts.sort()
print('%.1f' % (ts[len(ts) // 2] * 1e6))
PY
}

# the scan's result for the sizes (the same interpreter the import runs, no torch needed)
scan_sizes() {
	local d=$RUNS/scan-$2
	rm -rf "$d" && mkdir -p "$d" && cp "$1" "$d/problem.py"
	python3 "$ROOT/src/import/kernelbench/scan.py" "$d" "$3" >/dev/null 2>&1
	echo "$d/result.json"
}

for f in $(ls "$LEVEL"/*.py | sort -V); do
	b=$(basename "$f" .py)
	n=${b%%_*}
	[ -n "$ONLY" ] && case "$ONLY" in *,$n,*) ;; *) continue ;; esac
	echo "== $b" >&2
	out=$RUNS/task-$n
	if ! scale=$(import_fitted "$f" "$out"); then
		printf '%s\t%s\tno\t%s\n' "$n" "$b" "${scale:-import failed}" >>"$ROWS"; continue
	fi
	dir=$(ls -d "$out"/*/ | head -1); dir=${dir%/}
	if [ ! -f "$dir/baseline.c" ]; then
		printf '%s\t%s\tno baseline\t%s\n' "$n" "$b" "$(grep -m1 '^note:' "$out.log" | cut -c7- | cut -c1-120)" >>"$ROWS"; continue
	fi
	if [ $NO_RUN = 1 ]; then
		printf '%s\t%s\tyes\t%s\tnot searched (--no-run)\n' "$n" "$b" "$scale" >>"$ROWS"; continue
	fi
	run=$RUNS/run-$n
	# torch starts in seconds, numpy at once: where the importer wrote a numpy form of the
	# forward, it is the search's reference, after it agreed with torch on the workload
	ref=torch
	if grep -q '^def _ks_numpy_reference' "$dir/reference.py"; then
		ref=numpy
		st=$("$BIN/ksearch" eval "$dir" "$dir/baseline.c" --quick --no-checks --json 2>"$run.cross.log" |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["status"])' 2>/dev/null)
		if [ "$st" != PASSED ]; then
			printf '%s\t%s\tyes\t%s\t%s\n' "$n" "$b" "$scale" "the naive baseline against torch: ${st:-$(tail -1 "$run.cross.log" | cut -c1-120)}" >>"$ROWS"; continue
		fi
	fi
	[ "$ref" = numpy ] && rpy=python3 || rpy=$PY
	if ! KSEARCH_PYTHON=$rpy timeout 1800 "$BIN/ksearch" run "$dir" --budget "$BUDGET" --top "$TOP" --json --out "$run" >"$run.json" 2>"$run.log"; then
		printf '%s\t%s\tyes\t%s\t%s\n' "$n" "$b" "$scale" "run failed: $(grep -m1 'ksearch' "$run.log" | cut -c1-150)" >>"$ROWS"; continue
	fi
	KSEARCH_PYTHON=$rpy "$BIN/ksearch" eval "$dir" "$run/best.c" --no-checks --json >"$run.eval.json" 2>/dev/null
	read -r best_us base_us < <(python3 -c '
import json, sys
try:
    w = json.load(open(sys.argv[1]))["workloads"][0]
    print(w.get("median_us", "nan"), w.get("baseline_median_us", w.get("baseline_us", "nan")))
except Exception:
    print("nan nan")' "$run.eval.json")
	sp=$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1])).get("best") or {}; print("%.2f" % b["speedup_vs_baseline"] if b.get("speedup_vs_baseline") else "-")' "$run.json")
	tus=$(torch_us "$f" "$(scan_sizes "$f" "$n" "$scale")" 2>"$run.torch.log") || tus=
	vs=$(awk -v t="${tus:-nan}" -v k="$best_us" 'BEGIN { if (t + 0 > 0 && k + 0 > 0) printf "%.2f", t / k; else print "-" }')
	# the 1-minute load average as the problem ends: a figure timed beside other work is the load's too
	load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo -)
	printf '%s\t%s\tyes\t%s\t\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$b" "$scale" "$sp" "$best_us" "${tus:--}" "$vs" "$ref" "$load" >>"$ROWS"
done
fi

python3 - "$ROWS" "$PAGE" "$BUDGET" "$MIB" "$GFLOP" "$(nproc)" "$(uname -m)" "$TOP" <<'PY'
import sys, datetime, subprocess
rows_path, page, budget, mib, gflop, cores, arch, top = sys.argv[1:9]
rows = sorted([l.rstrip('\n').split('\t') for l in open(rows_path) if l.strip()], key=lambda r: int(r[0]))
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), arch)
imported = [r for r in rows if r[2] == 'yes']

def load_line(rows):
    loads = sorted(float(r[10]) for r in rows if len(r) > 10 and r[10] not in ('', '-'))
    if not loads:
        return 'The load average during the run was not recorded (rows of a run before the load column).'
    return ('Load average (1 minute) as each problem ended: %.2f to %.2f, median %.2f, on %s cores (column'
            ' "load"). Where it is at or above the core count, a multi-threaded kernel or torch waits for'
            ' a CPU at its barriers and its time is set by the load, not by the code (times near whole'
            ' multiples of the scheduler tick are the sign).' % (loads[0], loads[-1], loads[len(loads) // 2], cores))

def us(v):
    try:
        return '%.1f' % float(v)
    except ValueError:
        return v

ran = [r for r in imported if len(r) > 5 and r[5] not in ('', '-')]
out = ['# KernelBench level 1 on the CPU', '',
       'Made by `bash bench/kernelbench.sh --budget %s --top %s --mib %s --gflop %s` on %s (%s cores), %s.' %
       (budget, top, mib, gflop, cpu, cores, datetime.date.today().isoformat()),
       'Each problem is imported at the largest `--scale` whose workload needs at most %s MiB and %s GFLOP'
       ' (KernelBench\'s sizes are a GPU\'s), searched with `ksearch run --budget %s` (built-in policy),'
       ' %s, and its best kernel re-timed with `ksearch eval`; PyTorch (from PyPI) runs the problem\'s own'
       ' Model at the same sizes in one process (median of repeated calls, its default threads).'
       ' torch calls the Model on one input set again and again, while ksearch rotates its calls over'
       ' several input sets (docs/evaluation.md): a workload that fits in the caches can be warm'
       ' for torch and colder for ksearch.'
       ' With a budget this small the best kernel is often the first configuration of a template,'
       ' which can be slower than the naive loop (a figure below 1).' % (mib, gflop, budget,
       'with no final re-measurement (`--top 0`)' if top == '0' else
       'its %s best re-measured in a final phase (`--top %s`)' % (top, top)), '',
       load_line(rows), '',
       '%d of %d problems imported with a naive baseline; %d searched to the end.' %
       (len(imported), len(rows), len(ran)), '',
       'The reference is the problem\'s own Model run with torch, or (column "ref") the importer\'s numpy form'
       ' of the forward after the naive baseline passed against torch on the workload.', '',
       '| # | problem | imported | scale | best vs naive | best (us) | torch (us) | best vs torch | ref | load | failure |',
       '|---|---|---|---|---|---|---|---|---|---|---|']
for r in rows:
    r = r + [''] * (11 - len(r))
    n, name, imp = r[0], r[1], r[2]
    if imp != 'yes':
        out.append('| %s | %s | %s | | | | | | | | %s |' % (n, name, imp, r[3].replace('|', '/')))
    elif r[4]:
        out.append('| %s | %s | yes | %s | | | | | | | %s |' % (n, name, r[3], r[4].replace('|', '/')))
    else:
        out.append('| %s | %s | yes | %s | %s | %s | %s | %s | %s | %s | |' % (n, name, r[3], r[5], us(r[6]), us(r[7]), r[8], r[9], r[10] or '-'))
open(page, 'w').write('\n'.join(out) + '\n')
print('wrote', page)
PY
