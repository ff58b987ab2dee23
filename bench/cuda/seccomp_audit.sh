#!/usr/bin/env bash
# On a GPU machine, from the repository root, with binaries built elsewhere:
#
#   KS_BIN=DIR bash bench/cuda/seccomp_audit.sh
#
# runs tests/cli/t0400-cuda.sh (and t0450-mlx.sh where ksearch-runner-mlx runs on a GPU)
# with ksearch in seccomp audit mode (KSEARCH_SECCOMP_AUDIT=FILE: every system call outside
# a runner's allow-list is recorded and allowed, what the deny filter traps stays a
# violation), then prints the system calls each runner needed beyond its allow-list, one
# "RUNNER NUMBER NAME" line each, or "none".  ENFORCE=1 runs t0400 once more without audit
# mode, as a search would.  OUT=DIR keeps the logs.  A few minutes at most.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export KS_BIN=$(cd "${KS_BIN:-build}" && pwd)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
AUDIT=$OUT/seccomp-audit.txt
: >"$AUDIT"
# binaries built on another machine may bring the libraries this one lacks (as run.sh)
if [ -d "$KS_BIN/devlibs" ]; then
	for f in "$KS_BIN"/devlibs/*.so*; do
		ldconfig -p | grep -q "$(basename "$f") " || cp -n "$f" /usr/local/lib/
	done
	ldconfig 2>/dev/null
fi
echo "== kernel $(uname -r), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"

summary() { # summary LOG: the test's last line and its failures
	grep -E "^not ok" "$1" | head -20
	tail -1 "$1"
}
run_test() { # run_test NAME SCRIPT [env...]
	local name=$1 script=$2
	shift 2
	local t0=$SECONDS
	env "$@" KS_T0400_SKIP_COMPILE=1 timeout 170 bash "$script" >"$OUT/$name.log" 2>&1
	last_rc=$?
	echo "== $name (rc $last_rc, $((SECONDS - t0)) s): $(summary "$OUT/$name.log" | tr '\n' ' ')"
}

# audit mode works on this kernel: a CPU kernel's off-list syslog is recorded and allowed
KSEARCH_SECCOMP_AUDIT=$OUT/selfcheck.txt KSEARCH_CACHE=$OUT/cache "$KS_BIN/ksearch" eval \
	tests/fixtures/eval/scale tests/fixtures/hostile/syslog_read.c --quick >"$OUT/selfcheck.log" 2>&1
if grep -q " syslog$" "$OUT/selfcheck.txt" 2>/dev/null; then
	echo "== audit mode works here (syslog_read recorded: $(sort -u "$OUT/selfcheck.txt" | tr '\n' ' '))"
else
	echo "== audit mode does NOT work here: $(tail -3 "$OUT/selfcheck.log" | tr '\n' ' ')"
fi
run_test t0400-audit tests/cli/t0400-cuda.sh KSEARCH_SECCOMP_AUDIT="$AUDIT"
[ "$last_rc" = 77 ] && echo "== t0400 skipped its GPU checks: nothing below was measured on a GPU"
if [ -x "$KS_BIN/ksearch-runner-mlx" ]; then
	case "$("$KS_BIN/ksearch-runner-mlx" --probe 2>/dev/null)" in
	*cuda=1*) run_test t0450-audit tests/cli/t0450-mlx.sh KSEARCH_SECCOMP_AUDIT="$AUDIT" ;;
	*) echo "== t0450 not run: ksearch-runner-mlx has no CUDA MLX here" ;;
	esac
fi
echo "== system calls the runners needed beyond their allow-list (runner, number, name):"
if [ -s "$AUDIT" ]; then
	sort -u "$AUDIT"
else
	echo "none"
fi
[ -n "${ENFORCE:-}" ] && run_test t0400-enforce tests/cli/t0400-cuda.sh
echo "== logs in $OUT"
