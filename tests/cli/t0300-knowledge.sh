#!/bin/bash
# ksearch spec list/show/detect and ksearch translate against the shipped knowledge base
# and the CUDA fixture corpus (tests/fixtures/cuda).
# needs: nothing (no GPU, no network); spec detect runs a ~1 s micro-benchmark
set -u
KS="${KS_BIN:?KS_BIN must point at the build directory}/ksearch"
SRC="${KSEARCH_HOME:-$(pwd)}"
export KSEARCH_HOME="$SRC"
CU="$SRC/tests/fixtures/cuda"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0 n=0

check() { # check NAME COND...
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		fails=$((fails + 1))
	fi
}
has() { grep -qF -- "$1" "$2"; }
lacks() { ! grep -qF -- "$1" "$2"; }
run() { # run WANT_RC ARGS... (stdout in $TMP/out, stderr in $TMP/err)
	local want=$1
	shift
	timeout 60 "$KS" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	[ "$rc" = "$want" ] || { echo "# '$*' exited $rc, expected $want"; cat "$TMP/err"; return 1; }
}
json() { # json EXPR: evaluate a python expression over d = the JSON in $TMP/out
	python3 -c "import json,sys; d=json.load(open('$TMP/out')); sys.exit(0 if ($1) else 1)"
}

# ---- spec ---------------------------------------------------------------------------
check "spec list exits 0" run 0 spec list
check "list shows m3-max with bandwidth and smem" \
	grep -qE '^m3-max +gpu +Apple M3 Max \(40-core GPU\) +400 GB/s +14\.1 TFLOPS f32 +32 KiB smem$' "$TMP/out"
check "list shows h100 with 48 KiB default smem" grep -qE '^h100 +gpu .* 3350 GB/s .* 48 KiB smem$' "$TMP/out"
check "list shows the x86-64 template" grep -qE '^x86-64 +cpu .*template' "$TMP/out"
check "list has 20 specs" bash -c "[ \$(wc -l <'$TMP/out') -eq 20 ]"

check "spec show m3-max exits 0" run 0 spec show m3-max
check "text shows threadgroup memory with its source" \
	has "smem_per_block: 32 KiB [documented: Apple Metal Feature Set Tables" "$TMP/out"
check "text labels estimates" has "peak_gflops_f32: 14.1 TFLOPS [estimated:" "$TMP/out"

check "spec show m3-max --json exits 0" run 0 spec show m3-max --json
check "json: name, kind, vendor" json "d['name']=='m3-max' and d['kind']=='gpu' and d['vendor']=='apple'"
check "json: smem_per_block 32768 B documented" \
	json "d['fields']['smem_per_block']['value']==32768 and d['fields']['smem_per_block']['unit']=='B' and d['fields']['smem_per_block']['basis']=='documented'"
check "json: simd 32, 1024 threads, 400 GB/s, 40 cores" \
	json "[d['fields'][k]['value'] for k in ('simd_width','max_threads_per_group','mem_bandwidth_gbps','cores')]==[32,1024,400,40]"
check "json: every field has a source and a basis" \
	json "all(f['source'] and f['basis'] in ('documented','derived','estimated','measured','detected') for f in d['fields'].values())"
check "json: estimates carry a note" \
	json "all('note' in f for f in d['fields'].values() if f['basis'] in ('derived','estimated'))"
check "json: no fp64, simdgroup_matrix" \
	json "'fp64' not in d['fields']['features']['value'] and 'simdgroup_matrix' in d['fields']['features']['value']"

check "unknown spec exits 2" run 2 spec show no-such-gpu
check "unknown spec message" has "unknown spec 'no-such-gpu'" "$TMP/err"
check "broken spec file names file:line:col" run 2 spec show "$SRC/tests/fixtures/knowledge/specs/bad-unit.yaml"
check "broken spec message" has "bad-unit.yaml:12:37: field 'smem_per_block': unit 'KB'" "$TMP/err"

check "spec detect --json --save exits 0" run 0 spec detect --json --save "$TMP/myhost.yaml"
check "detect: cpu with sane simd width and cores" \
	json "d['kind']=='cpu' and d['fields']['simd_width']['value'] in (4,8,16) and d['fields']['cores']['value']>=1"
check "detect: measured bandwidth and FMA rate" \
	json "d['fields']['mem_bandwidth_gbps']['basis']=='measured' and 0.1<d['fields']['mem_bandwidth_gbps']['value']<10000 and d['fields']['peak_gflops_f32']['value']>0.1"
check "saved spec loads back" run 0 spec show "$TMP/myhost.yaml"
check "saved spec is named after the file" has "Hardware spec myhost:" "$TMP/out"

# ---- translate ---------------------------------------------------------------------------
check "48 KB kernel on m3-max exits 1" run 1 translate "$CU/smem48k.cu" --to metal --spec m3-max
check "48 KB tile flagged at its line" has "ERROR line 10 [smem_per_block]: kernel 'big_tile' declares 48 KiB of static __shared__ (tile 48 KiB) > 32 KiB" "$TMP/out"
check "double flagged" has "[fp64]: double precision in device code" "$TMP/out"
check "wgmma flagged" has "Warpgroup MMA (wgmma.mma_async, Hopper sm_90a) has no equivalent on metal" "$TMP/out"
check "ratios against h100" has "m3-max has 0.119x the memory bandwidth of h100 (400 vs 3350 GB/s)" "$TMP/out"
check "__shared__ maps to threadgroup memory" has '-> `threadgroup T name[N];`' "$TMP/out"
check "__syncthreads maps to threadgroup_barrier" has "-> threadgroup_barrier(mem_flags::mem_threadgroup)" "$TMP/out"
check "hints included" has "## Threadgroup tiling within 32 KB" "$TMP/out"

check "same kernel against h100 limits exits 1 (wgmma only)" run 1 translate "$CU/smem48k.cu" --to metal --spec h100
check "h100: no shared-memory error" lacks "ERROR line 10 [smem_per_block]" "$TMP/out"

check "tiled matmul fits m3-max" run 0 translate "$CU/tiled_matmul.cu" --to metal
: >"$TMP/empty.cu"
check "translate of a file without a kernel still exits 0" run 0 translate "$TMP/empty.cu" --to metal
check "with a note that it has no __global__ kernel" has "defines no __global__ kernel" "$TMP/err"
check "no such note for a real kernel" run 0 translate "$CU/tiled_matmul.cu" --to metal
check "... (none)" lacks "no __global__ kernel" "$TMP/err"
check "tiled matmul: usage of 32 KiB reported" has "fits the 32 KiB of m3-max (26%)" "$TMP/out"

check "warp softmax --json" run 0 translate "$CU/softmax_warp.cu" --to metal --json
check "json: shuffles at lines 7, 14, 15" \
	json "[u['lines'] for u in d['uses'] if u['concept']=='warp_shuffle']==[[7,14,15]]"
check "json: shuffle maps to simd_shuffle_xor" \
	json "any('simd_shuffle_xor' in u['equivalent'] for u in d['uses'] if u['concept']=='warp_shuffle')"
check "json: no errors, ratios present" json "d['errors']==0 and abs(d['ratios']['bandwidth']-400/3350)<1e-6"

check "histogram: 2048 threads per block exits 1" run 1 translate "$CU/histogram_atomics.cu" --to metal
check "histogram: thread limit" has "launch of 'histogram' with 2048 threads per block > 1024 threads per group on m3-max" "$TMP/out"
check "histogram on cpu exits 0" run 0 translate "$CU/histogram_atomics.cu" --to cpu
check "cpu: atomics privatised" has "private copies" "$TMP/out"
check "cp.async on opencl" run 0 translate "$CU/cp_async_pipeline.cu" --to opencl --from-spec none
check "opencl: async_work_group_copy" has "async_work_group_copy" "$TMP/out"

check "missing --to exits 2" run 2 translate "$CU/smem48k.cu"
check "unknown target exits 2" run 2 translate "$CU/smem48k.cu" --to vulkan
check "unknown target message" has "unknown target 'vulkan'" "$TMP/err"
check "missing file exits 2" run 2 translate "$TMP/none.cu" --to metal

echo "1..$n"
[ "$fails" -eq 0 ]
