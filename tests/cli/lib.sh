# Shared helpers for the scenario tests: TAP output and a final "N passed, N failed" line.
set -u
KS=${KS_BIN:-build}/ksearch
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export KSEARCH_HOME=${KSEARCH_HOME:-$ROOT}
export KSEARCH_CACHE=${KSEARCH_CACHE:-$(mktemp -d)}
T_N=0
T_FAIL=0
T_SKIP_EXIT=77 # CTest's SKIP_RETURN_CODE for these scripts (CMakeLists.txt)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ok() { # ok COND_EXIT_STATUS "name"
	T_N=$((T_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $T_N - $2"
	else
		T_FAIL=$((T_FAIL + 1))
		echo "not ok $T_N - $2"
	fi
}

is() { # is GOT WANT "name"
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3 (got '$1', want '$2')"; fi
}

json_get() { # json_get FILE PYTHON_EXPR_ON_d
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

json_status() { # json_status FILE: the status in `ksearch eval --json`'s FILE, NO_JSON if it has none
	json_get "$1" 'd["status"]' 2>/dev/null || echo NO_JSON
}

eval_status() { # eval_status NAME EVAL_ARGS...: prints the status of `ksearch eval EVAL_ARGS --json`
	# (NO_JSON when it printed none) and returns eval's exit status; the JSON is left in
	# $TMP/NAME.json and stderr in $TMP/NAME.err for the checks that follow
	local name=$1 rc
	shift
	"$KS" eval "$@" --json >"$TMP/$name.json" 2>"$TMP/$name.err"
	rc=$?
	json_status "$TMP/$name.json"
	return $rc
}

BUSY=() # busy_loops' processes
busy_loops() { # busy_loops N: N processes spinning until the script ends (synthetic load)
	local _
	for _ in $(seq 1 "$1"); do
		(while :; do :; done) &
		BUSY+=($!)
	done
	trap 'kill "${BUSY[@]}" 2>/dev/null; rm -rf "$TMP"' EXIT
	sleep 1
}

skip() { # skip "name" "why": a check that cannot run on this machine
	T_N=$((T_N + 1))
	echo "ok $T_N - $1 # SKIP $2"
}

skip_rest() { # skip_rest "why": what is left needs something missing here (a GPU)
	# Ends the script.  When nothing failed so far the test reports "Skipped" to CTest
	# (not "Passed": it did not check what it is for); a failure before still fails it.
	T_N=$((T_N + 1))
	echo "ok $T_N - the rest # SKIP $1"
	echo "1..$T_N"
	echo "$((T_N - T_FAIL - 1)) passed, $T_FAIL failed, the rest skipped"
	[ "$T_FAIL" -eq 0 ] && exit "$T_SKIP_EXIT"
	exit 1
}

need_metal_cpu() { # the rest needs what bench/mlx/metal_cpu.py compiles with: g++, C++20, _Float16
	echo '#include <ucontext.h>
int main() { ucontext_t c; getcontext(&c); _Float16 h = (_Float16)1.0f; return (float)h == 1.0f ? 0 : 1; }' \
		>"$TMP/probe.cc"
	g++ -std=c++20 -o "$TMP/probe" "$TMP/probe.cc" 2>/dev/null && "$TMP/probe" ||
		skip_rest "no g++ with C++20 and _Float16 here (apt-get install g++)"
	# a Metal kernel emulated on the CPU runs each SIMD group's threads as coroutines: a call
	# takes seconds, and under load many times that (the default --timeout of 60 s was hit at
	# load 12 on 2 cores); what is checked here is correctness, so a hang still ends, later
	EMU_TIMEOUT=600
}

done_testing() {
	echo "1..$T_N"
	echo "$((T_N - T_FAIL)) passed, $T_FAIL failed"
	[ "$T_FAIL" -eq 0 ]
}
