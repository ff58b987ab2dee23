#!/usr/bin/env bash
# needs: a C compiler with OpenMP (as the cpu backend does); no GPU.
# tasks/selective_scan_nogate (selective_scan with z=None) runs selective_scan's files with
# SS_GATE 0 through '// @ksearch include:': its baseline and CPU templates pass on cpu (the
# templates' knobs come from the included files), and a kernel that still applies a silu gate
# (u standing in for the absent z) fails it.
. "$(dirname "$0")/lib.sh"

N=$ROOT/tasks/selective_scan_nogate
status() { eval_status k "$N" "$1" --quick --no-baseline; } # status FILE
is "$(status "$N/baseline.c")" PASSED "nogate baseline.c passes"
# the CPU templates are wrappers too: they pass, and their knobs are read from the included text
for f in "$N"/templates/cpu/*.c; do
	grep -q '^// @ksearch include: ../../../selective_scan/templates/cpu/' "$f"
	ok $? "${f#$ROOT/} is a wrapper"
	is "$(status "$f")" PASSED "nogate ${f#$N/} passes"
done
"$KS" tasks show "$N" >"$TMP/ng.txt" 2>&1 && "$KS" tasks show "$ROOT/tasks/selective_scan" >"$TMP/g.txt" 2>&1
ok $? "tasks show both"
knobs() { sed -n '/^knob templates/,/^$/p' "$1"; }
[ -n "$(knobs "$TMP/ng.txt")" ] && [ "$(knobs "$TMP/ng.txt")" = "$(knobs "$TMP/g.txt")" ]
ok $? "the nogate CPU templates list selective_scan's families and knobs"
{ echo '#define SS_GATE 0'
  echo '#define SS_FN selective_scan_nogate'
  sed 's|acc += D\[d\] \* ut;|acc += D[d] * ut; acc *= ut / (1.0f + expf(-ut));|' \
	"$ROOT/tasks/selective_scan/baseline.c"; } >"$TMP/gated.c"
grep -q 'expf(-ut)' "$TMP/gated.c"
ok $? "gated kernel made"
# it compiles (SS_FN names the entry) and its numbers are wrong
is "$(status "$TMP/gated.c")" INCORRECT_NUMERICAL "a kernel that still gates fails the nogate task"
done_testing
