#!/usr/bin/env bash
# needs: cc, make and GNU ld (--wrap)
# The per-shape pick from a real run: the fixture task two_shapes has two kernels that each
# win one of its two workloads by far (a fixed cost per row, or per column).  The run keeps
# the fastest candidate per workload beside the overall best (its "per_shape" event and
# summary), the report shows it, and `export --to c --per-shape` builds a library whose
# entry point picks the kernel by shape: each measured shape gets its winner (checked by
# wrapping the variants' symbols at link time), any other shape the overall best, and every
# call equals y = 2x.  Without --per-shape the export is one kernel and says what it leaves.
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/per_shape/two_shapes
RUN=$TMP/run

"$KS" run "$TASK" --budget 3 --top 3 --min-time 0.01 --out "$RUN" --json >"$TMP/run.json" 2>"$TMP/run.err"
ok $? "ksearch run two_shapes finishes" || sed 's/^/# /' "$TMP/run.err"
is "$(json_get "$TMP/run.json" 'd["per_shape"]["timed"], d["per_shape"]["won_by_others"]')" "2 1" \
	"the run's summary: of 2 timed workloads, 1 won by another candidate than the best"
grep -q "^per-shape pick: on 1 of 2 timed workloads another candidate is faster" "$TMP/run.err"
ok $? "... and its log says so"

"$KS" report "$RUN" --json >"$TMP/report.json"
ok $? "report --json"
# who won what, by the knob the run's store gives each candidate
python3 - "$TMP/report.json" >"$TMP/picks" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
knob = {c["id"]: c["knobs"].get("ALONG") for c in d["candidates"]}
p = d["per_shape"]
best = d["best"]["candidate"]
assert p["recorded"] is True and p["best"] == best, p
for w in p["workloads"]:
    # the wide shape (8 rows) goes row by row (ALONG=0), the tall one column by column
    want = "0" if w["label"] == "rows=8 cols=8192" else "1"
    assert knob[w["candidate"]] == want, (w, knob)
    assert (w["candidate"] == best) == (w["speedup_vs_best"] == 1), w
    assert w["candidate"] == best or w["speedup_vs_best"] > 1.5, w
    print(w["label"].replace(" ", "_"), "best" if w["candidate"] == best else "other")
PY
ok $? "report --json: the run's recorded pick, each shape's winner the walk that suits it"
grep -q "^## Per-shape pick" "$RUN/report.md" &&
	grep -qE '^\| rows=8 cols=8192 \| #[0-9]+( \(best\))? \| axis `ALONG=0` \| final \| ' "$RUN/report.md" &&
	grep -qE '^\| rows=8192 cols=8 \| #[0-9]+( \(best\))? \| axis `ALONG=1` \| final \| ' "$RUN/report.md" &&
	grep -qE '^\| rows=[0-9]+ cols=[0-9]+ \| #[0-9]+ \| .* \| [0-9.]+ \| [0-9.]+ \| ([2-9]|[1-9][0-9]+)\.[0-9]+x \|$' "$RUN/report.md"
ok $? "report.md: the per-shape table, the other winner's speedup over the best on its shape"

# without --per-shape: one kernel, and a word about what was left out
"$KS" export "$RUN" --to c --out "$TMP/one" 2>"$TMP/one.err"
ok $? "export --to c"
[ -f "$TMP/one/two_shapes.c" ] && [ ! -f "$TMP/one/two_shapes_dispatch.c" ] &&
	grep -q "another candidate is faster on 1 workload .*--per-shape exports them too" "$TMP/one.err"
ok $? "... one kernel, and the hint that --per-shape exports the other too"
"$KS" export "$TASK/templates/cpu/axis.c" --task "$TASK" --to c --per-shape --out "$TMP/bad" 2>"$TMP/bad.err"
is "$?" 2 "--per-shape on a kernel file: exit 2"
grep -q -- "--per-shape takes a run folder" "$TMP/bad.err"
ok $? "... saying it takes a run folder"

"$KS" export "$RUN" --to c --per-shape --out "$TMP/lib" 2>"$TMP/lib.err"
ok $? "export --to c --per-shape" || sed 's/^/# /' "$TMP/lib.err"
[ -f "$TMP/lib/two_shapes_dispatch.c" ] && [ -f "$TMP/lib/two_shapes_v0.c" ] && [ -f "$TMP/lib/two_shapes_v1.c" ] &&
	grep -q '^int two_shapes_variant(int32_t rows, int32_t cols);' "$TMP/lib/two_shapes.h"
ok $? "... one source per variant, a dispatcher, and two_shapes_variant in the header"
make -C "$TMP/lib" >"$TMP/make.out" 2>&1
ok $? "make builds libtwo_shapes.a" || sed 's/^/# /' "$TMP/make.out"

# which variant each shape must get: the winner's (variant 1 when it is not the best)
v_wide=$(grep '^rows=8_cols=8192 ' "$TMP/picks" | grep -q other && echo 1 || echo 0)
v_tall=$(grep '^rows=8192_cols=8 ' "$TMP/picks" | grep -q other && echo 1 || echo 0)
cat >"$TMP/calls.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "two_shapes.h"
/* the dispatcher's calls of the variants land here first (ld --wrap) */
static int called[2];
void __real_two_shapes__v0(const float *, float *, int32_t, int32_t);
void __real_two_shapes__v1(const float *, float *, int32_t, int32_t);
void __wrap_two_shapes__v0(const float *x, float *y, int32_t r, int32_t c)
{
	called[0]++;
	__real_two_shapes__v0(x, y, r, c);
}
void __wrap_two_shapes__v1(const float *x, float *y, int32_t r, int32_t c)
{
	called[1]++;
	__real_two_shapes__v1(x, y, r, c);
}
/* calls two_shapes on rows x cols: which variant ran, and whether y = 2x */
static int run(int rows, int cols, int want)
{
	size_t n = (size_t)rows * cols;
	float *x = malloc(n * sizeof(*x)), *y = malloc(n * sizeof(*y));
	int before[2] = {called[0], called[1]}, bad = 0;
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(i % 97) - 48.5f;
	two_shapes(x, y, rows, cols);
	for (size_t i = 0; i < n && !bad; i++)
		bad = y[i] != 2.0f * x[i];
	int ran = called[1] > before[1] ? 1 : called[0] > before[0] ? 0 : -1;
	printf("%dx%d: variant %d (two_shapes_variant %d, want %d), %s\n", rows, cols, ran,
	       two_shapes_variant(rows, cols), want, bad ? "WRONG" : "y = 2x");
	free(x);
	free(y);
	return ran == want && two_shapes_variant(rows, cols) == want && !bad;
}
int main(int argc, char **argv)
{
	int wide = atoi(argv[1]), tall = atoi(argv[2]);
	int good = run(8, 8192, wide) + run(8192, 8, tall) + run(100, 100, 0) + run(3, 5, 0);
	printf(good == 4 ? "ALL RIGHT\n" : "WRONG PICK\n");
	return good != 4;
}
C
out=$(cc -O2 -fopenmp -I"$TMP/lib" "$TMP/calls.c" "$TMP/lib/libtwo_shapes.a" \
	-Wl,--wrap=two_shapes__v0,--wrap=two_shapes__v1 -lm -o "$TMP/calls" 2>&1 &&
	"$TMP/calls" "$v_wide" "$v_tall")
echo "$out" | sed 's/^/# /'
is "$(echo "$out" | tail -1)" "ALL RIGHT" \
	"each measured shape runs its winner, unmeasured shapes the overall best, all y = 2x"

# the torch module routes the same way (its _route, without torch)
"$KS" export "$RUN" --to torch --per-shape --out "$TMP/ks_two.py" 2>/dev/null
ok $? "export --to torch --per-shape"
python3 - "$TMP/ks_two.py" "$v_wide" "$v_tall" <<'PY'
import ast, sys
tree = ast.parse(open(sys.argv[1]).read())
ns = {}
for node in tree.body:
    if isinstance(node, ast.FunctionDef) and node.name == "_route":
        exec(compile(ast.Module([node], []), "m", "exec"), ns)
    if isinstance(node, ast.Assign) and node.targets[0].id == "_two_shapes_ROUTES":
        ns["routes"] = eval(compile(ast.Expression(node.value), "m", "eval"))
r = ns["_route"]
got = (r(ns["routes"], (8, 8192)), r(ns["routes"], (8192, 8)), r(ns["routes"], (100, 100)))
want = (int(sys.argv[2]), int(sys.argv[3]), 0)
assert got == want, (got, want)
PY
ok $? "the torch module's _route: each measured shape its winner, others the best"

done_testing
