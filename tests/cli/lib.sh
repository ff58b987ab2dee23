# Shared helpers for the scenario tests: TAP output and a final "N passed, N failed" line.
set -u
KS=${KS_BIN:-build}/ksearch
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export KSEARCH_HOME=${KSEARCH_HOME:-$ROOT}
export KSEARCH_CACHE=${KSEARCH_CACHE:-$(mktemp -d)}
T_N=0
T_FAIL=0
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

done_testing() {
	echo "1..$T_N"
	echo "$((T_N - T_FAIL)) passed, $T_FAIL failed"
	[ "$T_FAIL" -eq 0 ]
}
