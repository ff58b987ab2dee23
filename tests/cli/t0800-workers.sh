#!/usr/bin/env bash
# Workers: `ksearch worker` speaks the framed protocol; eval and run route through workers
# (--worker-cmd, --devices) with the same statuses as local evaluation; a worker that dies
# is restarted and its job still completes; a command that is not a worker is refused.
. "$(dirname "$0")/lib.sh"
TASK=$ROOT/tests/fixtures/eval/scale
H=$ROOT/tests/fixtures/hostile
FAST=(--quick --min-time 0.02 --timeout 5 --memory-limit 512M)

# ---- the protocol, spoken by a small client -------------------------------------------
cat >"$TMP/client.py" <<'EOF'
import json, struct, subprocess, sys
ks, task, kernel = sys.argv[1:4]
p = subprocess.Popen([ks, "worker", "--backend", "cpu", "--device", "0"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(o):
    b = json.dumps(o).encode()
    p.stdin.write(struct.pack(">I", len(b)) + b)
    p.stdin.flush()
def recv():
    h = p.stdout.read(4)
    assert len(h) == 4, "short header"
    body = p.stdout.read(struct.unpack(">I", h)[0])
    return json.loads(body)
send({"type": "hello", "protocol": 1, "role": "client"})
h = recv()
assert h["type"] == "hello" and h["role"] == "worker" and h["protocol"] == 1, h
assert h["backend"] == "cpu" and h["device"] == 0 and h["ksearch"], h
opts = {"min_time_s": 0.02, "blocks": 1, "timeout_s": 5, "nseeds": 3}
src = open(kernel).read()
send({"type": "compile", "job": 1, "task": task, "backend": "cpu", "options": opts,
      "source": src})
c = recv()
assert c["type"] == "compiled" and c["job"] == 1 and c["ok"] is True and len(c["hash"]) == 64, c
send({"type": "evaluate", "job": 2, "task": task, "backend": "cpu", "options": opts,
      "source": src, "path": "plain.c"})
r = recv()
assert r["type"] == "result" and r["job"] == 2, r
assert r["result"]["status"] == "PASSED" and r["result"]["task"] == "scale", r["result"]
d = r["detail"]
assert d["status"] == "PASSED" and len(d["workloads"]) == 1 and len(d["checks"]) >= 2, d
w = d["workloads"][0]
assert len(w["seeds"]) == 3 and len(w["samples_us"]) >= 1 and w["baseline_us"] > 0, w
send({"type": "evaluate", "job": 3, "task": task, "backend": "cpu", "options": opts,
      "source": "void scale(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = 3 * x[i]; }",
      "path": "wrong.c"})
r = recv()
assert r["job"] == 3 and r["result"]["status"] == "INCORRECT_NUMERICAL", r["result"]["status"]
send({"type": "shutdown"})
assert recv()["type"] == "bye"
assert p.stdout.read() == b"", "nothing after bye"
assert p.wait() == 0
print("protocol ok")
EOF
python3 "$TMP/client.py" "$KS" "$TASK" "$H/plain.c" >"$TMP/client.out" 2>"$TMP/client.err"
ok $? "worker answers hello, compile, evaluate (pass and fail) and shutdown"
[ $? -eq 0 ] || sed 's/^/# /' "$TMP/client.err" | tail -20

"$KS" worker --help >"$TMP/help" 2>&1
grep -q "normally started by" "$TMP/help"
ok $? "worker --help says it is normally started by run/eval"
"$KS" worker </dev/null >/dev/null 2>&1
is "$?" 2 "worker without --backend is a usage error"

# ---- eval through a worker gives the same status as local eval -------------------------
status_of() { # status_of NAME KERNEL [args]: "STATUS rc=N"
	local name=$1 k=$2 st rc
	shift 2
	st=$(eval_status "$name" "$TASK" "$k" "${FAST[@]}" "$@")
	rc=$?
	echo "$st rc=$rc"
}
WCMD="$KS worker --backend cpu"
for k in plain segfault compile_error; do
	want=$(status_of "local-$k" "$H/$k.c")
	got=$(status_of "worker-$k" "$H/$k.c" --worker-cmd "$WCMD")
	is "$got" "$want" "$k through --worker-cmd: same status and exit as local ($want)"
done
got=$(status_of devices-plain "$H/plain.c" --devices 0)
is "$got" "PASSED rc=0" "eval --devices 0 runs the ksearch beside it"
json_get "$TMP/worker-plain.json" 'd["workloads"][0]["baseline_us"] > 0 and len(d["checks"]) >= 2' \
	>"$TMP/shape" 2>&1
is "$(cat "$TMP/shape")" "True" "the worker's result carries timings and checks"

# ---- --devices: each worker's kernels see KSEARCH_DEVICE=N ------------------------------
cat >"$TMP/device1.c" <<'EOF'
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
void scale(const float *x, float *y, int32_t n)
{
	const char *d = getenv("KSEARCH_DEVICE");
	float k = d && !strcmp(d, "1") ? 2.0f : 3.0f; /* right only on device 1 */
	for (int32_t i = 0; i < n; i++)
		y[i] = k * x[i];
}
EOF
got=$(status_of dev1 "$TMP/device1.c" --devices 1)
is "$got" "PASSED rc=0" "the worker for device 1 runs kernels with KSEARCH_DEVICE=1"
got=$(status_of dev0 "$TMP/device1.c" --devices 0)
is "$got" "INCORRECT_NUMERICAL rc=1" "and the worker for device 0 with KSEARCH_DEVICE=0"

# ---- the per-device lock: a worker waits while another process holds its device ----------
LOCK=$KSEARCH_CACHE/locks/cpu-device-2.lock
mkdir -p "$KSEARCH_CACHE/locks"
if command -v flock >/dev/null; then
	(flock "$LOCK" sleep 5; date +%s%N >"$TMP/released") &
	holder=$!
	sleep 0.3
	got=$(status_of locked "$H/plain.c" --devices 2)
	ended=$(date +%s%N)
	wait "$holder"
	after=$([ "$ended" -gt "$(cat "$TMP/released")" ] && echo after || echo before)
	is "$got $after" "PASSED rc=0 after" "eval --devices 2 finishes only after the device lock is released"
fi

# ---- a worker that dies on its first job is restarted; the job completes ---------------
cat >"$TMP/flaky.py" <<'EOF'
import json, os, signal, struct, sys
ks, marker = sys.argv[1:3]
if os.path.exists(marker):
    os.execv(ks, [ks, "worker", "--backend", "cpu"])
def recv():
    h = sys.stdin.buffer.read(4)
    return json.loads(sys.stdin.buffer.read(struct.unpack(">I", h)[0]))
def send(o):
    b = json.dumps(o).encode()
    sys.stdout.buffer.write(struct.pack(">I", len(b)) + b)
    sys.stdout.buffer.flush()
recv()
send({"type": "hello", "protocol": 1, "role": "worker", "backend": "cpu", "device": 0,
      "ksearch": "fake", "target": "flaky"})
job = recv()
assert job["type"] == "evaluate"
if len(sys.argv) < 4:  # once only; with a third argument it dies every time
    open(marker, "w").close()
os.kill(os.getpid(), signal.SIGKILL)
EOF
got=$(status_of flaky "$H/plain.c" --worker-cmd "python3 $TMP/flaky.py $KS $TMP/died-once")
is "$got" "PASSED rc=0" "a worker killed during its first job is restarted and the job completes"
[ -e "$TMP/died-once" ]
ok $? "the first worker really died (marker written)"
grep -q "restarting it and re-queueing" "$TMP/flaky.err"
ok $? "the restart is logged"
got=$(status_of doomed "$H/plain.c" --worker-cmd "python3 $TMP/flaky.py $KS $TMP/never always")
is "$got" "NO_JSON rc=2" "a job that kills workers twice is an infrastructure error (exit 2)"
grep -q "2 workers died while evaluating it" "$TMP/doomed.err"
ok $? "and says so ($(tail -1 "$TMP/doomed.err"))"

# ---- commands that are not workers -----------------------------------------------------
got=$(status_of cat "$H/plain.c" --worker-cmd cat)
is "$got" "NO_JSON rc=2" "--worker-cmd cat: exit 2"
grep -q "'cat' is not a ksearch worker" "$TMP/cat.err"
ok $? "with a clear message ($(tail -1 "$TMP/cat.err"))"
got=$(status_of false "$H/plain.c" --worker-cmd false)
is "$got" "NO_JSON rc=2" "--worker-cmd false: exit 2"
grep -q "ended before its hello (exited with status 1)" "$TMP/false.err"
ok $? "with a clear message ($(tail -1 "$TMP/false.err"))"
got=$(status_of cudaw "$H/plain.c" --worker-cmd "$KS worker --backend opencl-nonesuch")
is "$got" "NO_JSON rc=2" "a worker for an unknown backend: exit 2"
grep -q "refused: backend 'opencl-nonesuch' is not usable" "$TMP/cudaw.err"
ok $? "with the worker's reason ($(tail -1 "$TMP/cudaw.err"))"
"$KS" eval "$TASK" "$H/plain.c" --devices 0,x >/dev/null 2>"$TMP/baddev.err"
is "$?" 2 "--devices 0,x is refused"

# ---- run: batches evaluated concurrently on two CPU workers ----------------------------
RUNARGS=(--budget 4 --backend cpu --strategy random --seed 3 --jobs 2 --min-time 0.02 --timeout 5 --top 1)
"$KS" run "$TASK" "${RUNARGS[@]}" --devices 0,1 --out "$TMP/run" --json >"$TMP/run.json" 2>"$TMP/run.err"
rc=$?
is "$rc" 0 "run --devices 0,1 completes"
is "$(json_get "$TMP/run.json" 'd["evaluated"]' 2>/dev/null)" 4 "with 4 evaluated"
grep -q "2 worker(s) evaluate the candidates" "$TMP/run.err"
ok $? "on two workers"
json_get "$TMP/run.json" 'd["time_per_candidate"]' | grep -q "^4 candidates evaluated by workers: their time per phase"
ok $? "the time line says the phases stay in the workers (no zeros 'evaluated here')"
sql() { # sql DB QUERY: every row, one per line
	python3 -c "import sqlite3,sys; [print(*r) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]" "$1" "$2"
}
n=$(sql "$TMP/run/run.db" "select count(distinct candidate_id) from evaluations where phase='search'")
is "$n" 4 "every candidate's evaluations are in the store"
# the same proposals in the same order as a run without workers (random: outcome-blind)
"$KS" run "$TASK" "${RUNARGS[@]}" --out "$TMP/run-local" >/dev/null 2>"$TMP/run-local.err"
order() { sql "$1/run.db" "select action || ' ' || defines from candidates order by id"; }
is "$(order "$TMP/run")" "$(order "$TMP/run-local")" "candidates are recorded in proposal order, as without workers"
[ "$(order "$TMP/run" | wc -l)" -eq 4 ]
ok $? "four candidates recorded"
# kill -9 in the middle of a run on workers, then resume it on workers
"$KS" run "$TASK" "${RUNARGS[@]}" --budget 6 --devices 0,1 --out "$TMP/run-kill" >/dev/null 2>&1 &
victim=$!
for _ in $(seq 1 600); do
	n=$(sql "$TMP/run-kill/run.db" "select count(*) from candidate_results where phase='search'" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 2 ] && break
	sleep 0.1
done
kill -9 "$victim"
wait "$victim" 2>/dev/null
"$KS" run --resume "$TMP/run-kill" --devices 0,1 --json >"$TMP/run-kill.json" 2>"$TMP/run-kill.err"
is "$?/$(json_get "$TMP/run-kill.json" 'd["evaluated"]' 2>/dev/null)" "0/6" \
	"a run on workers killed with -9 resumes on workers to its budget"
ok "$([ "$(json_get "$TMP/run-kill.json" 'd["reused"]' 2>/dev/null)" -ge 2 ] && echo 0 || echo 1)" \
	"reusing what was recorded before the kill"
is "$(order "$TMP/run-kill" | head -4)" "$(order "$TMP/run-local")" \
	"and the candidates keep the proposal order"
"$KS" run "$TASK" --budget 2 --devices 0 --worker-cmd cat --out "$TMP/run-cat" >/dev/null 2>"$TMP/run-cat.err"
is "$?" 2 "run with a worker command that is not a worker: exit 2"

done_testing
