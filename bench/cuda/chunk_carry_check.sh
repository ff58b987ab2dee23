#!/usr/bin/env bash
# On a GPU machine, from the repository root, with ksearch already built (KS_BIN=DIR, default
# build): check and time tasks/selective_scan/templates/cuda/chunk_carry.cu at its default
# knobs and a few other settings, with state_scan.cu at its defaults alongside, in about two
# minutes.  Every chunk_carry setting runs `ksearch eval selective_scan ... --backend cuda
# --quick` on every workload and check (3 seeds); the default one also times the naive
# baseline.cu, whose medians give every column its speedup.  Prints one line per setting
# (status) and a table: median us per workload and setting.  OUT=DIR keeps the JSON and logs.
#   CONFIGS="DEFAULT WPC=1,CPB=8 ..."   the settings (DEFAULT = no --define)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
KS=${KS_BIN:-$ROOT/build}/ksearch
[ -x "$KS" ] || { echo "no ksearch at $KS (set KS_BIN to the build directory)"; exit 2; }
# binaries built on another machine may bring the libraries this one lacks (as run.sh does)
if [ -d "$(dirname "$KS")/devlibs" ]; then
	for f in "$(dirname "$KS")"/devlibs/*.so*; do
		ldconfig -p | grep -q "$(basename "$f") " || cp -n "$f" /usr/local/lib/
	done
	ldconfig 2>/dev/null
fi
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
export KSEARCH_HOME=$ROOT KSEARCH_CACHE=${KSEARCH_CACHE:-$OUT/cache}
T=tasks/selective_scan
TPL=$T/templates/cuda/chunk_carry.cu
CONFIGS=${CONFIGS:-DEFAULT WPC=1,CPB=8 WPC=4,CPB=2 POLY=1 PFR=0,UNR=1,WPC=1,CPB=4}
defs() { [ "$1" = DEFAULT ] || echo "--define $1"; }
stamp() { date -u +%H:%M:%S; }

# 1. compile every kernel at once (the compile cache keeps the libraries): a tiny workload,
# no checks, no timing that matters
echo "== $(stamp) compiling $(echo "$CONFIGS" | wc -w) settings, state_scan and the baseline"
i=0
for c in $CONFIGS; do
	# shellcheck disable=SC2046
	"$KS" eval selective_scan "$TPL" --backend cuda $(defs "$c") --workloads 0 --no-checks \
		--no-baseline --quick --json >"$OUT/warm-$i.json" 2>"$OUT/warm-$i.err" &
	i=$((i + 1))
done
"$KS" eval selective_scan $T/templates/cuda/state_scan.cu --backend cuda --workloads 0 \
	--no-checks --quick --json >"$OUT/warm-state_scan.json" 2>"$OUT/warm-state_scan.err" &
wait

# 2. one setting at a time on the GPU: every workload and check
echo "== $(stamp) evaluating"
i=0
for c in $CONFIGS; do
	base=--no-baseline
	[ $i = 0 ] && base=
	# shellcheck disable=SC2046,SC2086
	"$KS" eval selective_scan "$TPL" --backend cuda $(defs "$c") --quick --json $base \
		>"$OUT/eval-$i.json" 2>"$OUT/eval-$i.err"
	echo "   $(stamp) chunk_carry $c rc=$?"
	i=$((i + 1))
done
"$KS" eval selective_scan $T/templates/cuda/state_scan.cu --backend cuda --quick --json \
	--no-baseline --no-checks >"$OUT/eval-state_scan.json" 2>"$OUT/eval-state_scan.err"
echo "   $(stamp) state_scan (defaults, workloads only) rc=$?"

# shellcheck disable=SC2086
python3 - "$OUT" $CONFIGS <<'PY'
import json, os, sys
out, configs = sys.argv[1], sys.argv[2:]
runs = [(c, os.path.join(out, "eval-%d.json" % i)) for i, c in enumerate(configs)]
runs.append(("state_scan", os.path.join(out, "eval-state_scan.json")))
def tag(w):
    p = w.get("params", {})
    return w.get("name") or "b%s d%s L%s n%s" % (p.get("batch"), p.get("dim"), p.get("seqlen"), p.get("dstate"))
res, base = [], {}
for name, path in runs:
    try:
        d = json.load(open(path))
    except Exception as e:
        print("%-34s no JSON (%s): see %s" % (name, e, path.replace(".json", ".err")))
        res.append((name, {}))
        continue
    bad = [w for w in d.get("checks", []) + d.get("workloads", []) if w.get("status") != "PASSED"]
    print("%-34s %s%s" % (name, d.get("status"), "".join(
        "\n    %s %s %s" % (tag(w), w.get("status"), (w.get("log") or "")[:300].replace("\n", " | "))
        for w in bad)))
    med = {}
    for w in d.get("workloads", []):
        med[tag(w)] = w.get("median_us")
        if w.get("baseline_us"):
            base[tag(w)] = w["baseline_us"]
    res.append((name, med))
keys = [k for k in res[0][1]] or sorted({k for _, m in res for k in m})
print("\nmedian us (x speedup over the naive baseline.cu, timed in the first setting's eval);"
      " columns: chunk_carry settings, then state_scan at its defaults")
print("%-22s %12s" % ("workload", "baseline") + "".join(" %22s" % n for n, _ in res))
for k in keys:
    line = "%-22s %12s" % (k, "%.1f" % base[k] if k in base else "-")
    for _, m in res:
        v = m.get(k)
        cell = "-" if not v else "%.1f" % v + (" (x%.1f)" % (base[k] / v) if k in base else "")
        line += " %22s" % cell
    print(line)
print("\ngoal (issue 16): b1 d2048 L2048 n16 <= 43 us; mamba_ssm measured 86-94 us there, 586 us at b8")
PY
echo "== $(stamp) done; JSON and logs in $OUT"
