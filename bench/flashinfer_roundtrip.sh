#!/usr/bin/env bash
# flashinfer-bench's own gemm Definition round-tripped through ksearch on the CPU, and what
# ksearch writes back validated with flashinfer-bench's own models.
#
#   bash bench/flashinfer_roundtrip.sh [--corpus DIR] [--version V] [--definition NAME]
#                                      [--workloads N,.. | --gflop G] [--budget N]
#                                      [--python PY] [--page FILE] [--import-only]
#
# The files are flashinfer-bench's, never copies kept here: the Definition NAME.json
# (default gemm_n4096_k4096, C = A @ B.T from Llama 3.1 8B's attn.o_proj, fp16, N = K =
# 4096, M var) and its workloads NAME.jsonl (43 Trace lines, each with its uuid).
#   --corpus DIR  a checkout of flashinfer-bench's repository, made on a machine that
#                 reaches GitHub: git clone --depth 1 https://github.com/flashinfer-ai/flashinfer-bench
#                 (the files are in examples/ffi/Example-FlashInfer-Trace/), or an unpacked sdist;
#   otherwise     the sdist of flashinfer-bench V (default 0.1.2) from PyPI (`pip download
#                 --no-binary :all:`), which carries them in flashinfer_trace/ and examples/.
# Then, in $WORK/flashinfer-roundtrip:
#   1. `ksearch tasks import flashinfer-bench` and checks: every workload kept, each uuid
#      kept with its own axes, flops 2*m*n*k, a baseline and a template (recognised gemm);
#      every other gemm definition of the corpus imported too, its uuids counted;
#   2. `ksearch run` of the imported task with --budget N (default 3), --top 1 and --fresh
#      (every candidate evaluated here, none taken from the results cache) on the
#      workloads that fit a CPU: --workloads (indexes as `tasks show` lists them) or every
#      workload of at most G GFLOP (default 0.25: the decode sizes M = 1, 2, 4, 7);
#      the reference is the definition's own torch run();
#   3. `ksearch report RUN --to flashinfer-trace` (Traces) and `ksearch export RUN --to
#      flashinfer` (the Solution), laid out as a flashinfer-bench TraceSet with the
#      Definition and the workloads;
#   4. validation with flashinfer-bench's models (flashinfer_bench.data): TraceSet.from_path,
#      each Trace and the Solution validated, every key ksearch wrote one the models know
#      (they ignore unknown keys), every trace's uuid, axes and inputs the definition's,
#      its input shapes from Definition.get_input_shapes, the Solution the one the best
#      candidate's traces name.
# Python: PY (default $WORK/venv/bin/python, the venv bench/kernelbench.sh uses) needs torch
# and numpy for the reference (installed from PyPI when missing) and gets flashinfer-bench V
# with --no-deps plus pydantic, safetensors and docstring-parser: its data models import
# those and torch, not flashinfer-python or apache-tvm-ffi (needed only to build and run
# Solutions, on a GPU).  --page FILE writes the results page (the command, the machine, what
# ran, the validation's output); --import-only stops after step 1.  Environment:
#   WORK=DIR     corpus, venv, task folder and run (default ~/.cache/ksearch-bench)
#   KS_BIN=DIR   ksearch and its runners (default build)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "${KS_BIN:-$ROOT/build}" 2>/dev/null && pwd) ||
	{ echo "flashinfer_roundtrip.sh: no folder '${KS_BIN:-$ROOT/build}' (KS_BIN)" >&2; exit 2; }
WORK=${WORK:-$HOME/.cache/ksearch-bench}
CORPUS= VERSION=0.1.2 DEF=gemm_n4096_k4096 WLS= GFLOP=0.25 BUDGET=3 PY= PAGE= IMPORT_ONLY=0
ARGS="$*"
while [ $# -gt 0 ]; do
	case "$1" in
	--corpus) CORPUS=${2:?--corpus needs a folder}; shift 2 ;;
	--version) VERSION=${2:?--version needs a version}; shift 2 ;;
	--definition) DEF=${2:?--definition needs a name}; shift 2 ;;
	--workloads) WLS=${2:?--workloads needs indexes}; shift 2 ;;
	--gflop) GFLOP=${2:?--gflop needs a number}; shift 2 ;;
	--budget) BUDGET=${2:?--budget needs a number}; shift 2 ;;
	--python) PY=${2:?--python needs an interpreter}; shift 2 ;;
	--page) PAGE=${2:?--page needs a file}; shift 2 ;;
	--import-only) IMPORT_ONLY=1; shift ;;
	-h|--help) awk 'NR > 1 && /^set -u/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "flashinfer_roundtrip.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
die() { echo "flashinfer_roundtrip.sh: $*" >&2; exit 2; }
OUT=$WORK/flashinfer-roundtrip
mkdir -p "$WORK" || exit 2
rm -rf "$OUT" && mkdir -p "$OUT" || exit 2
LOG=$OUT/summary.txt
say() { echo "$*" | tee -a "$LOG"; }

# --- 1. the corpus: a checkout, else flashinfer-bench's sdist from PyPI
if [ -z "$CORPUS" ]; then
	CORPUS=$WORK/flashinfer_bench-$VERSION
	if [ ! -d "$CORPUS" ]; then
		python3 -m pip download -q --no-deps --no-binary :all: "flashinfer-bench==$VERSION" \
			-d "$WORK/sdist" || die "could not download flashinfer-bench $VERSION from PyPI; give --corpus DIR"
		tar xzf "$WORK/sdist/flashinfer_bench-$VERSION.tar.gz" -C "$WORK" ||
			die "could not unpack $WORK/sdist/flashinfer_bench-$VERSION.tar.gz"
	fi
	SOURCE="PyPI sdist flashinfer_bench-$VERSION.tar.gz"
else
	SOURCE="checkout $CORPUS$(git -C "$CORPUS" log -1 --format=' (commit %h, %cs)' 2>/dev/null)"
fi
DEF_JSON=$(find "$CORPUS" -path '*definitions*' -name "$DEF.json" 2>/dev/null | sort | head -1)
WL_JSONL=$(find "$CORPUS" -path '*workloads*' -name "$DEF.jsonl" 2>/dev/null | sort | head -1)
[ -n "$DEF_JSON" ] && [ -n "$WL_JSONL" ] ||
	die "no definitions/**/$DEF.json and workloads/**/$DEF.jsonl under '$CORPUS'"
say "source: $SOURCE"
# the sdist holds the definition twice (examples/ and flashinfer_trace/): say whether they agree
for f in $(find "$CORPUS" -path '*definitions*' -name "$DEF.json" -o -path '*workloads*' -name "$DEF.jsonl" | sort); do
	[ "$f" = "$DEF_JSON" ] || [ "$f" = "$WL_JSONL" ] || say "copy: ${f#$CORPUS/}: $(cmp -s "$f" \
		"$([ "${f%.jsonl}" != "$f" ] && echo "$WL_JSONL" || echo "$DEF_JSON")" && echo identical || echo DIFFERS)"
done
say "definition: ${DEF_JSON#$CORPUS/}"
say "workloads: ${WL_JSONL#$CORPUS/} ($(grep -c . "$WL_JSONL") lines)"

# --- the Python: torch and numpy for the reference, flashinfer-bench's data models
[ -n "$PY" ] || PY=$WORK/venv/bin/python
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
	[ "$PY" = "$WORK/venv/bin/python" ] || die "'$PY' lacks torch or numpy (the reference is torch)"
	python3 -m venv "$WORK/venv" && "$WORK/venv/bin/pip" install -q torch numpy ||
		die "could not install torch into $WORK/venv"
fi
if ! "$PY" -c 'import flashinfer_bench.data' 2>/dev/null; then
	"$PY" -m pip install -q --no-deps "flashinfer-bench==$VERSION" &&
		"$PY" -m pip install -q pydantic safetensors docstring-parser ||
		die "could not install flashinfer-bench's data models for $PY"
fi
export KSEARCH_PYTHON=$PY
say "python: $PY (torch $("$PY" -c 'import torch; print(torch.__version__)'), flashinfer-bench" \
	"$("$PY" -m pip show flashinfer-bench 2>/dev/null | sed -n 's/^Version: //p'), pydantic" \
	"$("$PY" -c 'import pydantic; print(pydantic.VERSION)'))"

# --- 2. import, and what the import must keep
"$BIN/ksearch" tasks import flashinfer-bench "$DEF_JSON" "$WL_JSONL" --out "$OUT/tasks" \
	>"$OUT/import.log" 2>&1 || { cat "$OUT/import.log" >&2; die "the import failed"; }
sed 's/^/  /' "$OUT/import.log" | tee -a "$LOG"
TASK=$(ls -d "$OUT"/tasks/*/ | head -1)
TASK=${TASK%/}
"$BIN/ksearch" tasks show "$TASK" --json >"$OUT/show.json" || die "tasks show failed"
python3 - "$WL_JSONL" "$TASK/flashinfer.json" "$OUT/show.json" <<'PY' | tee -a "$LOG"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
given = {t["workload"]["uuid"]: t["workload"]["axes"] for t in lines}
side, show = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
kept = {u: w["values"] for w in side["workloads"] for u in w["uuids"]}
names = [p["name"] for p in show["params"]]
axis_of = {v: k for k, v in side["axes"].items()}  # definition axis -> task param
bad = [u for u, ax in given.items()
       if u not in kept or any(kept[u][names.index(axis_of[a])] != v for a, v in ax.items())]
print("import: %d workload lines, %d distinct uuids; the task has %d workloads, flashinfer.json "
      "keeps %d uuids, %d of them with other axes or missing" % (
          len(lines), len(given), len(show["workloads"]), len(kept), len(bad)))
print("import: class %s, flops %s, checks %s" % (
    show["class"], show["flops"], ", ".join(c["label"] for c in show["checks"][:1])))
sys.exit(0 if not bad and len(kept) == len(given) == len(show["workloads"]) and
         show["flops"] == "2 * m * n * k" else 1)
PY
[ "${PIPESTATUS[0]}" = 0 ] || die "the import lost or changed workloads (see $LOG)"
[ -f "$TASK/baseline.c" ] && ls "$TASK"/templates/cpu/*.c >/dev/null 2>&1 ||
	die "the import did not recognise the gemm (no baseline.c or template)"

# --- every other gemm definition the corpus holds with its workloads: imported, counted
for d in $(find "$CORPUS" -path '*definitions*' -name 'gemm*.json' | sort); do
	n=$(basename "$d" .json)
	w=$(find "$CORPUS" -path '*workloads*' -name "$n.jsonl" | sort | head -1)
	[ "$n" != "$DEF" ] && [ -n "$w" ] || continue
	if "$BIN/ksearch" tasks import flashinfer-bench "$d" "$w" --out "$OUT/others" >/dev/null 2>"$OUT/others.err"; then
		say "also: $n: $(grep -c . "$w") workload lines, $(python3 -c 'import json, sys
print(sum(len(w["uuids"]) for w in json.load(open(sys.argv[1]))["workloads"]))' "$OUT/others/$n/flashinfer.json") uuids kept"
	else
		say "also: $n: import FAILED: $(head -1 "$OUT/others.err")"
	fi
done

[ "$IMPORT_ONLY" = 0 ] || exit 0

# --- 3. a small search on the workloads that fit here, then the Traces and the Solution
if [ -z "$WLS" ]; then
	WLS=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(str(i) for i, w in enumerate(d["workloads"]) if w["gflop"] <= float(sys.argv[2])))' \
		"$OUT/show.json" "$GFLOP")
	[ -n "$WLS" ] || die "no workload of at most $GFLOP GFLOP: give --workloads or a larger --gflop"
fi
say "evaluated: workloads $WLS ($(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(", ".join(d["workloads"][int(i)]["label"] for i in sys.argv[2].split(",")))' "$OUT/show.json" "$WLS"))"
say "run: ksearch run $DEF --workloads $WLS --budget $BUDGET --top 1 --fresh"
start=$(date +%s)
"$BIN/ksearch" run "$TASK" --workloads "$WLS" --budget "$BUDGET" --top 1 --fresh --out "$OUT/run" \
	>"$OUT/run.log" 2>&1 || { tail -20 "$OUT/run.log" >&2; die "ksearch run failed"; }
say "run: $(( $(date +%s) - start )) s; $(grep -m1 -iE '^best' "$OUT/run.log")"
TS=$OUT/traceset
mkdir -p "$TS/definitions/gemm" "$TS/workloads/gemm" "$TS/traces/gemm" "$TS/solutions/gemm"
cp "$DEF_JSON" "$TS/definitions/gemm/" && cp "$WL_JSONL" "$TS/workloads/gemm/" || exit 2
"$BIN/ksearch" report "$OUT/run" --to flashinfer-trace >"$TS/traces/gemm/$DEF.jsonl" ||
	die "report --to flashinfer-trace failed"
"$BIN/ksearch" export "$OUT/run" --to flashinfer --out "$TS/solutions/gemm/ksearch.json" \
	>"$OUT/export.log" 2>&1 || { cat "$OUT/export.log" >&2; die "export --to flashinfer failed"; }

# --- 4. flashinfer-bench's models
"$PY" "$ROOT/bench/flashinfer_validate.py" "$TS" "$DEF" 2>&1 | tee "$OUT/validate.txt" | tee -a "$LOG"
VALID=${PIPESTATUS[0]}
say "validation: $([ "$VALID" = 0 ] && echo passed || echo FAILED)"

if [ -n "$PAGE" ]; then
	{
		echo "# flashinfer-bench's gemm, round-tripped on the CPU"
		echo
		echo "flashinfer-bench's own Definition \`$DEF\` and its workloads, imported by"
		echo "\`ksearch tasks import flashinfer-bench\`, searched briefly on the CPU, written back as"
		echo "Traces (\`ksearch report RUN --to flashinfer-trace\`) and a Solution (\`ksearch export RUN"
		echo "--to flashinfer\`), and validated with flashinfer-bench's own models. Made by"
		echo "\`bash bench/flashinfer_roundtrip.sh${ARGS:+ $ARGS}\` on $(date -u +%Y-%m-%d), ksearch at"
		echo "commit $(git -C "$ROOT" log -1 --format=%h 2>/dev/null); the script's header says what"
		echo "each step checks."
		echo
		echo "Machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores,"
		echo "$(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg) at the end (the timings are"
		echo "of a naive kernel on a shared machine: they show the round trip works, not a speed)."
		echo
		echo "## What ran"
		echo
		echo '```'
		cat "$LOG"
		echo '```'
		echo
		echo "One Trace line as ksearch wrote it, and the Solution without its sources:"
		echo
		echo '```json'
		head -1 "$TS/traces/gemm/$DEF.jsonl"
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["sources"] = ["%s (%d characters)" % (x["path"], len(x["content"])) for x in d["sources"]]
print(json.dumps(d, indent=1))' "$TS/solutions/gemm/ksearch.json"
		echo '```'
		echo
		echo "## What it shows, and what it does not"
		echo
		echo "- Every workload line of the definition is a workload of the task, each uuid kept with"
		echo "  its own axes (\`flashinfer.json\`); flops are \`2 * m * n * k\`; the gemm is recognised"
		echo "  (naive baseline, OpenMP template, matmul checks; the odd-sizes check keeps the const N"
		echo "  and K)."
		echo "- Only the evaluated workloads (above) have Traces: the others are GPU sizes (up to"
		echo "  M = 8192, 275 GFLOP each) that a naive CPU kernel and a torch fp16 reference on the CPU"
		echo "  do not finish here in reasonable time. \`--workloads\` picks others."
		echo "- flashinfer-bench's models are those of its PyPI release (\`flashinfer_bench.data\`:"
		echo "  Definition, Solution, Trace, TraceSet), installed without flashinfer-python and"
		echo "  apache-tvm-ffi, which only building and running Solutions need. The Solution was not"
		echo "  run inside flashinfer-bench's benchmark (that needs a GPU); its \`main.py\` is the"
		echo "  torch module of \`ksearch export --to torch\` ([export-torch.md](export-torch.md))."
		echo "- \`TraceSet.get_best_trace\` keeps traces whose max errors are at most 1e-2 by"
		echo "  default. An output here sums 4096 products of normal(0, 1) inputs (standard deviation"
		echo "  64), and one fp16 step is 0.0625 between 64 and 128, 0.125 between 128 and 256: a"
		echo "  kernel and a reference that round differently differ by that much, so the passing"
		echo "  traces' \`max_absolute_error\` (above) exceeds the default bound, and"
		echo "  \`get_best_trace\` finds them only with a larger \`max_abs_error\`."
	} >"$PAGE"
	echo "wrote $PAGE"
fi
exit "$VALID"
