#!/usr/bin/env bash
# Every recorded run kept in tests/fixtures/llm_runs/NAME/ (exchanges.jsonl and fixture.json,
# written by tests/fixtures/llm_runs/record.py) replays without a model: `ksearch run
# --llm-replay` with the recorded budget, seed and strategy must give the same candidates in
# the same order with the same statuses.  Kernels the model wrote must match exactly; the
# candidates of knob tuning (an @ksearch block, tuned without the model, chosen from
# measurements) must match in number.  Runs on a backend other than cpu, and runs whose
# kernels need CPU features this machine lacks (fixture.json's cpu_flags), are skipped here.
# needs: python3
# timeout: 1800
# (seven replays, each a run with its final phase: 304 to 452 s in all on the 2-core
# development machine at load 2.6 to 3.9, the attention run's 75 to 103 s the longest)
. "$(dirname "$0")/lib.sh"
FIX=$ROOT/tests/fixtures/llm_runs
FAST=(--min-time 0.01 --top 1 --jobs 2)
command -v python3 >/dev/null 2>&1 || skip_rest "python3 is missing"

# fixture.json's field, or "" when null
field() { json_get "$1/fixture.json" "d['$2'] if d.get('$2') is not None else ''"; }

n=0
for dir in "$FIX"/*/; do
	dir=${dir%/}
	[ -e "$dir/fixture.json" ] || continue
	name=$(basename "$dir")
	n=$((n + 1))
	backend=$(field "$dir" backend)
	if [ "$backend" != cpu ]; then
		skip "$name replays" "recorded on backend $backend: replay it where that backend runs"
		continue
	fi
	missing=$(json_get "$dir/fixture.json" "' '.join(f for f in d.get('cpu_flags', []) if f not in open('/proc/cpuinfo').read().split())" 2>/dev/null)
	if [ -n "$missing" ]; then
		skip "$name replays" "its kernels need CPU features this machine lacks: $missing"
		continue
	fi
	task=$(field "$dir" task)
	case $task in /*) ;; */*) task=$ROOT/$task ;; esac
	args=(--backend cpu --policy "$(field "$dir" policy)" --budget "$(field "$dir" budget)"
		--seed "$(field "$dir" seed)" --strategy "$(field "$dir" strategy)")
	[ -n "$(field "$dir" workloads)" ] && args+=(--workloads "$(field "$dir" workloads)")
	[ "$(field "$dir" threads)" != 0 ] && args+=(--threads "$(field "$dir" threads)")
	# the prompts' --context: the replay follows the recorded replies whatever it is, but a
	# fixture is replayed as it was run
	[ -n "$(field "$dir" context)" ] && args+=(--context "$(field "$dir" context)")
	start=$SECONDS
	"$KS" run "$task" "${args[@]}" --llm-replay "$dir" --out "$TMP/$name" --json "${FAST[@]}" \
		>"$TMP/$name.json" 2>"$TMP/$name.err"
	ok $? "$name replays without a model (exit 0; $((SECONDS - start)) s, load average $(cut -d' ' -f1 /proc/loadavg) at its end)"
	python3 - "$dir/fixture.json" "$TMP/$name/run.db" <<'EOF'
import json, sqlite3, sys
want = json.load(open(sys.argv[1]))["candidates"]
got = [{"source_hash": h, "defines": d, "status": s} for h, d, s in sqlite3.connect(sys.argv[2]).execute(
    "select c.source_hash, c.defines, r.status from candidates c join candidate_results r "
    "on r.candidate_id = c.id where r.phase = 'search' order by c.id")]
model = lambda v: [(c["source_hash"], c["status"]) for c in v if not c["defines"]]
tuned = lambda v: len([c for c in v if c["defines"]])
if model(got) != model(want):
    for i, (g, w) in enumerate(zip(model(got) + [None] * len(want), model(want))):
        if g != w:
            sys.exit("model-written candidate %d: got %s, want %s" % (i + 1, g, w))
    sys.exit("got %d model-written candidates, want %d" % (len(model(got)), len(model(want))))
if tuned(got) != tuned(want):
    sys.exit("got %d knob-tuning candidates, want %d" % (tuned(got), tuned(want)))
EOF
	ok $? "... giving the recorded candidates in order with their statuses"
	! grep -q "replay diverged" "$TMP/$name.err"
	ok $? "... and never diverging"
done
[ "$n" -ge 1 ]
ok $? "at least one fixture is kept ($n)"

done_testing
