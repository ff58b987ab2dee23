#!/bin/bash
# flashinfer-bench round trips: a gemm Definition (C = A @ B.T, one var axis) with 43
# workloads imports as 43 workloads, recognised as a matrix product (flops, a naive
# baseline, a template, an odd-sizes check that keeps the const axes); the run's Traces
# carry every workload's own uuid and every input, the exported Solution is named as its
# candidate's Traces name it, and flashinfer-bench's own models load the Definition,
# ksearch's Solution and Traces and know every key (where flashinfer-bench is installed
# for the Python ksearch uses); past the cap on workloads the import stops and names the
# option that lifts it.
# needs: python3 with numpy
. "$(dirname "$0")/lib.sh"

python3 -c 'import numpy' 2>/dev/null || skip_rest "numpy is not installed for python3"
FIX=tests/fixtures/flashinfer
export KSEARCH_CACHE=$TMP/cache
PY=${KSEARCH_PYTHON:-python3}

$KS tasks import flashinfer-bench $FIX/gemm_n64_k96.json $FIX/gemm_n64_k96.jsonl --out "$TMP" >"$TMP/imp.out" 2>&1
ok $? "the gemm Definition imports"
task=$TMP/gemm_n64_k96
grep -q "recognised gemm" "$TMP/imp.out"
ok $? "... recognised as a gemm"
$KS tasks show "$task" --json >"$TMP/show.json" 2>/dev/null
is "$(json_get "$TMP/show.json" 'len(d["workloads"])')" 43 "every one of the 43 workloads is kept"
is "$(json_get "$TMP/show.json" 'd["flops"]')" "2 * m * n * k" "flops from op_type gemm"
# a kernel may hard-code a const axis (flashinfer-bench's gemm solutions do): the generated
# check changes only M, and from the smallest workload with an even M (2), so it costs little
is "$(json_get "$TMP/show.json" '[" ".join("%s=%s" % kv for kv in c["params"].items()) for c in d["checks"] if c["name"] == "odd-sizes"]')" \
	"['m=3 n=64 k=96']" "the odd-sizes check keeps the const axes N, K and starts from M = 2"
is "$(json_get "$task/flashinfer.json" 'sum(len(w["uuids"]) for w in d["workloads"])')" 43 \
	"flashinfer.json keeps the 43 uuids"
$KS eval "$task" "$task/baseline.c" --quick --no-checks --workloads 0,42 --json >"$TMP/eval.json" 2>/dev/null
is "$(json_get "$TMP/eval.json" 'd["status"]')" PASSED "the generated gemm baseline passes against run()"
ls "$task"/templates/cpu/*.c >/dev/null 2>&1
ok $? "... and a knob template is there"

$KS run "$task" --budget 1 --top 1 --min-time 0.01 --out "$TMP/run" --json >"$TMP/run.json" 2>"$TMP/run.err"
ok $? "ksearch run on the imported gemm finishes"
$KS report "$TMP/run" --to flashinfer-trace >"$TMP/traces.jsonl" 2>"$TMP/traces.err"
ok $? "report --to flashinfer-trace"
python3 - "$TMP/traces.jsonl" $FIX/gemm_n64_k96.jsonl <<'PY'
import json, sys
traces = [json.loads(l) for l in open(sys.argv[1])]
given = {json.loads(l)["workload"]["uuid"]: json.loads(l)["workload"] for l in open(sys.argv[2])}
seen = set()
for t in traces:
    w = t["workload"]
    assert t["definition"] == "gemm_n64_k96", t
    assert w["uuid"] in given, w["uuid"]
    assert w["axes"] == given[w["uuid"]]["axes"], (w, given[w["uuid"]])
    assert w["inputs"] == {"A": {"type": "random"}, "B": {"type": "random"}}, w
    seen.add(w["uuid"])
assert seen == set(given), len(seen)
PY
ok $? "the traces name each workload by its uuid, with its axes and every input"

# --- the Solution: named as its candidate's Traces name it (TraceSet.get_solution)
mkdir -p "$TMP/ts/definitions" "$TMP/ts/solutions" "$TMP/ts/traces" "$TMP/ts/workloads"
cp $FIX/gemm_n64_k96.json "$TMP/ts/definitions/"
cp $FIX/gemm_n64_k96.jsonl "$TMP/ts/workloads/"
cp "$TMP/traces.jsonl" "$TMP/ts/traces/gemm_n64_k96.jsonl"
# the task folder is not under tasks/ nor the current folder: export finds it as the run
# was given it
$KS export "$TMP/run" --to flashinfer --out "$TMP/ts/solutions/ksearch.json" >"$TMP/export.out" 2>&1
rc=$?
[ $rc = 0 ] || cat "$TMP/export.out" >&2
ok $rc "export --to flashinfer writes a Solution for an imported task outside tasks/"
python3 - "$TMP/ts/solutions/ksearch.json" "$TMP/traces.jsonl" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
traces = [json.loads(l) for l in open(sys.argv[2])]
own = [t for t in traces if t["solution"] == s["name"]]
assert s["definition"] == "gemm_n64_k96", s["definition"]
assert own and all(t["evaluation"]["status"] == "PASSED" for t in own), (s["name"], {t["solution"] for t in traces})
PY
ok $? "... named as the best candidate's Traces name their solution, all PASSED"

# --- flashinfer-bench's own models: bench/flashinfer_validate.py (bench/flashinfer_roundtrip.sh
# runs it on flashinfer-bench's real gemm), unknown keys included
if $PY -c 'import flashinfer_bench' 2>/dev/null; then
	$PY "$ROOT/bench/flashinfer_validate.py" "$TMP/ts" gemm_n64_k96 >"$TMP/validate.out" 2>&1
	rc=$?
	[ $rc = 0 ] || cat "$TMP/validate.out" >&2
	ok $rc "flashinfer-bench's models load the Definition, the Solution and the Traces, and know every key"
else
	skip "flashinfer-bench's models load ksearch's Definition, Solution and Traces" \
		"flashinfer-bench is not installed for $PY (pip install flashinfer-bench)"
fi

# --- a candidate that writes NaN fails the check first, and its timed workload is not run:
# the Trace says "NaN" (unknown) for its errors, not the 0 its row holds, nor null, which
# flashinfer-bench's models refuse (and with it the whole traces file)
mkdir -p "$TMP/nan"
cp -r "$task" "$TMP/nan/" && rm -f "$TMP/nan/gemm_n64_k96/templates/cpu/"*.c
cat >"$TMP/nan/gemm_n64_k96/templates/cpu/nan_out.c" <<'C'
/* @ksearch
family: nan-out
summary: writes NaN for every output, a candidate that must fail
rating: 4
difficulty: 1
knobs:
  UNUSED: {values: [0], default: 0, summary: "no effect"}
@end */
#include <math.h>
#include <stdint.h>

void gemm_n64_k96(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k)
{
	(void)a, (void)b, (void)k;
	for (int64_t i = 0; i < (int64_t)m * n; i++)
		c[i] = NAN;
}
C
$KS run "$TMP/nan/gemm_n64_k96" --budget 1 --top 0 --min-time 0.01 --workloads 0 --out "$TMP/nanrun" \
	>"$TMP/nanrun.out" 2>&1
$KS report "$TMP/nanrun" --to flashinfer-trace >"$TMP/nan.jsonl" 2>"$TMP/nan.err"
python3 - "$TMP/nan.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ev = [t["evaluation"] for t in lines]
assert ev and all(e["status"] == "INCORRECT_NUMERICAL" for e in ev), ev
assert all(e["correctness"]["max_absolute_error"] == "NaN" for e in ev), ev
PY
ok $? "a candidate that wrote NaN: its Trace is INCORRECT_NUMERICAL with the errors \"NaN\", not 0 or null"
if $PY -c 'import flashinfer_bench' 2>/dev/null; then
	$PY -c 'import json, sys
from flashinfer_bench.data import Trace
for l in open(sys.argv[1]):
    assert Trace.model_validate(json.loads(l)).evaluation.status.value == "INCORRECT_NUMERICAL"' "$TMP/nan.jsonl"
	ok $? "... and flashinfer-bench's Trace reads it"
else
	skip "... and flashinfer-bench's Trace reads it" "flashinfer-bench is not installed for $PY"
fi

# --- the cap on workloads: bounds first, a refusal that names the cap and the option
python3 - "$TMP" <<'PY'
import json, sys
d = {"name": "scale_n", "op_type": "scale", "axes": {"n": {"type": "var"}},
     "inputs": {"x": {"shape": ["n"], "dtype": "float32"}}, "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
     "reference": "def run(x):\n    return x * 2\n"}
json.dump(d, open(sys.argv[1] + "/scale.json", "w"))
for n in (33, 300):
    with open("%s/w%d.jsonl" % (sys.argv[1], n), "w") as f:
        for i in range(n):
            f.write(json.dumps({"uuid": "u%d" % i, "axes": {"n": i + 1}, "inputs": {"x": {"type": "random"}}}) + "\n")
PY
$KS tasks import flashinfer-bench "$TMP/scale.json" "$TMP/w33.jsonl" --out "$TMP/c33" >/dev/null 2>&1
ok $? "33 distinct workloads import"
$KS tasks show "$TMP/c33/scale_n" --json >"$TMP/c33.json" 2>/dev/null
is "$(json_get "$TMP/c33.json" 'len(d["workloads"])')" 33 "... all 33 of them"
$KS tasks import flashinfer-bench "$TMP/scale.json" "$TMP/w300.jsonl" --out "$TMP/c300" >/dev/null 2>"$TMP/c300.err"
is "$?" 2 "300 workloads pass the default cap and are refused"
grep -q "w300.jsonl:257: more than 256 distinct workloads.*--max-workloads N" "$TMP/c300.err"
ok $? "... naming the line, the cap and the option that lifts it"
$KS tasks import flashinfer-bench "$TMP/scale.json" "$TMP/w300.jsonl" --max-workloads 300 --out "$TMP/c300" >/dev/null 2>&1
$KS tasks show "$TMP/c300/scale_n" --json >"$TMP/c300.json" 2>/dev/null
is "$(json_get "$TMP/c300.json" 'len(d["workloads"])')" 300 "--max-workloads 300 keeps all 300"

done_testing
