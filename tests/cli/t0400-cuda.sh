#!/usr/bin/env bash
# needs: nvcc for the compile checks, an NVIDIA GPU for the rest (the test reports
# "Skipped" without one, after the checks that need no GPU).
# timeout: 2400
# The cuda backend: every shipped .cu compiles for Hopper with the backend's own flags and
# shim; without a GPU `--backend cuda` exits 2 and says why; with one, every hostile CUDA
# kernel gets its status and the shipped kernels pass their checks.
. "$(dirname "$0")/lib.sh"
SCALE=$ROOT/tests/fixtures/eval/scale
H=$ROOT/tests/fixtures/hostile_cuda
BIN=$(cd "$(dirname "$KS")" && pwd)

# 1. a machine without the driver: exit 2 and a clear message (simulated where one exists)
KSEARCH_LIBCUDA=/nonexistent/libcuda.so.1 "$KS" eval "$SCALE" "$H/correct.cu" --backend cuda \
	>"$TMP/nodev.out" 2>"$TMP/nodev.err"
is "$?" 2 "--backend cuda without a driver exits 2"
grep -q "no NVIDIA GPU found" "$TMP/nodev.err"
ok $? "and says no NVIDIA GPU was found"

# 2. compile-only: baselines, templates at their defaults and a few other corners, fixtures
NVCC=${KSEARCH_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$NVCC" ]; then
	echo "# skip compile checks: no nvcc"
elif [ -n "${KS_T0400_SKIP_COMPILE:-}" ]; then
	echo "# skip compile checks: KS_T0400_SKIP_COMPILE is set (CI runs them)"
else
	CHECK=$TMP/compile_check
	build_check() {
		cc -std=gnu11 -D_GNU_SOURCE "$@" -I"$ROOT/include" -I"$ROOT/src" \
			"$ROOT/bench/cuda/compile_check.c" "$BIN/libksearch.a" \
			$(pkg-config --libs libcurl sqlite3 libfyaml jansson libseccomp) -lm -ldl -lpthread \
			-o "$CHECK"
	}
	# a sanitizer build's library needs the sanitizer runtimes at link time
	build_check 2>"$TMP/cc-build.err" || build_check -fsanitize=address,undefined
	ok $? "compile_check builds"
	export KSEARCH_CUDA_ARCH=${KSEARCH_CUDA_ARCH:-90a}
	cu_compiles() { # cu_compiles TASK_DIR FILE [NAME=VALUE ...]
		local task=$1 file=$2
		shift 2
		KSEARCH_RUNNER_DIR=$BIN "$CHECK" "$task" "$file" "$@" >"$TMP/cc.out" 2>"$TMP/cc.err"
		local rc=$?
		[ $rc -ne 0 ] && head -c 3000 "$TMP/cc.err" | sed 's/^/# /'
		# and kernels came out of it (a wrapper whose include was not expanded compiles to
		# nothing); a library.cu only calls the vendor library, it has no kernels of its own
		case $file in
		*/library.cu) ;;
		*) [ $rc -eq 0 ] && ! grep -q "regs=" "$TMP/cc.out" && { echo "# no kernels in the output"; rc=1; } ;;
		esac
		ok $rc "compiles: ${file#$ROOT/} $*"
	}
	for task in softmax matmul matmul_bf16 attention attention_bf16 selective_scan \
		selective_scan_nogate selective_scan_f32; do
		dir=$ROOT/tasks/$task
		[ -f "$dir/task.yaml" ] || { echo "# skip $task: no task.yaml in this tree"; continue; }
		[ -f "$dir/baseline.cu" ] && cu_compiles "$dir" "$dir/baseline.cu"
		[ -f "$dir/reference.cu" ] && cu_compiles "$dir" "$dir/reference.cu"
		[ -f "$dir/library.cu" ] && cu_compiles "$dir" "$dir/library.cu"
		for f in "$dir"/templates/cuda/*.cu; do
			[ -f "$f" ] && cu_compiles "$dir" "$f"
		done
	done
	if [ -f "$ROOT/tasks/softmax/task.yaml" ]; then
		S=$ROOT/tasks/softmax
		cu_compiles "$S" "$S/templates/cuda/block_row.cu" THREADS=1024 VEC=1 CHUNKS=16 ONLINE=0 EXP2=0
		cu_compiles "$S" "$S/templates/cuda/block_row.cu" THREADS=128 VEC=2 CHUNKS=0
		cu_compiles "$S" "$S/templates/cuda/warp_row.cu" WARPS=16 VEC=2 CHUNKS=32 EXP2=0
		cu_compiles "$S" "$S/templates/cuda/warp_row.cu" WARPS=1 VEC=1 CHUNKS=0
	fi
	if [ -f "$ROOT/tasks/matmul/task.yaml" ]; then
		M=$ROOT/tasks/matmul
		cu_compiles "$M" "$M/templates/cuda/smem_tiled.cu" BM=64 BN=64 BK=16 TM=4 TN=4 DBUF=0 GROUP_M=1 MINB=1
		cu_compiles "$M" "$M/templates/cuda/smem_tiled.cu" BM=256 BN=128 BK=8 TM=16 TN=8 MINB=1
		cu_compiles "$M" "$M/templates/cuda/mma_3xtf32.cu" BM=64 BN=256 BK=16 WM=2 WN=2 STAGES=4 SPLIT_ACC=0 GROUP_M=1
	fi
	if [ -f "$ROOT/tasks/matmul_bf16/task.yaml" ]; then
		M=$ROOT/tasks/matmul_bf16
		cu_compiles "$M" "$M/templates/cuda/mma_bf16.cu" BM=64 BN=64 BK=64 WM=4 WN=1 STAGES=2 GROUP_M=1
		cu_compiles "$M" "$M/templates/cuda/mma_bf16.cu" BM=256 BN=128 BK=32 WM=4 WN=2 STAGES=5
	fi
	if [ -f "$ROOT/tasks/attention/task.yaml" ]; then
		A=$ROOT/tasks/attention
		cu_compiles "$A" "$A/templates/cuda/flash2.cu" BM=64 BN=128 WARPS=4 STAGES=3 QREG=0 EXP2=0
		cu_compiles "$A" "$A/templates/cuda/flash2.cu" BM=128 BN=32 WARPS=4 STAGES=2 QREG=1
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=1 BN=64 STAGES=2
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=3
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=3 BN=64 STAGES=3
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=3 OVL=1
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=3 BN=64 STAGES=2 OVL=1
		# warp specialisation: a producer warpgroup, mbarriers, setmaxnreg; ping-pong
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=2 WS=1
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=3 BN=64 STAGES=3 WS=1
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=3 WS=1 OVL=1 PP=1
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=2 BN=192 STAGES=2 WS=1 OVL=1 PP=1
		# Q from registers in S = Q K^T (ldmatrix, wgmma with a register A operand)
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=3 WS=1 PERSIST=1 QREG=1
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=1 BN=64 STAGES=2 WS=1 PERSIST=1 QREG=1
		# K and V by TMA (tensor maps encoded by the launcher)
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=3 WS=1 PERSIST=1 TMA=1
		# ... and encoded by the kernel itself (tensormap.replace; the MLX build's route)
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=3 WS=1 PERSIST=1 TMA=2 QREG=1
		# the phase stamps of bench/probes/attention_trace.sh (a diagnostic macro, not a knob)
		cu_compiles "$A" "$A/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=3 WS=1 PERSIST=1 KS_TRACE=5
	fi
	if [ -f "$ROOT/tasks/attention_bf16/task.yaml" ]; then
		N=$ROOT/tasks/attention_bf16
		cu_compiles "$N" "$N/templates/cuda/flash2.cu" BM=64 BN=128 WARPS=4 STAGES=3 QREG=0 EXP2=0
		cu_compiles "$N" "$N/templates/cuda/flash2.cu" BM=128 BN=32 WARPS=4 STAGES=2 QREG=1
		cu_compiles "$N" "$N/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=3 WS=0 OVL=1
		cu_compiles "$N" "$N/templates/cuda/flash_wgmma.cu" WG=3 BN=64 STAGES=2 WS=1
		cu_compiles "$N" "$N/templates/cuda/flash_wgmma.cu" WG=1 BN=64 STAGES=2 WS=1 PERSIST=1
		cu_compiles "$N" "$N/templates/cuda/flash_wgmma.cu" WG=2 BN=128 STAGES=3 WS=1 PERSIST=1 TMA=2
	fi
	for t in selective_scan selective_scan_nogate selective_scan_f32; do
		[ -f "$ROOT/tasks/$t/task.yaml" ] || continue
		T=$ROOT/tasks/$t S=$ROOT/tasks/$t/templates/cuda
		cu_compiles "$T" "$S/warp_scan.cu" ITEMS=4 SPLIT=1 WPC=1 CPB=4 VEC=2 KEEP=0 MINW=32
		# state_scan beside its defaults (PF 2, FAST 1): the exact softplus and gate, PF 0 and 1
		cu_compiles "$T" "$S/state_scan.cu" PF=1 ITEMS=8 CPB=8 FAST=0
		cu_compiles "$T" "$S/state_scan.cu" PF=0 ITEMS=8 CPB=4 UNR=1 FAST=0
		# two and four channels per warp (the widened f32 B and C rows, 16- and 8-lane scans)
		cu_compiles "$T" "$S/state_scan.cu" CPW=2 UNR=4 FAST=0
		cu_compiles "$T" "$S/state_scan.cu" CPW=4 CPB=16 ITEMS=8 FAST=0
		# chunk_carry: the one-warp path (__syncwarp), 4 warps per channel with polynomial
		# exps, the shortest and longest lanes
		cu_compiles "$T" "$S/chunk_carry.cu" WPC=1 CPB=8 UNR=1 VEC=2 PFR=0
		cu_compiles "$T" "$S/chunk_carry.cu" WPC=4 CPB=2 ITEMS=4 UNR=4 POLY=2 VEC=4
		cu_compiles "$T" "$S/chunk_carry.cu" WPC=2 CPB=1 ITEMS=16 UNR=2 POLY=1
	done
	for f in "$H"/*.cu; do
		cu_compiles "$SCALE" "$f"
	done
	# the ptxas report reaches the artifact
	KSEARCH_RUNNER_DIR=$BIN "$CHECK" "$SCALE" "$H/correct.cu" >"$TMP/res.out" 2>&1
	grep -Eq "scale_kernel regs=[0-9]+ smem=[0-9]+ spill_stores=0 spill_loads=0" "$TMP/res.out"
	ok $? "ptxas resources are parsed ($(head -c 200 "$TMP/res.out"))"
	unset KSEARCH_CUDA_ARCH
fi

# 3. on a GPU: hostile kernels and the shipped kernels
"$KS" eval "$SCALE" "$H/correct.cu" --backend cuda --json --quick >"$TMP/probe.json" 2>"$TMP/probe.err"
if [ $? -eq 2 ] && grep -q "not available" "$TMP/probe.err"; then
	skip_rest "GPU checks: $(head -c 300 "$TMP/probe.err" | tr '\n' ' ')"
fi

# --spec auto (the default) reads the GPU's spec: a roofline floor from its theoretical peaks
roof=$(json_get "$TMP/probe.json" 'd["workloads"][0]["roofline_pct"]' 2>/dev/null)
python3 -c "import sys; sys.exit(not 0 < float(sys.argv[1]) <= 100)" "${roof:-0}" 2>/dev/null
ok $? "the device's spec gives the roofline (correct.cu: ${roof:-none}% of the floor)"

KSEARCH_CUDA_NO_CEILINGS=1 "$KS" spec detect --backend cuda --json >"$TMP/spec.json" 2>"$TMP/spec.err"
tf=$(json_get "$TMP/spec.json" 'd["fields"]["peak_gflops_f16_matrix"]["value"]' 2>/dev/null)
python3 -c "import sys; sys.exit(not float(sys.argv[1]) > 0)" "${tf:-0}" 2>/dev/null
ok $? "spec detect --backend cuda (not measured) loads, with a tensor-core peak ($tf; $(head -c 200 "$TMP/spec.err"))"

status_of() { # status_of KERNEL [extra args]
	local k=$1 st rc
	shift
	st=$(eval_status "$k" "$SCALE" "$H/$k.cu" --backend cuda --quick --timeout 10 "$@")
	rc=$?
	if [ "$st" = NO_JSON ]; then st="NO_JSON(rc=$rc)"; fi
	echo "$st"
}
expect() { # expect KERNEL "STATUS|STATUS" [extra args]
	local k=$1 want=$2
	shift 2
	local got
	got=$(status_of "$k" "$@")
	case "|$want|" in
	*"|$got|"*) ok 0 "$k -> $got" ;;
	*)
		ok 1 "$k -> $want (got '$got')"
		json_get "$TMP/$k.json" '[w["log"] for w in d["checks"]+d["workloads"] if w["log"]]' 2>/dev/null |
			head -c 1500 | sed 's/^/# /'
		head -c 1500 "$TMP/$k.err" | sed 's/^/# /'
		;;
	esac
}
expect correct PASSED
if [ "$(json_get "$TMP/correct.json" 'd["status"]' 2>/dev/null)" != PASSED ]; then
	# tell a sandbox problem from a driver problem: the same kernel without the sandbox
	echo "# without the sandbox: $(status_of correct --no-sandbox)"
	json_get "$TMP/correct.json" '[w["log"] for w in d["checks"]+d["workloads"] if w["log"]]' \
		2>/dev/null | head -c 1500 | sed 's/^/# /'
fi
expect legacy_stream PASSED
expect crash RUNTIME_ERROR
expect bad_launch RUNTIME_ERROR
expect hang TIMEOUT
expect oob_write "RUNTIME_ERROR|INCORRECT_NUMERICAL"
expect partial_write INCORRECT_NUMERICAL
expect cached_result INCORRECT_NUMERICAL
expect cached_copy INCORRECT_NUMERICAL
expect slow_correct PASSED
st=$(status_of side_stream)
case $st in
SUSPICIOUS | INCORRECT_NUMERICAL) ok 0 "side_stream -> $st" ;;
PASSED)
	# passed only with an honest time: not faster than the same work on the right stream
	side=$(json_get "$TMP/side_stream.json" 'd["workloads"][0]["median_us"]')
	slow=$(json_get "$TMP/slow_correct.json" 'd["workloads"][0]["median_us"]')
	python3 -c "import sys; sys.exit(0 if $side >= 0.8 * $slow else 1)"
	ok $? "side_stream -> PASSED with its hidden work counted ($side us vs $slow us on the stream)"
	;;
*) ok 1 "side_stream -> SUSPICIOUS|INCORRECT_NUMERICAL|honest PASSED (got '$st')" ;;
esac
# the sandbox holds in GPU runners too: a raw openat outside scratch is reported and writes nothing
rm -f /tmp/ksearch-pwned-cuda-raw
expect file_write_raw SANDBOX_VIOLATION
[ ! -e /tmp/ksearch-pwned-cuda-raw ]
ok $? "file_write_raw: the raw write outside scratch was refused (no file)"
# the runner survives nothing: after a crash a fresh runner still works
expect correct PASSED

# the shipped kernels pass every check (quick timing)
for task in softmax matmul matmul_bf16 attention; do
	dir=$ROOT/tasks/$task
	[ -f "$dir/task.yaml" ] || continue
	for f in "$dir/baseline.cu" "$dir"/templates/cuda/*.cu; do
		[ -f "$f" ] || continue
		st=$(eval_status k "$dir" "$f" --backend cuda --quick --workloads 0)
		is "$st" PASSED "$task ${f#$dir/} passes its checks on the GPU"
		[ "$st" = PASSED ] || json_get "$TMP/k.json" \
			'[(w["name"], w["log"]) for w in d["checks"]+d["workloads"] if w["log"]]' 2>/dev/null |
			head -c 1500 | sed 's/^/# /'
	done
done

# the library yardstick on the GPU: cuBLAS (library.cu) passes the reference check and is
# timed beside the baseline; eval's headline and --json give the speedup over it
for spec in "matmul templates/cuda/smem_tiled.cu" "matmul_bf16 templates/cuda/mma_bf16.cu"; do
	set -- $spec
	dir=$ROOT/tasks/$1
	[ -f "$dir/library.cu" ] || continue
	"$KS" eval "$dir" "$dir/$2" --backend cuda --quick --no-checks --workloads 0,2 \
		>"$TMP/lib.out" 2>"$TMP/lib.err"
	grep -qE "PASSED, [0-9.]+x the baseline, [0-9.]+x cuBLAS \(geometric means\)" "$TMP/lib.out"
	rc=$?
	ok $rc "$1: eval's headline gives the speedup over cuBLAS"
	[ $rc = 0 ] || head -c 1500 "$TMP/lib.err" | sed 's/^/# /'
	grep -qE 'cuBLAS_us +vs cuBLAS' "$TMP/lib.out" && ! grep -q "not trusted" "$TMP/lib.out" "$TMP/lib.err"
	ok $? "$1: the table has cuBLAS's median, and cuBLAS passed the reference check"
	sed 's/^/# /' "$TMP/lib.out" | head -8
done

# a task's trusted reference.cu, evaluated as a candidate: on the small workloads and every
# check the expected outputs come from reference.c, and reference.cu must match them bit for
# bit (same double sums in the same order); on the 4096^3 and 8192^3 workloads (at least
# KS_REF_DEVICE_MIN_FLOPS) the expected outputs come from reference.cu itself, so there it
# is only compared with itself.  Then a fast kernel (KERNEL) on 4096^3 is judged against
# reference.cu's double sums: its error is small but not zero.
check_reference() { # check_reference TASK KERNEL
	local M=$ROOT/tasks/$1 kernel=$2
	[ -f "$M/reference.cu" ] || return 0
	st=$(eval_status ref "$M" "$M/reference.cu" --backend cuda --quick --no-baseline)
	is "$st" PASSED "$1 reference.cu passes as a candidate on every workload and check"
	[ "$st" = PASSED ] || { head -c 1500 "$TMP/ref.err"; json_get "$TMP/ref.json" \
		'[(w.get("name"), w["log"]) for w in d["checks"]+d["workloads"] if w["log"]]' \
		2>/dev/null | head -c 1500; } | sed 's/^/# /'
	errs=$(json_get "$TMP/ref.json" \
		'[w["max_abs_err"] for w in d["checks"] + d["workloads"][:2]]' 2>/dev/null)
	python3 -c "import sys; e = $errs; sys.exit(0 if e and all(x == 0 for x in e) else 1)" \
		2>/dev/null
	ok $? "$1: reference.cu equals reference.c exactly on the small workloads and checks ($errs)"
	big="m=4096 n=4096 k=4096; m=8192 n=8192 k=8192"
	grep -q "reference.cu gives the expected outputs of $big (" "$TMP/ref.err"
	ok $? "$1: the large workloads take their expected outputs from reference.cu"
	st=$(eval_status big "$M" "$M/$kernel" --backend cuda --quick --no-baseline --no-checks \
		--workloads 2)
	err=$(json_get "$TMP/big.json" 'd["workloads"][0]["max_abs_err"]' 2>/dev/null || echo None)
	python3 -c "import sys; sys.exit(0 if '$st' == 'PASSED' and $err > 0 else 1)" 2>/dev/null
	ok $? "$1: ${kernel} on 4096^3 against reference.cu: $st, max abs err $err"
}
check_reference matmul templates/cuda/smem_tiled.cu
check_reference matmul_bf16 templates/cuda/mma_bf16.cu

# attention's reference.cu does reference.c's double arithmetic in the same order: equal on
# the small workloads and checks (max abs err 0 on an H200, docs/results/cuda-attention.md),
# GQA and kv_seqlen != seqlen ones included, and the expected outputs of the headline
# workload (workload 2) come from it; the tensor-core template is judged against it there
# and on the GQA workloads (8, 9: 32 query heads on 8 kv heads) with a small, non-zero
# error.
A=$ROOT/tasks/attention
if [ -f "$A/reference.cu" ]; then
	st=$(eval_status aref "$A" "$A/reference.cu" --backend cuda --quick --no-baseline \
		--workloads 0,1,2)
	is "$st" PASSED "attention reference.cu passes as a candidate (workloads 0-2, every check)"
	errs=$(json_get "$TMP/aref.json" \
		'[w["max_abs_err"] for w in d["checks"] + d["workloads"][:2]]' 2>/dev/null)
	python3 -c "import sys; e = $errs; sys.exit(0 if e and all(x == 0 for x in e) else 1)" \
		2>/dev/null
	ok $? "attention: reference.cu equals reference.c on the small workloads and checks ($errs)"
	grep -q "reference.cu gives the expected outputs of batch=1 heads=32 kv_heads=32 seqlen=2048 kv_seqlen=2048 head_dim=128 causal=0 (" \
		"$TMP/aref.err"
	ok $? "attention: the headline workload takes its expected outputs from reference.cu"
	st=$(eval_status abig "$A" "$A/templates/cuda/flash2.cu" --backend cuda --quick --no-baseline \
		--no-checks --workloads 2,3,8,9)
	err=$(json_get "$TMP/abig.json" 'max(w["max_abs_err"] for w in d["workloads"])' 2>/dev/null ||
		echo None)
	python3 -c "import sys; sys.exit(0 if '$st' == 'PASSED' and $err > 0 else 1)" 2>/dev/null
	ok $? "attention: flash2.cu on B1 H32 L2048 D128, 32 and 8 kv heads (both masks) against reference.cu: $st, max abs err $err"
fi

# workers on GPUs: a chosen device, and one worker per GPU through --worker-cmd
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
last=$((ngpu > 0 ? ngpu - 1 : 0))
expect correct PASSED --devices "$last"
if [ "$ngpu" -ge 2 ]; then
	expect correct PASSED --devices 0,1 --worker-cmd "$KS worker --backend cuda --device {device}"
	expect crash RUNTIME_ERROR --devices 0,1
fi
done_testing
