#!/bin/bash
# Diagnose which sandbox layer stops a GPU driver: run the cuda runner by hand with layers
# switched off (KSEARCH_SANDBOX_SKIP)
# and refused opens printed (KSEARCH_SANDBOX_TRACE).  With
# STRACE=/path/to/strace, the Landlock-only case is also traced and every failing syscall
# printed, which names the path or device the driver was refused.
export KSEARCH_HOME=$PWD KSEARCH_CACHE=${KSEARCH_CACHE:-/tmp/kc}
B=${BUILD:-build-dev}
$B/ksearch eval tests/fixtures/eval/scale tests/fixtures/hostile_cuda/correct.cu --backend cuda --quick --no-sandbox --spec none >/dev/null 2>&1
SO=$(ls -t "$KSEARCH_CACHE"/kernels/*/*/kernel.so | head -1)
mkdir -p /tmp/scr
printf "hello\nsandbox /tmp/scr\nload $SO\ntensor 0 f32 1000 0 0 0 1 5\ntensor 1 f32 1000 1 5 0 0 0\nparams 1 1000\nalloc 1\nfill 0 1\ncall 0\nquit\n" > /tmp/cmds
truncate -s 4000 /tmp/outf
probe() { # $1 = label, rest = command prefix
	local label=$1; shift
	TMPDIR=/tmp/scr HOME=/tmp/scr KSEARCH_SANDBOX_TRACE=1 "$@" $B/ksearch-runner-cuda 3</tmp/cmds 4>/tmp/rep 5<>/tmp/outf 2>/tmp/err
	echo "$label rc=$? $(tr '\n' '|' </tmp/rep | cut -c1-200)"; sort -u /tmp/err | head -40
}
probe "landlock+seccomp" env
probe "landlock only" env KSEARCH_SANDBOX_SKIP=seccomp
probe "seccomp only" env KSEARCH_SANDBOX_SKIP=landlock
if [ -n "${STRACE:-}" ]; then
	echo "== failing syscalls under Landlock (strace -f -Z)"
	TMPDIR=/tmp/scr HOME=/tmp/scr KSEARCH_SANDBOX_SKIP=seccomp \
		"$STRACE" -f -Z -o /tmp/strace.txt $B/ksearch-runner-cuda 3</tmp/cmds 4>/tmp/rep 5<>/tmp/outf 2>/tmp/err
	echo "rc=$? $(tr '\n' '|' </tmp/rep | cut -c1-200)"
	grep -v -E "ENOENT|EAGAIN|ETIMEDOUT|restart_syscall" /tmp/strace.txt | sed 's/^[0-9]* //' | sort | uniq -c | sort -rn | head -40
	echo "-- ENOENT (first 30)"; grep ENOENT /tmp/strace.txt | sed 's/^[0-9]* //' | sort -u | head -30
fi
