#!/usr/bin/env bash
# Two builds of ksearch timing the same MLX kernel against MLX native, in alternating
# processes (A B A B ...), to tell a change on the host side (the kernel text MLX gets, the
# runner's timing) from the noise between processes; on a GPU machine, from the root:
#
#   KS_BIN=DIR AB_BIN=DIR bash bench/probes/ab_builds.sh TASK KERNEL [ksearch eval options]
#   KS_BIN=.cache/bin AB_BIN=.cache/ab bash bench/probes/ab_builds.sh attention \
#       tasks/attention/templates/mlx/flash_wgmma.cuda.mlx \
#       --define WG=2,BN=128,STAGES=3,WS=1 --workloads 2,3 --no-checks
#
# KS_BIN (build A) and AB_BIN (build B) each hold ksearch and its runners (a folder of
# scripts/pack-binaries.sh; A's devlibs are installed); ROUNDS=N pairs (default 3);
# MLX_SITE as for bench/mlx/gpu_env.sh; OUT=DIR gets the table and the JSON.  Prints, per
# workload and build, each process's median and ratio (native time / this) and their medians.
set -u
[ $# -ge 2 ] || { sed -n '2,15p' "$0"; exit 2; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
A=$(cd "${KS_BIN:?KS_BIN=DIR: build A}" && pwd)
B=$(cd "${AB_BIN:?AB_BIN=DIR: build B}" && pwd)
RES=${OUT:-/tmp/ks-ab}
mkdir -p "$RES"
[ -d "$A/devlibs" ] && bash scripts/pack-binaries.sh --install "$A"
. bench/mlx/gpu_env.sh "${MLX_SITE:-/tmp/site}"
export KSEARCH_HOME=$ROOT
task=$1 kernel=$2
shift 2
files=()
for r in $(seq 1 "${ROUNDS:-3}"); do
	for side in A B; do
		bin=$A; [ $side = B ] && bin=$B
		out="$RES/$side-$r.json"
		# each build its own cache: nothing compiled by one is reused by the other
		KSEARCH_CACHE="$RES/cache-$side" timeout 300 "$bin/ksearch" eval "$task" "$kernel" \
			--backend mlx --json "$@" >"$out" 2>"$RES/$side-$r.err"
		echo "== round $r build $side ($bin): rc=$?"
		files+=("$side=$out")
	done
done
python3 - "$A" "$B" "${files[@]}" <<'PY' | tee "$RES/ab.md"
import json, statistics, sys
a, b = sys.argv[1:3]
rows = {}
for arg in sys.argv[3:]:
    side, path = arg.split("=", 1)
    try:
        d = json.load(open(path))
    except (OSError, ValueError) as e:
        print("build %s: %s unreadable (%s)" % (side, path, e))
        continue
    for w in d.get("workloads", []):
        key = ", ".join("%s=%s" % kv for kv in sorted(w["params"].items()))
        rows.setdefault(key, {}).setdefault(side, []).append(
            (w.get("median_us"), w.get("speedup_vs_baseline"), w.get("status")))
print("A = %s, B = %s\n" % (a, b))
print("| workload | build | medians us | ratios (native / this) | median us | median ratio |")
print("|---|---|---|---|---:|---:|")
for key, sides in rows.items():
    for side in ("A", "B"):
        v = sides.get(side, [])
        us = [x[0] for x in v if isinstance(x[0], (int, float))]
        rt = [x[1] for x in v if isinstance(x[1], (int, float))]
        bad = [x[2] for x in v if x[2] != "PASSED"]
        print("| %s | %s | %s | %s | %s | %s |" % (
            key, side + (" (" + ", ".join(bad) + ")" if bad else ""),
            ", ".join("%.1f" % x for x in us), ", ".join("%.3f" % x for x in rt),
            "%.1f" % statistics.median(us) if us else "-",
            "%.3f" % statistics.median(rt) if rt else "-"))
PY
