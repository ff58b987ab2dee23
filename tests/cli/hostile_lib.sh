# Shared by t0200-eval-hostile.sh and t0201-eval-hostile-load.sh (sourced after lib.sh):
# evaluate a kernel of tests/fixtures/hostile on the scale task and check its status, and
# the catalogue of them (tests/fixtures/hostile/catalogue.txt).
TASK=$ROOT/tests/fixtures/eval/scale
H=$ROOT/tests/fixtures/hostile

status_of() { # status_of KERNEL [extra args]: prints the status, checks exit code agrees
	local k=$1 f=$1
	shift
	# one file per kernel and arguments: $TMP/KERNEL.json, $TMP/KERNEL--no-sandbox.json
	[ $# -gt 0 ] && f=$k$(printf '%s' "$*" | tr -c 'A-Za-z0-9_.-' '_')
	local st rc
	st=$(eval_status "$f" "$TASK" "$H/$k.c" --quick --timeout 3 --memory-limit 512M "$@")
	rc=$?
	if [ "$st" = NO_JSON ]; then st="NO_JSON(rc=$rc)"; fi
	if [ "$st" = PASSED ] && [ $rc -ne 0 ]; then st="$st(rc=$rc)"; fi
	if [ "$st" != PASSED ] && [ $rc -ne 1 ] && [ "${st#NO_JSON}" = "$st" ]; then st="$st(rc=$rc)"; fi
	echo "$st"
}

expect() { # expect KERNEL STATUS [extra args]
	local k=$1 want=$2
	shift 2
	local got f=$k
	got=$(status_of "$k" "$@")
	is "$got" "$want" "$k${*:+ $*} -> $want"
	[ "$got" = "$want" ] && return
	# a status not expected: its log, so that a failure on another machine tells its cause
	[ $# -gt 0 ] && f=$k$(printf '%s' "$*" | tr -c 'A-Za-z0-9_.-' '_')
	json_get "$TMP/$f.json" 'd.get("log", "")' 2>/dev/null | sed 's/^/# /'
	sed 's/^/# stderr: /' "$TMP/$f.err" 2>/dev/null | tail -n 5
}

catalogue() { # catalogue [load]: every row of the catalogue, or the rows marked load
	local mark k st args
	while read -r mark k st args; do
		case $mark in '' | '#'*) continue ;; esac
		[ "${1:-}" = load ] && [ "$mark" != load ] && continue
		# shellcheck disable=SC2086 # args: words
		expect "$k" "$st" $args
	done <"$H/catalogue.txt"
}
