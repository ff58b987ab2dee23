#!/usr/bin/env bash
# needs: cc and make
# ksearch export and eval of a knob template with --define: the names and values are
# checked against the template's knobs, the exported header carries the knob values as
# #defines (as an export of a run does), and --out DIR/ prints one slash.
. "$(dirname "$0")/lib.sh"
T=$ROOT/tasks/softmax/templates/cpu/online.c
cd "$TMP" || exit 1

"$KS" export "$T" --task softmax --define VEC=8 --to c --out found/ >out.txt 2>err.txt
is "$?" 0 "export online.c --define VEC=8: exit 0"
grep -q '^#define SOFTMAX_VEC 8$' found/softmax.h
ok $? "softmax.h: #define SOFTMAX_VEC 8 (the --define value)"
grep -q '^#define SOFTMAX_UNROLL 2$' found/softmax.h
ok $? "softmax.h: #define SOFTMAX_UNROLL 2 (the default)"
is "$(grep -c '^#define SOFTMAX_' found/softmax.h)" 5 "softmax.h: one #define per knob"
grep -q '^wrote found/ (' err.txt && ! grep -q 'found//' err.txt
ok $? "--out found/: 'wrote found/' ($(head -c 120 err.txt))"
make -s -C found >/dev/null 2>make.err
ok $? "the export builds ($(head -c 200 make.err))"

"$KS" export "$T" --task softmax --define VEC=7 --to c --out x >out.txt 2>err.txt
is "$?" 2 "--define VEC=7: exit 2"
grep -q "knob 'VEC'.*takes 4, 8, 16; got '7'" err.txt
ok $? "--define VEC=7: lists the values ($(head -c 200 err.txt))"
"$KS" export "$T" --task softmax --define VEC=8,FOO=1 --to c --out x >out.txt 2>err.txt
is "$?" 2 "--define FOO=1: exit 2"
grep -q "no knob 'FOO' (its knobs: VEC, UNROLL, ROWS, STREAM, THREADS)" err.txt
ok $? "--define FOO=1: names the template's knobs ($(head -c 200 err.txt))"
"$KS" export "$T" --task softmax --define VECC=8 --to c --out x >out.txt 2>err.txt
grep -q "did you mean 'VEC'" err.txt
ok $? "--define VECC=8: did you mean 'VEC' ($(head -c 200 err.txt))"
! test -e x
ok $? "nothing written on a bad --define"
"$KS" export "$ROOT/tasks/softmax/baseline.c" --task softmax --define VEC=8 --to c --out x \
	>out.txt 2>err.txt
is "$?" 2 "--define on a file without knobs: exit 2"
grep -q "not a knob template" err.txt
ok $? "--define on a file without knobs: says so ($(head -c 200 err.txt))"

"$KS" eval softmax "$T" --define VEC=7 --quick >out.txt 2>err.txt
is "$?" 2 "eval --define VEC=7: exit 2"
grep -q "takes 4, 8, 16; got '7'" err.txt && ! grep -q evaluating err.txt
ok $? "eval --define VEC=7: lists the values before evaluating ($(head -c 200 err.txt))"
"$KS" eval softmax "$T" --define FOO=1 --quick >out.txt 2>err.txt
is "$?" 2 "eval --define FOO=1: exit 2"

done_testing
