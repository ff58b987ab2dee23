#!/usr/bin/env bash
# needs: a C compiler with OpenMP (as the cpu backend does); no GPU.
# tasks/selective_scan_nogate (selective_scan with z=None) runs selective_scan's files with
# SS_GATE 0 through '// @ksearch include:': its baseline passes on cpu, and a kernel that
# still applies a silu gate (u standing in for the absent z) fails it.
. "$(dirname "$0")/lib.sh"

N=$ROOT/tasks/selective_scan_nogate
status() { # status FILE
	"$KS" eval "$N" "$1" --json --quick --no-baseline >"$TMP/k.json" 2>"$TMP/k.err"
	json_get "$TMP/k.json" 'd["status"]' 2>/dev/null || echo "NO_JSON"
}
is "$(status "$N/baseline.c")" PASSED "nogate baseline.c passes"
{ echo '#define SS_GATE 0'
  sed 's|acc += D\[d\] \* ut;|acc += D[d] * ut; acc *= ut / (1.0f + expf(-ut));|' \
	"$ROOT/tasks/selective_scan/baseline.c"; } >"$TMP/gated.c"
grep -q 'expf(-ut)' "$TMP/gated.c"
ok $? "gated kernel made"
st=$(status "$TMP/gated.c")
[ "$st" != PASSED ] && [ "$st" != NO_JSON ]
ok $? "a kernel that still gates fails the nogate task ($st)"
done_testing
