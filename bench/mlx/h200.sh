#!/usr/bin/env bash
# The mlx backend on an NVIDIA GPU with MLX's CUDA build (issue 14, item 8), one script:
#
#   . bench/mlx/gpu_env.sh && KS_BIN=DIR OUT=DIR bash bench/mlx/h200.sh
#
# KS_BIN: the folder with ksearch, ksearch-runner, ksearch-runner-mlx, ksearch-cc-jail (built
# elsewhere is fine: ksearch-runner-mlx loads the libmlx.so LD_LIBRARY_PATH names).  OUT:
# where the tables go (summary.tsv, mlx-h200.md: the page docs/results/mlx-h200.md is made
# from, and every eval's JSON under work/).  KS_RUN_BUDGET: candidates of the softmax
# search (6); KS_RUN_TOP: of them re-measured (2); KS_RUN_S: its time limit (150 s).
# KS_ALL_TIMERS=1: all four timer/graph rows in d (two by default).  KS_FORCE=1:
# go on without cuda=1 (to try the script itself where there is no GPU).
# Phases (KS_PHASES picks some, see the end), each command under its own `timeout` (cut to what is left of KS_TOTAL_S, 540):
#   a. ksearch-runner-mlx --probe says cuda=1 (else: why, and stop); one sandboxed eval
#   b. every shipped MLX template (cuda flavour) and every task's baseline.mlx: PASSED
#   c. the hostile catalogue (tests/fixtures/hostile_mlx), each followed by a good kernel;
#      then all of them in one `ksearch run` (one ksearch process)
#   d. ksearch run softmax --backend mlx; its best vs MLX native on 4096x4096 and 8192x8192
#      side by side (wall clock, CUDA events on MLX's stream, CUDA graphs off), and the
#      exported function vs mx.softmax timed in one Python process
#   e. the exported module equals mx.softmax within the task's tolerance
#   f. selective_scan's baseline.mlx (last: the per-token recurrence is the slowest eval)
# The summary table comes last.  Exit status 0 when every row says ok.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KS_BIN=$(cd "${KS_BIN:-$ROOT/build}" && pwd)
KS=$KS_BIN/ksearch
RUNNER=$KS_BIN/ksearch-runner-mlx
OUT=${OUT:-$(mktemp -d /tmp/ks-mlx-h200.XXXXXX)}
W=$OUT/work
H=$ROOT/tests/fixtures/hostile_mlx
BUDGET=${KS_RUN_BUDGET:-6}
mkdir -p "$W"
export KSEARCH_CACHE=$W/cache # fresh: nothing compiled or measured before this run
export KSEARCH_HOME=${KSEARCH_HOME:-$ROOT} # tasks/ of this tree, wherever KS_BIN was built
SUM=$OUT/summary.tsv
printf 'phase\titem\texpected\tgot\tok\n' >"$SUM"
T0=$(date +%s)
TOTAL=${KS_TOTAL_S:-540} # the whole script stays under 9 minutes
say() { echo "[$(($(date +%s) - T0))s] $*"; }
tmo() { # tmo SECONDS: a command's own limit, cut to what is left of TOTAL (at least 5)
	local left=$((T0 + TOTAL - $(date +%s)))
	[ "$left" -lt "$1" ] && set -- "$left"
	[ "$1" -lt 5 ] && set -- 5
	echo "$1"
}
row() { # row PHASE ITEM EXPECTED GOT  (ok when GOT matches one of EXPECTED's |-alternatives)
	local ok=no
	[ -n "${NOSB:-}" ] && [ "$1" != a ] && set -- "$1" "$2 [no sandbox]" "$3" "$4"
	case "|$3|" in *"|$4|"*) ok=ok ;; esac
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$ok" >>"$SUM"
	say "$1 $2: $4 (expected $3) $ok"
}
jget() { # jget FILE PYEXPR  (d is the JSON object)
	python3 -c 'import json,sys
try:
    d=json.load(open(sys.argv[1]))
    print(eval(sys.argv[2]))
except Exception as e:
    print("NO_JSON")' "$1" "$2" 2>/dev/null
}
logs() { # the logs of a failed eval, indented
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(d.get("compile_log","")[:1500])
for w in d.get("checks",[])+d.get("workloads",[]):
    if w.get("log"): print(w.get("params"), w["status"], w["log"][:800])' "$1" 2>/dev/null |
		head -40 | sed 's/^/    /'
}
summary() {
	echo
	echo "== summary ($(($(date +%s) - T0)) s; tables in $OUT)"
	column -t -s "$(printf '\t')" "$SUM" 2>/dev/null || cat "$SUM"
	write_md
	! grep -q "	no$" "$SUM"
}
write_md() {
	{
		echo "# The mlx backend on an NVIDIA H200 (MLX's CUDA build)"
		echo
		echo "Written by \`bench/mlx/h200.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'), commit"
		echo "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')):"
		echo
		echo '```sh'
		echo ". bench/mlx/gpu_env.sh && KS_BIN=DIR OUT=DIR bash bench/mlx/h200.sh"
		echo '```'
		echo
		echo "Device and MLX: \`$(cat "$W/probe.txt" 2>/dev/null)\`; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)."
		echo
		echo "## Every check"
		echo
		echo "| phase | item | expected | got | ok |"
		echo "|---|---|---|---|---|"
		tail -n +2 "$SUM" | awk -F'\t' '{printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5}'
		for f in "$OUT"/table-*.md; do
			[ -f "$f" ] && { echo; cat "$f"; }
		done
		echo
		echo "Each \`ksearch eval\` ran with \`--quick\` (one timing block) unless the table says"
		echo "otherwise; times are medians over the block, \"vs MLX native\" is the same session's"
		echo "interleaved baseline.mlx.  Raw JSON: \`work/*.json\` beside this file."
	} >"$OUT/mlx-h200.md"
}

NOSB= # --no-sandbox when phase a finds that only the sandbox fails
# ---- a. the probe -------------------------------------------------------------------
say "a. probe (KS_BIN=$KS_BIN, OUT=$OUT)"
probe=$(timeout $(tmo 60) "$RUNNER" --probe 2>&1)
echo "$probe" | tee "$W/probe.txt"
case "$probe" in
*cuda=1*) row a "ksearch-runner-mlx --probe" "cuda=1" "cuda=1" ;;
*)
	row a "ksearch-runner-mlx --probe" "cuda=1" "no: ${probe:0:80}"
	echo "why: the runner's libraries (LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-unset}):"
	ldd "$RUNNER" 2>&1 | grep -E "mlx|cuda|cudnn|nvrtc|cublas|not found" | sed 's/^/    /'
	echo "what Python's MLX says:"
	timeout $(tmo 60) python3 -c 'import mlx.core as mx, mlx; print(mlx.__path__, mx.__version__)
print("cuda available:", mx.cuda.is_available())
print(mx.ones((2,)) + 1)' 2>&1 | tail -5 | sed 's/^/    /'
	[ -n "${PYTHONPATH:-}" ] && ls -l "${PYTHONPATH%%:*}/nvidia" 2>&1 | sed 's/^/    /'
	if [ -z "${KS_FORCE:-}" ]; then
		summary
		exit 1
	fi
	;;
esac
phase_a_good() {
# one sandboxed eval; where it fails, the same without the sandbox tells the sandbox from MLX
timeout $(tmo 90) "$KS" eval softmax "$H/good.mlx" --backend mlx --quick --workloads 0 --timeout 30 \
	--json >"$W/a-good.json" 2>"$W/a-good.err"
st=$(jget "$W/a-good.json" 'd["status"]')
row a "good.mlx in the sandbox" PASSED "$st"
if [ "$st" != PASSED ]; then
	logs "$W/a-good.json"
	head -c 1500 "$W/a-good.err" | sed 's/^/    /'
	timeout $(tmo 90) "$KS" eval softmax "$H/good.mlx" --backend mlx --quick --workloads 0 \
		--timeout 30 --no-sandbox --json >"$W/a-nosb.json" 2>"$W/a-nosb.err"
	nst=$(jget "$W/a-nosb.json" 'd["status"]')
	row a "good.mlx with --no-sandbox (diagnosis)" PASSED "$nst"
	logs "$W/a-nosb.json"
	# the sandbox is what fails: measure the rest without it (ksearch run has no such
	# option, so its rows will fail the same way), and say so in every eval row
	[ "$nst" = PASSED ] && NOSB=--no-sandbox && say "a. the evals below run with --no-sandbox"
fi
}

b_table() { # the table phases b and f append to, headed once
tb=$OUT/table-b.md
[ -f "$tb" ] && return 0
{
	echo "## Shipped MLX kernels (\`ksearch eval TASK FILE --backend mlx --quick\`)"
	echo
	echo "| task | kernel | status | workload | median us | MLX native us | vs MLX native |"
	echo "|---|---|---|---|---|---|---|"
} >"$tb"
}
b_eval() { # b_eval TASK FILE WORKLOADS
	local task=$1 f=$2 wl=$3 name
	# KS_B_ONLY=REGEX: only the evals whose "TASK FILE" matches
	[ -n "${KS_B_ONLY:-}" ] && ! [[ "$task ${f#$ROOT/}" =~ $KS_B_ONLY ]] && return 0
	name=$task-$(basename "$f" .mlx)
	timeout $(tmo 150) "$KS" eval "$task" "$f" --backend mlx --quick --workloads "$wl" --timeout 30 $NOSB \
		--json >"$W/b-$name.json" 2>"$W/b-$name.err"
	local st
	st=$(jget "$W/b-$name.json" 'd["status"]')
	row b "$task ${f#$ROOT/}" PASSED "$st"
	[ "$st" = PASSED ] || { logs "$W/b-$name.json"; head -c 600 "$W/b-$name.err" | sed 's/^/    /'; }
	python3 - "$W/b-$name.json" "$task" "$(basename "$f")" >>"$tb" <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
for w in d["workloads"]:
    p = ",".join(f"{k}={v}" for k, v in w["params"].items())
    sp = w.get("speedup_vs_baseline")
    print(f"| {sys.argv[2]} | {sys.argv[3]} | {w['status']} | {p} | {w['median_us']:.1f} | "
          f"{w['baseline_us']:.1f} | {sp:.2f}x |" if sp else
          f"| {sys.argv[2]} | {sys.argv[3]} | {w['status']} | {p} | - | - | - |")
PY
}

phase_b() {
# ---- b. shipped templates and native baselines ------------------------------------------
say "b. shipped MLX templates (cuda flavour) and baseline.mlx of every task"
b_table
{
	for f in "$ROOT"/tasks/softmax/templates/mlx/*.cuda.mlx; do b_eval softmax "$f" 0,1; done
	for f in "$ROOT"/tasks/matmul/templates/mlx/*.cuda.mlx; do b_eval matmul "$f" 0; done
	b_eval softmax "$ROOT/tasks/softmax/baseline.mlx" 0,1
	for task in matmul matmul_bf16 attention; do
		b_eval "$task" "$ROOT/tasks/$task/baseline.mlx" 0
	done
}
}

phase_c() {
# ---- c. hostile kernels ---------------------------------------------------------------
say "c. hostile MLX kernels, each followed by good.mlx"
runners() { # runners of this KS_BIN still alive, and processes on the GPU
	local n=0 p
	for p in /proc/[0-9]*; do
		case "$(readlink "$p/exe" 2>/dev/null)" in "$KS_BIN"/ksearch-runner*) n=$((n + 1)) ;; esac
	done
	echo "$n/$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c .)"
}
c_eval() { # c_eval NAME EXPECTED
	local k=$1 want=$2 t1 t2 st
	t1=$(date +%s)
	timeout $(tmo 120) "$KS" eval softmax "$H/$k.mlx" --backend mlx --quick --workloads 0 --timeout 10 $NOSB \
		--json >"$W/c-$k.json" 2>"$W/c-$k.err"
	t2=$(date +%s)
	st=$(jget "$W/c-$k.json" 'd["status"]')
	row c "$k.mlx ($((t2 - t1)) s)" "$want" "$st"
	[ "$st" = "${want%%|*}" ] || { logs "$W/c-$k.json"; head -c 600 "$W/c-$k.err" | sed 's/^/    /'; }
	row c "  runners/GPU processes left after $k" 0/0 "$(runners)"
	[ "${KS_GOOD_AFTER:-1}" = 0 ] && return 0 # KS_GOOD_AFTER=0: no good.mlx after each
	timeout $(tmo 90) "$KS" eval softmax "$H/good.mlx" --backend mlx --quick --workloads 0 --timeout 20 $NOSB \
		--json >"$W/c-good-after-$k.json" 2>&1
	row c "  good.mlx after $k" PASSED "$(jget "$W/c-good-after-$k.json" 'd["status"]')"
}
{
	declare -A expect=([oob_write]=RUNTIME_ERROR [hang]=TIMEOUT [partial_write]=INCORRECT_NUMERICAL
		[compile_error]=COMPILE_ERROR [first_call_only]=INCORRECT_NUMERICAL)
	for k in ${KS_HOSTILE:-oob_write hang partial_write compile_error first_call_only}; do
		c_eval "$k" "${expect[$k]}"
		[ "$k" = compile_error ] || continue
		# NVRTC's log names the undefined identifier; it is the failing check's log
		if grep -q "threadgroup" "$W/c-compile_error.json"; then
			row c "  compile_error's log is NVRTC's" yes yes
		else
			row c "  compile_error's log is NVRTC's" yes no
		fi
		logs "$W/c-compile_error.json" | head -8
	done
}
}

phase_crun() {
# all of them as templates of one task, searched by one ksearch process
say "c. the same kernels in one ksearch run"
HT=$W/hostile/softmax # a task folder is named after its task
rm -rf "$HT" && mkdir -p "$W/hostile" && cp -r "$ROOT/tasks/softmax" "$HT" && rm -rf "$HT/templates"/* && mkdir -p "$HT/templates/mlx"
for f in "$H"/*.mlx; do
	k=$(basename "$f" .mlx)
	{ printf '/* @ksearch\nfamily: hostile-%s\nsummary: tests/fixtures/hostile_mlx/%s.mlx\n' "$k" "$k"
	  printf 'knobs:\n  UNUSED: {values: [0], default: 0, summary: "no effect"}\n@end */\n'
	  cat "$f"; } >"$HT/templates/mlx/$k.mlx"
done
nk=$(ls "$H"/*.mlx | wc -l)
timeout $(tmo "${KS_CRUN_S:-300}") "$KS" run "$HT" --backend mlx --budget "$nk" --jobs 1 --top 1 --timeout 10 \
	--workloads 0 --min-time 0.05 --out "$W/c-run" >"$W/c-run.out" 2>&1
row c "ksearch run over the $nk kernels exits" 0 "$?"
python3 - "$W/c-run/run.db" >"$W/c-run.tsv" <<'PY' 2>&1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for fam, st in db.execute("select c.family, r.status from candidate_results r join candidates c "
                          "on c.id = r.candidate_id where r.phase = 'search' order by r.seq"):
    print(f"{fam}\t{st}")
PY
declare -A want=([hostile-good]=PASSED [hostile-oob_write]=RUNTIME_ERROR [hostile-hang]=TIMEOUT
	[hostile-partial_write]=INCORRECT_NUMERICAL [hostile-compile_error]=COMPILE_ERROR
	[hostile-first_call_only]=INCORRECT_NUMERICAL)
for fam in "${!want[@]}"; do
	got=$(awk -F'\t' -v f="$fam" '$1 == f {print $2; exit}' "$W/c-run.tsv")
	row c "run: $fam" "${want[$fam]}" "${got:-not evaluated}"
done
tail -5 "$W/c-run.out" | sed 's/^/    /'
}

phase_d() {
# ---- d. the softmax search and MLX native side by side ------------------------------------
say "d. ksearch run softmax --backend mlx --budget $BUDGET --workloads 2,4 (4096x4096, 8192x8192)"
timeout $(tmo "${KS_RUN_S:-150}") "$KS" run softmax --backend mlx --budget "$BUDGET" --top "${KS_RUN_TOP:-2}" --timeout 20 \
	--workloads 2,4 --min-time 0.05 \
	--out "$W/run" >"$W/run.out" 2>&1
rc=$?
row d "ksearch run softmax --budget $BUDGET exits" 0 "$rc"
tail -15 "$W/run.out" | sed 's/^/    /'
td=$OUT/table-d.md
{
	echo "## The search's best softmax vs MLX native (\`ksearch eval softmax RUN/best.mlx --backend mlx\`)"
	echo
	echo "Same kernel, same session, interleaved with baseline.mlx (\`mx::softmax\`); rows by"
	echo "timer: the wall clock around \`eval\` with 8 chained calls (MLX's way, CUDA graphs on),"
	echo "CUDA events on MLX's stream (\`KSEARCH_MLX_TIMER=events\`), and both with"
	echo "\`MLX_USE_CUDA_GRAPHS=0\`."
	echo
	echo "| timer | graphs | workload | best us | MLX native us | vs MLX native | spread % |"
	echo "|---|---|---|---|---|---|---|"
} >"$td"
if [ -f "$W/run/best.mlx" ]; then
	d_eval() { # d_eval TAG TIMER GRAPHS
		KSEARCH_MLX_TIMER=$2 MLX_USE_CUDA_GRAPHS=$3 timeout $(tmo 120) "$KS" eval softmax "$W/run/best.mlx" \
			--backend mlx --workloads 2,4 --timeout 20 $NOSB --json >"$W/d-$1.json" 2>"$W/d-$1.err"
		row d "best.mlx, timer $2, graphs $3" PASSED "$(jget "$W/d-$1.json" 'd["status"]')"
		python3 - "$W/d-$1.json" "$2" "$3" >>"$td" <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
for w in d["workloads"]:
    p = w["params"]
    if (p["rows"], p["cols"]) not in ((4096, 4096), (8192, 8192)):
        continue
    print(f"| {sys.argv[2]} | {'on' if sys.argv[3] == '1' else 'off'} | {p['rows']}x{p['cols']} | "
          f"{w['median_us']:.1f} | {w['baseline_us']:.1f} | {w['speedup_vs_baseline']:.2f}x | "
          f"{w['spread_pct']:.1f} |")
PY
	}
	# ---- e. the exported module on the GPU MLX ----------------------------------------------
	say "d/e. export, import on the GPU MLX, compare and time against mx.softmax"
	timeout $(tmo 30) "$KS" export "$W/run" --to mlx --out "$W/ks_found.py" 2>"$W/export.err"
	row e "ksearch export RUN --to mlx" 0 "$?"
	(cd "$W" && timeout $(tmo 120) python3 - >"$W/py.out" 2>&1) <<'PY'
import os, statistics, time
import mlx.core as mx
import ks_found
print("mlx", mx.__version__, "default device", mx.default_device())
K, REPS = 8, int(os.environ.get("KS_PY_REPS", "30"))
for rows, cols in ((4096, 4096), (8192, 8192)):
    x = mx.random.normal((rows, cols)) * 3.0
    mx.eval(x)
    y, ref = ks_found.softmax(x), mx.softmax(x, axis=-1)
    ok = mx.allclose(y, ref, atol=1e-6, rtol=1e-4).item()
    err = mx.max(mx.abs(y - ref)).item()
    print(f"equal {rows}x{cols} {ok} max_abs_err {err:.3g}")
    def chained(f):
        outs = [f(x) for _ in range(K)]
        t = time.perf_counter()
        mx.eval(outs)
        return (time.perf_counter() - t) / K * 1e6
    for f in (ks_found.softmax, lambda a: mx.softmax(a, axis=-1)):
        for _ in range(3):
            chained(f)
    a, b = [], []
    for _ in range(REPS):  # interleaved
        a.append(chained(ks_found.softmax))
        b.append(chained(lambda v: mx.softmax(v, axis=-1)))
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"time {rows}x{cols} exported {ma:.1f} us mx.softmax {mb:.1f} us ratio {mb / ma:.2f}x")
PY
	cat "$W/py.out" | sed 's/^/    /'
	tp=$OUT/table-py.md
	{
		echo "## The exported function vs \`mx.softmax\` in one Python process"
		echo
		echo "\`ksearch export RUN --to mlx\`; 8 chained calls per \`mx.eval\`, wall clock, median of"
		echo "30 interleaved evals after 3 warm-ups; inputs \`mx.random.normal * 3\`."
		echo
		echo "| shape | equal (atol 1e-6, rtol 1e-4) | exported us | mx.softmax us | vs mx.softmax |"
		echo "|---|---|---|---|---|"
		for shape in 4096x4096 8192x8192; do
			eq=$(awk -v s="$shape" '$1 == "equal" && $2 == s {print $3 " (max abs err " $5 ")"}' "$W/py.out")
			awk -v s="$shape" -v eq="$eq" '$1 == "time" && $2 == s {printf "| %s | %s | %s | %s | %s |\n", s, eq, $4, $7, $10}' "$W/py.out"
		done
	} >"$tp"
	for shape in 4096x4096 8192x8192; do
		row e "exported softmax equals mx.softmax on $shape" True \
			"$(awk -v s="$shape" '$1 == "equal" && $2 == s {print $3}' "$W/py.out")"
	done
	d_eval wall wall 1
	d_eval events-nographs events 0
	[ -n "${KS_ALL_TIMERS:-}" ] && d_eval events events 1 && d_eval wall-nographs wall 0
	for shape in 4096x4096 8192x8192; do
		r=${shape%x*}
		sp=$(jget "$W/d-wall.json" "'%.2f' % [w['speedup_vs_baseline'] for w in d['workloads'] if w['params']['rows'] == $r and w['params']['cols'] == $r][0]")
		ge=$(python3 -c "import sys; print('yes' if float(sys.argv[1]) >= 1.0 else 'no')" "$sp" 2>/dev/null || echo no)
		row d "best at or above mx.softmax on $shape (wall, ${sp}x)" yes "$ge"
	done
else
	row d "the run wrote best.mlx" yes no
fi
}

phase_f() {
# ---- f. last, with what time is left: the selective-scan baseline (mlx-lm's recurrence, one
# token at a time: thousands of small ops per call, the slowest eval here)
say "f. selective_scan baseline.mlx"
b_table
b_eval selective_scan "$ROOT/tasks/selective_scan/baseline.mlx" 0
}

# KS_PHASES: which phases run, in this order (default all: a_good b c crun d f; the probe
# always runs first).  KS_HOSTILE: the kernels phase c evaluates one by one (default all);
# KS_B_ONLY=REGEX: phase b's evals whose "TASK FILE" match (default all).
for ph in ${KS_PHASES:-a_good b c crun d f}; do
	"phase_$ph"
done
summary
