#!/usr/bin/env bash
# needs: an NVIDIA GPU with MLX's CUDA build (pip install "mlx[cuda13]"; bench/mlx/gpu_env.sh
# for one unpacked by hand); reports "Skipped" elsewhere.
# The mlx backend's hostile catalogue (tests/fixtures/hostile_mlx): each kernel gets its
# status, and the good kernel evaluated after each still passes.
. "$(dirname "$0")/lib.sh"
BIN=$(cd "$(dirname "$KS")" && pwd)
H=$ROOT/tests/fixtures/hostile_mlx

[ -x "$BIN/ksearch-runner-mlx" ] || skip_rest "ksearch was built without MLX"
probe=$("$BIN/ksearch-runner-mlx" --probe 2>&1)
case "$probe" in
*cuda=1*) ok 0 "ksearch-runner-mlx --probe: $probe" ;;
*) skip_rest "this MLX has no usable CUDA backend ($probe)" ;;
esac

status_of() { # status_of KERNEL
	eval_status "$1" softmax "$H/$1.mlx" --backend mlx --quick --workloads 0 --timeout 10
}
expect() { # expect KERNEL STATUS
	local got
	got=$(status_of "$1")
	is "$got" "$2" "$1.mlx -> $2"
	if [ "$got" != "$2" ]; then
		json_get "$TMP/$1.json" '[d["compile_log"]] + [w["log"] for w in d["checks"]+d["workloads"] if w["log"]]' \
			2>/dev/null | head -c 1500 | sed 's/^/# /'
		head -c 1000 "$TMP/$1.err" | sed 's/^/# /'
	fi
	is "$(status_of good)" PASSED "good.mlx after $1.mlx -> PASSED"
}
expect good PASSED
expect oob_write RUNTIME_ERROR
expect hang TIMEOUT
expect partial_write INCORRECT_NUMERICAL
expect compile_error COMPILE_ERROR
grep -q "thread_position_in_grid" "$TMP/compile_error.json"
ok $? "the compile error carries NVRTC's log"
expect first_call_only INCORRECT_NUMERICAL
done_testing
