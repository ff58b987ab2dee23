#!/usr/bin/env bash
# ksearch prompt prints what a run with a model sends, and the context follows the target:
# CPU prompts carry the CPU's facts (cores, SIMD lanes, caches, bandwidth, the OpenMP threads
# in force) and no CUDA concept map; MLX prompts describe the // @mlx body-and-launch format of
# the flavour in force with a worked example from the task's templates, start from the task's
# naive MLX kernel (not MLX's own op) and carry the task's highest-rated CUDA kernel that fits with its
# translation (the concept map only for Metal); the ABI text is the one `tasks show` prints.
# The naive MLX kernels themselves: every Metal one passes on the CPU through
# bench/mlx/metal_cpu.py, every CUDA one compiles with nvcc inside the signature MLX writes.
# needs: python3 (g++ with C++20 and the CUDA compiler for the last parts, skipped without)
. "$(dirname "$0")/lib.sh"

# ---- the command ----------------------------------------------------------------------------
"$KS" prompt --help >"$TMP/help" 2>&1
ok $? "prompt --help exits 0"
grep -q "repeat   the last kernel repeated a candidate" "$TMP/help" &&
	grep -q "ksearch prompt attention --backend mlx --flavour cuda" "$TMP/help"
ok $? "... and teaches the purposes with examples"
"$KS" prompt softmax --purpose all --sizes >"$TMP/sizes" 2>"$TMP/sizes.err"
ok $? "every purpose renders for CPU softmax"
is "$(awk '{print $1}' "$TMP/sizes" | tr '\n' ' ')" "init action improve debug repeat edit direct " \
	"... in the order a run asks for them"
"$KS" prompt softmax --purpose tune >/dev/null 2>"$TMP/e1"
is "$?" 2 "an unknown purpose exits 2"
grep -q "unknown purpose 'tune' (init, action, improve, debug, repeat, edit, direct)" "$TMP/e1"
ok $? "... naming the purposes"
"$KS" prompt softmax --flavour metal >/dev/null 2>"$TMP/e2"
is "$?" 2 "a flavour the backend does not write exits 2"
grep -q "flavour 'metal': backend 'cpu' writes c kernels only" "$TMP/e2"
ok $? "... saying what it writes"

# ---- CPU: the CPU's facts, no concept map ---------------------------------------------------
"$KS" prompt softmax --purpose action --threads 1 >"$TMP/cpu" 2>/dev/null
ok $? "the CPU action prompt renders"
grep -q "^PURPOSE: action" "$TMP/cpu" && grep -q "^### system" "$TMP/cpu"
ok $? "... as --policy cmd gets it (### system, ### user, the purpose marker)"
for fact in "cores;" "f32 SIMD lanes;" "L1 " "last-level cache" "memory bandwidth" \
	"OpenMP threads in force: 1 (--threads)"; do
	grep -q "^The kernels run on this CPU: .*$fact" "$TMP/cpu"
	ok $? "CPU fact: $fact"
done
grep -q "^The kernels run on this CPU: .*a thread that waits for a CPU holds up its whole team" "$TMP/cpu"
ok $? "... and what load does to a team of threads"
! grep -q "CUDA concepts on this target\|threadgroup_barrier" "$TMP/cpu"
ok $? "... and no CUDA concept map"
grep -q "^## Reference implementation" "$TMP/cpu" && grep -q "reference.c (the outputs are compared" "$TMP/cpu"
ok $? "... the reference source"
"$KS" tasks show softmax | tail -1 | sed 's/^ *//' >"$TMP/proto"
grep -qxF "$(cat "$TMP/proto")" "$TMP/cpu"
ok $? "... the prototype tasks show prints"
"$KS" prompt softmax --purpose action --context none >"$TMP/none" 2>/dev/null
grep -q "(not shown: --context none)" "$TMP/none" && ! grep -q "OpenMP threads in force" "$TMP/none"
ok $? "--context none leaves the hardware out"

# ---- MLX, CUDA flavour ------------------------------------------------------------------------
"$KS" prompt attention --backend mlx --flavour cuda --purpose action >"$TMP/mc" 2>/dev/null
ok $? "the MLX attention action prompt renders (flavour cuda)"
grep -q "^  // @mlx body                      the rest of the file is the body" "$TMP/mc" &&
	grep -q "Signature MLX generates, flavour cuda" "$TMP/mc" && ! grep -q "flavour metal (" "$TMP/mc"
ok $? "... describes the // @mlx format and the signature of flavour cuda only"
grep -q "^Example (flavour cuda, templates/mlx/.*\.cuda\.mlx: one of this task's templates" "$TMP/mc"
ok $? "... with a worked example of that flavour from the task's templates"
python3 - "$TMP/mc" "$ROOT/tasks/attention/naive.cuda.mlx" <<'EOF'
import sys
p, naive = open(sys.argv[1]).read(), open(sys.argv[2]).read()
parent = p[p.index("## Parent kernel"):]
assert "```cuda\n" + naive in parent, parent[:400]
EOF
ok $? "... starting from the task's naive MLX kernel, fenced as cuda"
grep -q "^### A CUDA kernel of the task: templates/cuda/flash2.cu, rated 8, the highest-rated" "$TMP/mc" &&
	grep -q "^- flash_wgmma.cu, rated 9, .* KB: longer than the prompt shows whole" "$TMP/mc" &&
	grep -q "^From a CUDA kernel to an MLX body of flavour cuda" "$TMP/mc" &&
	grep -q "^### Properties every candidate must keep" "$TMP/mc"
ok $? "... with the highest-rated CUDA kernel that fits (the higher one named, and why not shown), its translation and the assertions"
! grep -q "CUDA concepts on this target" "$TMP/mc"
ok $? "... and no Metal concept map"
"$KS" tasks show attention --backend mlx >"$TMP/show"
grep -qF "$(grep -m1 "@mlx template: NAME = EXPR" "$TMP/mc")" "$TMP/show"
ok $? "the format's text is the one tasks show prints"

# the task's README without its sections on the repository's template files (a model
# cannot open them), and a word on the paths left in it
"$KS" prompt matmul --purpose init >"$TMP/readme" 2>/dev/null
grep -q "^#### Tolerance" "$TMP/readme" && ! grep -q "CPU templates" "$TMP/readme" &&
	grep -q "paths it names (docs/, tests/, templates/) are files you are not" "$TMP/readme"
ok $? "a prompt's README leaves out its template sections and says its paths are not shown"

# ---- MLX, Metal flavour ---------------------------------------------------------------------
"$KS" prompt softmax --backend mlx --flavour metal --purpose action >"$TMP/mm" 2>/dev/null
ok $? "the MLX softmax action prompt renders (flavour metal)"
grep -q "\[\[kernel\]\] void custom_kernel_softmax" "$TMP/mm" &&
	grep -q "^Example (flavour metal, templates/mlx/simd_row.metal.mlx" "$TMP/mm" &&
	grep -q "^### CUDA concepts on this target" "$TMP/mm" &&
	grep -q "^// @mlx flavour: metal" "$TMP/mm"
ok $? "... Metal signature, a Metal example, the concept map and the naive Metal kernel"

# ---- the naive MLX kernels ------------------------------------------------------------------
for t in "$ROOT"/tasks/*/; do
	[ -e "$t/baseline.mlx" ] || continue
	name=$(basename "$t")
	[ -e "$t/naive.cuda.mlx" ] && [ -e "$t/naive.metal.mlx" ]
	ok $? "$name has a naive MLX kernel in both flavours"
done
if command -v nvcc >/dev/null 2>&1; then
	for t in softmax matmul matmul_bf16 selective_scan attention; do
		python3 - "$KS" "$t" "$ROOT/tasks/$t/naive.cuda.mlx" "$TMP/$t.cu" <<'EOF'
import json, subprocess, sys
ks, task, path, out = sys.argv[1:5]
d = json.loads(subprocess.check_output([ks, "tasks", "show", task, "--backend", "mlx", "--json"]))
ct = {"f32": "float", "f16": "__half", "bf16": "__nv_bfloat16", "i32": "int32_t"}
body = open(path).read().split("// @mlx body\n", 1)[1]
args = ["const %s* %s" % (ct[t["dtype"]], t["name"]) for t in d["inputs"]]
args += ["%s* %s" % (ct[t["dtype"]], t["name"]) for t in d["outputs"]]
params = "".join("  constexpr int %s = %d;\n" % kv for kv in d["workloads"][0]["params"].items())
open(out, "w").write("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cstdint>\n"
                     "__global__ void custom_kernel_%s(%s) {\n%s%s\n}\n"
                     % (task, ", ".join(args), params, body))
EOF
		nvcc -arch=sm_90 -c -o "$TMP/$t.o" "$TMP/$t.cu" >"$TMP/$t.nvcc" 2>&1
		ok $? "naive.cuda.mlx of $t compiles with nvcc inside MLX's signature"
	done
else
	skip "the naive CUDA-flavour kernels compile" "no nvcc here"
fi
need_metal_cpu
for t in softmax matmul selective_scan attention; do
	python3 "$ROOT/bench/mlx/metal_cpu.py" "$ROOT/tasks/$t/naive.metal.mlx" --task "$t" \
		--out "$TMP/$t.c" --ksearch "$KS" --eval -- --workloads 0 --quick --no-baseline \
		--no-library --json >"$TMP/$t.json" 2>"$TMP/$t.err"
	is "$(json_get "$TMP/$t.json" 'd["status"]' 2>/dev/null)" PASSED \
		"naive.metal.mlx of $t passes on the CPU (bench/mlx/metal_cpu.py)"
done
skip "naive.metal.mlx of matmul_bf16 on the CPU" "bench/mlx/metal_cpu.py has no bfloat16_t"

done_testing
