#!/bin/bash
# Diagnose which sandbox layer stops a GPU driver: run the cuda runner by hand with layers
# switched off (KSEARCH_SANDBOX_SKIP) and refused opens printed (KSEARCH_SANDBOX_TRACE).
export KSEARCH_HOME=$PWD KSEARCH_CACHE=/tmp/kc
B=${BUILD:-build-dev}
$B/ksearch eval tests/fixtures/eval/scale tests/fixtures/hostile_cuda/correct.cu --backend cuda --quick --no-sandbox --spec none >/dev/null 2>&1
SO=$(ls -t /tmp/kc/kernels/*/*/kernel.so | head -1)
mkdir -p /tmp/scr
printf "hello\nsandbox /tmp/scr\nload $SO\ntensor 0 f32 1000 0 0 0 1 5\ntensor 1 f32 1000 1 5 0 0 0\nparams 1 1000\nalloc 1\nfill 0 1\ncall 0\nquit\n" > /tmp/cmds
truncate -s 4000 /tmp/outf
for v in none seccomp landlock; do
  TMPDIR=/tmp/scr HOME=/tmp/scr KSEARCH_SANDBOX_TRACE=1 KSEARCH_SANDBOX_SKIP=$v $B/ksearch-runner-cuda 3</tmp/cmds 4>/tmp/rep 5<>/tmp/outf 2>/tmp/err
  echo "skip=$v rc=$? $(tr '\n' '|' </tmp/rep | cut -c1-160)"; sort -u /tmp/err | head -40
done
