/* ks_translate on the CUDA fixture corpus: primitives found, violations flagged. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/knowledge.h"
#include "tap.h"
#include "util/fs.h"

static struct ks_spec m3, h100;

static char *fixture(const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fixtures/cuda/%s", ks_data_root(), name);
	struct ks_buf b = KS_BUF_INIT;
	struct ks_error e = {0};
	if (ks_file_read(path, 1 << 20, &b, &e)) {
		ok(0, "read %s: %s", path, e.msg);
		ks_buf_release(&b);
		return strdup("");
	}
	return ks_buf_detach(&b, NULL);
}

static const struct ks_translate_use *use(const struct ks_translation *t, const char *id)
{
	for (int i = 0; i < t->nuses; i++)
		if (!strcmp(t->uses[i].concept, id))
			return &t->uses[i];
	return NULL;
}

static void uses(const struct ks_translation *t, const char *file, const char *id, int line)
{
	const struct ks_translate_use *u = use(t, id);
	int at = 0;
	for (int k = 0; u && k < u->nlines; k++)
		at |= u->lines[k] == line;
	ok(u && at, "%s uses %s at line %d", file, id, line);
}

/* a finding of this severity and check whose message contains needle (line 0: any) */
static int finds(const struct ks_translation *t, enum ks_severity sev, const char *check,
		 int line, const char *needle)
{
	for (int i = 0; i < t->nfindings; i++) {
		const struct ks_translate_finding *f = &t->findings[i];
		if (f->severity == sev && !strcmp(f->check, check) && (!line || f->line == line) &&
		    strstr(f->message, needle))
			return 1;
	}
	return 0;
}

static void run(const char *file, const char *target, const struct ks_spec *ts,
		struct ks_translation *t)
{
	char *src = fixture(file);
	struct ks_error e = {0};
	ok(ks_translate(src, target, ts, &h100, t, &e) == 0, "translate %s -> %s: %s", file,
	   target, e.msg);
	free(src);
}

int main(void)
{
	struct ks_error e = {0};
	ok(ks_spec_load("m3-max", &m3, &e) == 0, "load m3-max");
	ok(ks_spec_load("h100", &h100, &e) == 0, "load h100");
	struct ks_translation t;

	run("tiled_matmul.cu", "metal", &m3, &t);
	uses(&t, "tiled_matmul", "shared_static", 7);
	uses(&t, "tiled_matmul", "syncthreads", 15);
	uses(&t, "tiled_matmul", "thread_index", 9);
	uses(&t, "tiled_matmul", "kernel_launch", 28);
	uses(&t, "tiled_matmul", "restrict", 4);
	is_int(t.nerrors, 0, "tiled_matmul fits m3-max");
	ok(finds(&t, KS_SEV_INFO, "smem_per_block", 7, "8.2 KiB"),
	   "tiled_matmul: 2 x 32x33 floats = 8.2 KiB of shared memory");
	ok(fabs(t.bandwidth_ratio - 400.0 / 3350) < 1e-9, "bandwidth ratio m3-max/h100");
	ok(fabs(t.f32_ratio - 14.1 / 67) < 1e-9, "f32 ratio m3-max/h100");
	ok(t.ratio_text && strstr(t.ratio_text, "8.38x"), "ratio text: bandwidth-bound ~8.4x");
	ok(t.hints && strstr(t.hints, "Threadgroup tiling within 32 KB"),
	   "hints include threadgroup tiling");
	ok(t.hints && !strstr(t.hints, "No double precision"), "hints skip unrelated sections");
	ks_translation_release(&t);

	run("softmax_warp.cu", "metal", &m3, &t);
	uses(&t, "softmax_warp", "warp_shuffle", 7);
	uses(&t, "softmax_warp", "warp_shuffle", 15);
	uses(&t, "softmax_warp", "warp_size_assumption", 21);
	uses(&t, "softmax_warp", "launch_bounds", 18);
	uses(&t, "softmax_warp", "fast_math", 32);
	uses(&t, "softmax_warp", "ldg", 27);
	ok(strstr(use(&t, "warp_shuffle")->equivalent, "simd_shuffle_xor") != NULL,
	   "shuffle maps to simd_shuffle_xor");
	is_int(t.nerrors, 0, "softmax_warp has no violation on m3-max (simd 32)");
	ok(!finds(&t, KS_SEV_WARN, "warp_size", 0, ""), "no warp-size warning at width 32");
	ks_translation_release(&t);
	/* the same kernel on a hypothetical 64-wide target */
	struct ks_spec wide = m3;
	wide.simd_width = 64;
	run("softmax_warp.cu", "metal", &wide, &t);
	ok(finds(&t, KS_SEV_WARN, "warp_size", 7, "32-lane"), "64-wide target: warp size warned");
	ok(!finds(&t, KS_SEV_WARN, "threads_per_group", 0, ""),
	   "256 threads per group are a multiple of 64: no warning");
	ks_translation_release(&t);

	run("wmma_gemm.cu", "metal", &m3, &t);
	uses(&t, "wmma_gemm", "mma", 11);
	uses(&t, "wmma_gemm", "half_types", 2);
	ok(strstr(use(&t, "mma")->equivalent, "simdgroup_matrix") != NULL,
	   "wmma maps to simdgroup_matrix");
	ok(use(&t, "mma")->constraints && strstr(use(&t, "mma")->constraints, "8x8"),
	   "mma constraints mention 8x8 tiles");
	is_int(t.nerrors, 0, "wmma_gemm maps onto m3-max");
	ks_translation_release(&t);
	/* a target without simdgroup_matrix */
	char *nofeat[] = {"fp16", NULL};
	struct ks_spec bare = m3;
	bare.features = nofeat;
	run("wmma_gemm.cu", "metal", &bare, &t);
	ok(finds(&t, KS_SEV_ERROR, "feature", 11, "simdgroup_matrix"),
	   "target without simdgroup_matrix: mma flagged");
	ks_translation_release(&t);

	run("cp_async_pipeline.cu", "metal", &m3, &t);
	uses(&t, "cp_async", "cp_async", 13);
	uses(&t, "cp_async", "shared_dynamic", 10);
	uses(&t, "cp_async", "vector_types", 8);
	ok(finds(&t, KS_SEV_WARN, "feature", 13, "no equivalent on metal"), "cp.async missing");
	ok(finds(&t, KS_SEV_ERROR, "smem_per_block", 31, "128 KiB"), "opt-in 128 KiB > 32 KiB");
	ok(finds(&t, KS_SEV_ERROR, "smem_per_block", 32, "131072 B dynamic"),
	   "launch with 128 KiB dynamic shared memory flagged");
	ks_translation_release(&t);
	run("cp_async_pipeline.cu", "metal", &h100, &t);
	ok(!finds(&t, KS_SEV_ERROR, "smem_per_block", 0, ""), "128 KiB fits h100's 227 KiB opt-in");
	ks_translation_release(&t);

	run("histogram_atomics.cu", "metal", &m3, &t);
	uses(&t, "histogram", "atomics", 11);
	uses(&t, "histogram", "shared_static", 6);
	ok(strstr(use(&t, "atomics")->equivalent, "atomic_fetch_add_explicit") != NULL,
	   "atomicAdd maps to atomic_fetch_add_explicit");
	ok(finds(&t, KS_SEV_ERROR, "threads_per_group", 19, "2048 threads"),
	   "2048 threads per block > 1024");
	is_int(t.nerrors, 1, "histogram: exactly one error");
	ks_translation_release(&t);
	run("histogram_atomics.cu", "cpu", NULL, &t);
	is_int(t.nerrors, 0, "cpu target without spec: no thread-group limit");
	ok(strstr(use(&t, "atomics")->equivalent, "private") != NULL, "cpu: privatise atomics");
	ks_translation_release(&t);

	run("smem48k.cu", "metal", &m3, &t);
	ok(finds(&t, KS_SEV_ERROR, "smem_per_block", 10, "48 KiB"),
	   "48 KiB __shared__ tile > 32 KiB on m3-max (line 10)");
	ok(finds(&t, KS_SEV_ERROR, "fp64", 11, "no fp64"), "double on metal");
	ok(finds(&t, KS_SEV_ERROR, "feature", 18, "Warpgroup MMA"), "wgmma has no metal equivalent");
	ok(!finds(&t, KS_SEV_ERROR, "threads_per_group", 0, ""), "1024 threads are allowed");
	is_int(t.nerrors, 3, "smem48k: three errors");
	ok(t.findings[0].severity == KS_SEV_ERROR, "errors come first");
	struct ks_buf b = KS_BUF_INIT;
	ok(ks_translation_to_json(&t, &b, &e) == 0, "json");
	json_error_t je;
	json_t *j = json_loads(ks_buf_str(&b), 0, &je);
	ok(j && json_integer_value(json_object_get(j, "errors")) == 3, "json errors = 3");
	ok(j && json_array_size(json_object_get(j, "findings")) >= 3, "json findings");
	json_decref(j);
	ks_buf_reset(&b);
	ks_translation_to_text(&t, &b);
	ok(strstr(ks_buf_str(&b), "ERROR line 10 [smem_per_block]") != NULL, "text names the line");
	ks_buf_release(&b);
	ks_translation_release(&t);
	run("smem48k.cu", "metal", &h100, &t);
	ok(!finds(&t, KS_SEV_ERROR, "smem_per_block", 0, ""), "48 KiB fits h100");
	ok(!finds(&t, KS_SEV_ERROR, "fp64", 0, ""), "h100 has fp64");
	ks_translation_release(&t);

	/* constant evaluation: #define chains, constexpr, several declarators, comments */
	const char *src = "constexpr int BM = 64;\n"
			  "#define BK (BM / 2)\n"
			  "template <typename T> __global__ void k(T *p) {\n"
			  "  // __shared__ float ignored[100000];\n"
			  "  __shared__ __align__(16) half a[BM][BK + 8], b[2 * BK];\n"
			  "  __shared__ T generic[128];\n"
			  "  __syncthreads();\n"
			  "}\n";
	ok(ks_translate(src, "metal", &m3, NULL, &t, &e) == 0, "translate inline source");
	ok(finds(&t, KS_SEV_INFO, "smem_per_block", 5, "5.1 KiB"),
	   "a[64][40] + b[64] halves = 5248 B");
	ok(finds(&t, KS_SEV_WARN, "smem_static", 6, "'generic'"), "template element type: unknown");
	ok(isnan(t.bandwidth_ratio) && !t.ratio_text, "no source spec: no ratios");
	ks_translation_release(&t);

	is_int(ks_translate("", "vulkan", NULL, NULL, &t, &e), KS_EINVAL, "unknown target");

	struct ks_buf cb = KS_BUF_INIT;
	ok(ks_conceptmap_text("opencl", &cb, &e) == 0 && strstr(ks_buf_str(&cb), "get_local_id"),
	   "opencl concept map text");
	ks_buf_release(&cb);

	ks_spec_release(&m3);
	ks_spec_release(&h100);
	return tap_done();
}
