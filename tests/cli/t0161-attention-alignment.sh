#!/usr/bin/env bash
# needs: a C compiler; no GPU.
# The attention task's checks pin down its GQA and kv_seqlen semantics: a kernel that aligns
# the causal mask bottom-right (MLX's and flash-attn's "causal") or maps query heads to kv
# heads by h % kv_heads passes every check where the lengths or the heads agree, and is
# INCORRECT_NUMERICAL on the checks where they do not; the same kernel with the task's
# semantics (top-left, h / (heads / kv_heads)) passes them all.
. "$(dirname "$0")/lib.sh"
A=$ROOT/tasks/attention
F=$ROOT/tests/fixtures/attention/alignment.c

status() { # status [eval args]: the overall status of the fixture (checks only)
	"$KS" eval "$A" "$F" --json --quick --no-baseline --workloads 0 "$@" >"$TMP/k.json" \
		2>"$TMP/k.err"
	json_get "$TMP/k.json" 'd["status"]' 2>/dev/null || echo "NO_JSON"
}
failed() { # the checks that did not pass, space separated, in the task's order
	json_get "$TMP/k.json" \
		'" ".join(w["name"] for w in d["checks"] if w["status"] != "PASSED")' 2>/dev/null
}

st=$(status)
is "$st" PASSED "top-left causal and h / (heads / kv_heads) pass every check"
[ "$st" = PASSED ] || head -c 1500 "$TMP/k.err" | sed 's/^/# /'

st=$(status --define ALIGN=1)
is "$st" INCORRECT_NUMERICAL "a bottom-right causal mask fails"
f=$(failed)
echo "# failed: $f"
case " $f " in *" kv-longer-causal "*) r=0 ;; *) r=1 ;; esac
ok $r "... on kv-longer-causal (keys past seqlen become visible)"
case " $f " in *" kv-shorter-causal "*) r=0 ;; *) r=1 ;; esac
ok $r "... and on kv-shorter-causal (the first rows lose every key)"
r=0
for c in $f; do case $c in *kv-longer-causal | *kv-shorter-causal) ;; *) r=1 ;; esac; done
ok $r "... and only where seqlen != kv_seqlen under the mask"

st=$(status --define KVMAP=1)
is "$st" INCORRECT_NUMERICAL "query head h reading kv head h % kv_heads fails"
f=$(failed)
echo "# failed: $f"
case " $f " in *" gqa-ragged "*) r=0 ;; *) r=1 ;; esac
ok $r "... on gqa-ragged (6 query heads on 2 kv heads)"
r=0
for c in $f; do case $c in gqa-ragged | assert:gqa) ;; *) r=1 ;; esac; done
ok $r "... and only where 1 < kv_heads < heads"
done_testing
