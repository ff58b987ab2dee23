#!/usr/bin/env bash
# Measures the system calls ksearch's runners make after their seccomp filter is loaded,
# over every shipped task's CPU kernels (the baseline timed too, as `ksearch eval` does)
# and, where ksearch-runner-mlx is built, every task's native MLX baseline.  Prints one
# "NAME COUNT" line per system call, per runner, under strace -f (as root; OpenMP's threads
# included).  How the allow-lists in src/eval/sandbox_linux.c were measured (docs/evaluation.md).
#   scripts/seccomp_measure.sh [BUILD_DIR]      (default: build)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "${1:-$ROOT/build}" && pwd)
command -v strace >/dev/null || { echo "seccomp_measure: strace is not installed (apt-get install -y strace)" >&2; exit 2; }
# KEEP=DIR keeps the traces there
OUT=${KEEP:-$(mktemp -d)}
mkdir -p "$OUT"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$OUT"' EXIT
export KSEARCH_CACHE=$OUT/cache
n=0
trace() { # trace NAME ksearch-args...
	local name=$1
	shift
	n=$((n + 1))
	strace -f -q -o "$OUT/$name.$n.trace" "$BIN/ksearch" eval "$@" --quick --json >"$OUT/$n.json" 2>"$OUT/$n.err"
	local st
	st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$OUT/$n.json" 2>/dev/null || echo NO_JSON)
	echo "# $name: ${2#$ROOT/} $st" >&2
}
for dir in "$ROOT"/tasks/*/; do
	dir=${dir%/}
	[ -f "$dir/baseline.c" ] && trace cpu "$dir" "$dir/baseline.c"
	for f in "$dir"/templates/cpu/*.c; do
		[ -f "$f" ] && trace cpu "$dir" "$f"
	done
	[ -x "$BIN/ksearch-runner-mlx" ] && [ -f "$dir/baseline.mlx" ] &&
		trace mlx "$dir" "$dir/baseline.mlx" --backend mlx --reps 3 --workloads 0
done
for kind in cpu mlx; do
	ls "$OUT"/$kind.*.trace >/dev/null 2>&1 || continue
	echo "== $kind runner =="
	python3 "$ROOT/scripts/seccomp_syscalls.py" "$OUT"/$kind.*.trace
done
