#!/usr/bin/env bash
# A workload too big for this machine is refused before anything is generated, naming the
# workload and the sizes (exit 2, nothing written): beyond the machine's memory, or with
# input and reference files beyond the free space where the cache lives.  Until 2026-12-05 a
# 65536x65536 softmax wrote 16 GiB input files for minutes, ignoring --timeout, and
# 2147483647x2147483647 failed with "output file: Invalid argument".  Nothing big is
# allocated here, with the fix or without it (ksearch runs under ulimit -v).
. "$(dirname "$0")/lib.sh"
export KSEARCH_CACHE=$TMP/cache
KSA=$(cd "$(dirname "$KS")" && pwd)/$(basename "$KS")

copy_task() { # copy_task SRC DIR WORKLOAD...: a copy of task SRC in DIR, with only these workloads
	local src=$1 dir=$2
	shift 2
	mkdir -p "$dir" && cp -r "$ROOT/$src" "$dir/"
	python3 - "$dir/$(basename "$src")/task.yaml" "$@" <<'PY'
import re, sys
path, wls = sys.argv[1], sys.argv[2:]
s = open(path).read()
s = re.sub(r"^workloads:\n(  - .*\n)+", "workloads:\n" + "".join("  - %s\n" % w for w in wls), s, flags=re.M)
open(path, "w").write(s)
PY
}
files_in() { find "$1" -type f 2>/dev/null | wc -l; }

copy_task tasks/softmax "$TMP/b" "{rows: 1048576, cols: 1048576}" "{rows: 2147483647, cols: 2147483647}"
BIG=$TMP/b/softmax

refused() { # refused NAME WORKLOAD PATTERN: eval of workload WORKLOAD exits 2 saying PATTERN, quickly
	rm -rf "$KSEARCH_CACHE"
	local t0=$SECONDS
	(ulimit -v 16000000; timeout 120 "$KS" eval "$BIG" "$BIG/baseline.c" --quick --no-checks \
		--workloads "$2" --timeout 5 >"$TMP/$1.out" 2>"$TMP/$1.err")
	is "$?" 2 "$1: exit 2"
	grep -q "$3" "$TMP/$1.err"
	ok $? "... saying why ($(tail -c 300 "$TMP/$1.err"))"
	is "$(files_in "$KSEARCH_CACHE/inputs")$(files_in "$KSEARCH_CACHE/reference")" 00 "... with no input or reference file written"
	ok $((SECONDS - t0 > 60)) "... at once ($((SECONDS - t0)) s)"
}
refused "4 TiB a tensor" 0 "workload 0 (rows=1048576 cols=1048576) needs 8.0 TiB for one set of its inputs and outputs, [0-9.]* TiB while it is evaluated (.*); this machine has [0-9.]* GiB of memory: reduce the shape"
refused "rows=cols=2^31-1" 1 "workload 1 (rows=2147483647 cols=2147483647) needs 32.0 EiB for one set of its inputs and outputs.*reduce the shape"

# a search is refused the same way, before its run folder is made
mkdir "$TMP/work"
(cd "$TMP/work" && ulimit -v 16000000 && timeout 120 "$KSA" run "$BIG" --budget 1 --workloads 0 >/dev/null 2>"$TMP/run.err")
is "$?" 2 "ksearch run of the task: exit 2"
grep -q "needs 8.0 TiB" "$TMP/run.err" && [ -z "$(ls -A "$TMP/work")" ]
ok $? "... saying why, nothing written ($(tail -c 200 "$TMP/run.err"))"

# --- the cache's disk: 16 MiB inputs and outputs, of 3 correctness seeds, 1 or 2 seeds of
# the timed sets (as many sets as this machine's cache size gives) and a fresh one, and the
# inputs of 2 probes: 192 to 224 MiB of files
copy_task tests/fixtures/eval/scale "$TMP/m" "{n: 4194304}"
MID=$TMP/m/scale
if ! unshare -m true 2>/dev/null; then
	skip_rest "no mount namespace here (needs root) for a small file system"
fi
on_tmpfs() { # on_tmpfs SIZE OUT ERR: evaluate $MID with the cache on a tmpfs of SIZE
	unshare -m bash -c 'mount -t tmpfs -o size=$1 none "$KSEARCH_CACHE" || exit 99
		"$0" eval "$2" "$2/baseline.c" --quick --no-checks --timeout 10 >"$3" 2>"$4"
		rc=$?; echo "$(find "$KSEARCH_CACHE/inputs" "$KSEARCH_CACHE/reference" -type f 2>/dev/null | wc -l)" >"$4.files"
		exit $rc' "$KS" "$1" "$MID" "$2" "$3"
}
rm -rf "$KSEARCH_CACHE" && mkdir -p "$KSEARCH_CACHE"
on_tmpfs 40m "$TMP/small.out" "$TMP/small.err"
rc=$?
[ $rc -eq 99 ] && skip_rest "tmpfs cannot be mounted here"
is "$rc" 2 "the cache on a 40 MiB file system: exit 2"
# "INPUTS REFERENCES MIB": 16 MiB a file
seeds=$(sed -n "s/.*workload 0 (n=4194304) needs \([0-9]*\)\.0 MiB of input and reference files under '.*' (the inputs of \([0-9]*\) seeds, the expected outputs of \([0-9]*\)), which has [0-9.]* MiB free.*/\2 \3 \1/p" "$TMP/small.err")
set -- ${seeds:-0 0 -1}
[ "$3" = $((16 * ($1 + $2))) ]
ok $? "... saying what the files need ($3 MiB: the inputs of $1 seeds, the outputs of $2) and what is free ($(tail -c 300 "$TMP/small.err"))"
is "$(cat "$TMP/small.err.files")" 0 "... with no input or reference file written"
on_tmpfs 400m "$TMP/room.out" "$TMP/room.err"
is "$?" 0 "on a 400 MiB file system the same workload is evaluated ($(tail -c 200 "$TMP/room.err"))"
is "$(cat "$TMP/room.err.files")" $(($1 + $2)) "... its $1 input and $2 reference files written"

done_testing
