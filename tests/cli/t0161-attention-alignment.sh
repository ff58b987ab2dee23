#!/usr/bin/env bash
# needs: a C compiler; no GPU.
# The attention task's checks pin down its GQA and kv_seqlen semantics: a kernel that aligns
# the causal mask bottom-right (MLX's and flash-attn's "causal") or maps query heads to kv
# heads by h % kv_heads passes every check where the lengths or the heads agree, and is
# INCORRECT_NUMERICAL on the first check where they do not; the same kernel with the task's
# semantics (top-left, h / (heads / kv_heads)) passes them all.  eval stops at the first
# failure (the later checks say "not run"), so a check further on is tested in a copy of the
# task that has only it.
. "$(dirname "$0")/lib.sh"
A=$ROOT/tasks/attention
F=$ROOT/tests/fixtures/attention/alignment.c

status() { # status TASK_DIR [eval args]: the overall status of the fixture
	local dir=$1
	shift
	eval_status k "$dir" "$F" --quick --no-baseline --workloads 0 "$@"
}
failed() { # the checks that ran and did not pass
	json_get "$TMP/k.json" '" ".join(w["name"] for w in d["checks"] + d["workloads"]
		if w["status"] != "PASSED" and not w["log"].startswith("not run"))' 2>/dev/null
}
only() { # only CHECK: a copy of the task whose only own check is CHECK; prints its folder
	mkdir -p "$TMP/$1" && cp -r "$A" "$TMP/$1/" &&
		python3 - "$TMP/$1/attention/task.yaml" "$1" <<'PY'
import sys
path, name = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\n")
at = lines.index("checks:")
keep = [l for l in lines[at + 1:] if l.startswith("  - {name: %s," % name)]
open(path, "w").write("\n".join(lines[:at + 1] + keep) + "\n")
PY
	echo "$TMP/$1/attention"
}

st=$(status "$A")
is "$st" PASSED "top-left causal and h / (heads / kv_heads) pass every check"
[ "$st" = PASSED ] || head -c 1500 "$TMP/k.err" | sed 's/^/# /'

st=$(status "$A" --define ALIGN=1)
is "$st" INCORRECT_NUMERICAL "a bottom-right causal mask fails"
is "$(failed)" kv-longer-causal \
	"... first on kv-longer-causal (keys past seqlen become visible); every check before it, causal ones with seqlen = kv_seqlen and GQA ones, passed"
st=$(status "$(only kv-shorter-causal)" --define ALIGN=1)
is "$st/$(failed)" INCORRECT_NUMERICAL/kv-shorter-causal \
	"... and on kv-shorter-causal (the first rows lose every key)"

st=$(status "$A" --define KVMAP=1)
is "$st" INCORRECT_NUMERICAL "query head h reading kv head h % kv_heads fails"
is "$(failed)" gqa-ragged "... first on gqa-ragged (6 query heads on 2 kv heads)"
done_testing
