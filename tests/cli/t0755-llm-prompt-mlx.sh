#!/usr/bin/env bash
# What an MLX prompt tells a model is true and enough to write a kernel file that runs (the
# findings of a model given the MLX prompts, issue 40):
#   - the reply format of every code prompt describes the .mlx file (layout top to bottom,
#     the @ksearch block, a '#define NAME VALUE' per knob above '// @mlx header'), not the C
#     form's "includes, helpers and the entry point"; the action prompt says how a knob gets
#     its value in a .mlx file, the cpu prompt the C way;
#   - the format gives the expression language of the values and where template args are
#     visible; flavour cuda gives NVRTC's integer types, headers and shared memory past 48 KB;
#   - a kernel written by those rules compiles under NVRTC as MLX compiles it: fixed-width
#     integer types in the header and the body, dynamic shared memory above 48 KB, and the
#     task's own template written with #define lines for its knobs (needs NVRTC and MLX's
#     device headers: KS_MLX_SRC=an MLX source checkout; skipped without them).
# needs: python3 (NVRTC and KS_MLX_SRC for the last part)
. "$(dirname "$0")/lib.sh"

# ---- the reply format and the knob paragraph --------------------------------------------
for t in softmax matmul selective_scan attention; do
	for f in cuda metal; do
		for p in action debug improve repeat direct; do
			"$KS" prompt $t --backend mlx --flavour $f --purpose $p >"$TMP/$t-$f-$p" 2>"$TMP/err" ||
				{ cat "$TMP/err"; false; }
		done
	done
done
ok $? "every code prompt renders for the four MLX tasks in both flavours"
bad=""
for f in "$TMP"/*-*-*; do
	sed -n '/^## Reply format/,$p' "$f" | tr '\n' ' ' >"$TMP/reply"
	grep -q "the whole .mlx kernel file in the format the Task section describes, top to bottom" "$TMP/reply" &&
		grep -q "one '#define NAME VALUE' line per knob" "$TMP/reply" &&
		! grep -q "includes, helpers and the entry point" "$TMP/reply" || bad="$bad $(basename "$f")"
done
is "$bad" "" "each reply format describes the .mlx file, none the C form"
grep -q "a '#define BLOCK 128' line above '// @mlx header' gives the value the file runs with" \
	"$TMP/softmax-cuda-action" && ! grep -q "in C and CUDA: #ifndef" "$TMP/softmax-cuda-action"
ok $? "the action prompt says how a knob gets its value in a .mlx file"
"$KS" prompt softmax --purpose action >"$TMP/cpu" 2>/dev/null
sed -n '/^## Reply format/,$p' "$TMP/cpu" | tr '\n' ' ' | grep -q "includes, helpers and the entry point with exactly the prototype" &&
	grep -q "#ifndef BLOCK / #define BLOCK 128 / #endif" "$TMP/cpu"
ok $? "... and the cpu prompt the C form"

python3 - "$TMP" "$ROOT/prompts" <<'PYEOF'
import glob, os, re, sys
bad = []
for f in glob.glob(sys.argv[1] + "/*-*-*"):
    purpose = f.rsplit("-", 1)[1]
    want = [l for l in open("%s/%s.txt" % (sys.argv[2], purpose)).read().split("\n") if l.startswith("## ")]
    got, fenced = [], False
    for l in open(f).read().split("\n"):
        if l.startswith("```"):
            fenced = not fenced
        elif not fenced and l.startswith("## "):
            got.append(l)
    # a template heading with a placeholder matches up to it
    pre = [re.split(r"\{\{", w)[0] for w in want]
    if len(got) != len(want) or any(not g.startswith(p) for g, p in zip(got, pre)):
        bad.append("%s: %s" % (os.path.basename(f), got))
assert not bad, bad[:2]
PYEOF
ok $? "every prompt's sections are its template's (no document inside starts one)"

# ---- the format's rules --------------------------------------------------------------------
c=$TMP/selective_scan-cuda-action m=$TMP/selective_scan-metal-action
grep -q "expressions: numbers, names, + - \* / % (integer / and % truncate as in C)" "$c" &&
	grep -q "No bitwise & | ^ ~, casts or sizeof" "$c" &&
	grep -q "flavour metal launches exactly grid threads" "$c"
ok $? "the values' expression language and how grid and threadgroup launch"
grep -q "int8_t to uint64_t, size_t and" "$c" && grep -q "MLX raises the kernel's limit itself" "$c" &&
	! grep -q "int8_t to uint64_t" "$m" && grep -q "Threadgroup memory (flavour metal)" "$m"
ok $? "NVRTC's types and shared memory past 48 KB for flavour cuda only"
grep -q "^    ITEMS: {values: \[4, 8, 16, 32\], default: 8, summary: \"consecutive steps per lane" "$c"
ok $? "the example's knobs are explained (its @ksearch block shown)"

# ---- under NVRTC as MLX compiles a kernel ---------------------------------------------------
CUDA=${CUDA_HOME:-/usr/local/cuda}
if [ ! -e "$CUDA/lib64/libnvrtc.so" ] || [ ! -e "${KS_MLX_SRC:-/nonexistent}/mlx/backend/cuda/device/utils.cuh" ]; then
	skip_rest "NVRTC ($CUDA/lib64/libnvrtc.so) or MLX's device headers (KS_MLX_SRC) are missing"
fi
nvrtc() { # nvrtc TASK FILE PARAMS: compile as MLX does, print NVRTC's verdict
	python3 "$ROOT/bench/mlx/nvrtc_check.py" --mlx-src "$KS_MLX_SRC" --cuda "$CUDA" \
		--task-dir "$ROOT/tasks/$1" "$2" --params "$3" 2>&1 | tail -3
}
cat >"$TMP/types.mlx" <<'EOF'
/* @ksearch
family: types-and-smem
knobs:
  TPB: {values: [128, 256], default: 256, summary: "threads per block"}
@end */
#define TPB 256
// @mlx flavour: cuda
// @mlx grid: ceil_div(rows, 1) * TPB, 1, 1
// @mlx threadgroup: TPB, 1, 1
// @mlx shared_memory: 64 * 1024
// @mlx init: none
// @mlx header
template <int N>
__device__ __forceinline__ uint64_t ks_mix(int64_t a, uint32_t b, size_t c, uintptr_t d, int8_t e)
{
	return (uint64_t)(a + b + c + d + e) * N;
}
// @mlx body
extern __shared__ __align__(16) unsigned char smem[];
float *row = reinterpret_cast<float *>(smem);
const int64_t r = blockIdx.x;
for (uint32_t i = threadIdx.x; i < (uint32_t)cols; i += TPB)
	row[i] = x[r * cols + i] + (float)(ks_mix<TPB>(r, i, 0, 0, 0) & 0);
__syncthreads();
for (uint32_t i = threadIdx.x; i < (uint32_t)cols; i += TPB)
	y[r * cols + i] = row[i];
EOF
out=$(nvrtc softmax "$TMP/types.mlx" rows=4,cols=1000)
echo "$out" | grep -q "^compiled custom_kernel_softmax"
ok $? "fixed-width integer types in header and body, 64 KB of dynamic shared memory: compiles ($out)"
python3 - "$ROOT/tasks/selective_scan/templates/mlx/state_scan.cuda.mlx" "$TMP/model.mlx" <<'EOF'
import re, sys
src = open(sys.argv[1]).read()
block = src[:src.index("@end */") + len("@end */\n")]
defines = "".join("#define %s %s\n" % kv for kv in re.findall(r"^  (\w+): \{values: \[[^]]*\], default: (\w+)", block, re.M))
open(sys.argv[2], "w").write(block + defines + src[len(block):])
EOF
out=$(nvrtc selective_scan "$TMP/model.mlx" batch=1,dim=256,seqlen=512,dstate=16)
echo "$out" | grep -q "^compiled custom_kernel_selective_scan"
ok $? "the task's template written as a model is told (#define per knob) compiles ($out)"
sed 's|^// @mlx header$|// @mlx header\n#include <stdint.h>|' "$TMP/types.mlx" >"$TMP/inc.mlx"
! nvrtc softmax "$TMP/inc.mlx" rows=4,cols=1000 | grep -q "^compiled"
ok $? "... and a system #include does not, as the prompt says"

done_testing
