/* What an MLX kernel file is, in words (backends.h): the text `ksearch tasks show --backend
 * mlx` prints and the prompts give a model.  Every rule stated here is one the code holds:
 * the directives and the expression language of mlx_kernel.c and util/expr.c, the launch
 * and the generated source of MLX's custom_kernel.cpp (0.31-0.32), NVRTC as MLX runs it
 * (checked with bench/mlx/nvrtc_check.py), the knob values of mlx_kernel.c's launch. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/backends.h"
#include "ksearch/task.h"

/* MLX's spelling of a task dtype in each flavour (the signature MLX writes) */
static const char *mlx_ctype(enum ks_dtype t, int metal)
{
	static const char *const cuda[] = {"float", "double", "__half", "__nv_bfloat16", "int32_t",
					   "int64_t"};
	static const char *const mtl[] = {"float", "double", "float16_t", "bfloat16_t", "int32_t",
					  "int64_t"};
	return (unsigned)t < 6 ? (metal ? mtl : cuda)[t] : "?";
}

/* The smallest of the task's templates of flavour (templates/mlx/NAME.FLAVOUR.mlx) as a
 * worked example: the task's own code, known to pass, and the shortest to read.  path gets
 * its file; "" when the task has none. */
static void example_path(const struct ks_task *t, const char *flavour, char *path, size_t n)
{
	char dir[PATH_MAX], suffix[32];
	snprintf(dir, sizeof(dir), "%s/templates/mlx", t->dir);
	snprintf(suffix, sizeof(suffix), ".%s.mlx", flavour);
	path[0] = '\0';
	DIR *d = opendir(dir);
	if (!d)
		return;
	off_t best = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(suffix);
		char p[PATH_MAX];
		struct stat st;
		if (len <= sl || strcmp(de->d_name + len - sl, suffix))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		/* the smallest, the first name on ties: the same example on every machine */
		if (stat(p, &st) || (path[0] && (st.st_size > best ||
						 (st.st_size == best && strcmp(p, path) > 0))))
			continue;
		best = st.st_size;
		snprintf(path, n, "%s", p);
	}
	closedir(d);
}

/* a worked example of flavour from the task's own templates, whole: its @ksearch block says
 * what each knob means and shows where a block goes; or a skeleton when the task has none */
static int add_example(const struct ks_task *t, const char *flavour, struct ks_buf *out)
{
	char path[PATH_MAX];
	example_path(t, flavour, path, sizeof(path));
	struct ks_buf src = KS_BUF_INIT;
	if (path[0] && ks_kernel_source_read(path, 1 << 20, &src, NULL) == 0) {
		ks_buf_addf(out, "\nExample (flavour %s, %s: one of this task's templates, a worked "
				 "kernel).  Its @ksearch block says what each knob means.  It has no "
				 "'#define NAME VALUE' lines because ksearch passes every knob's value "
				 "when it runs a template (--define NAME=V for ksearch eval); a kernel "
				 "evaluated as written, as a model's is, needs one per knob above "
				 "'// @mlx header':\n",
			    flavour, path + strlen(t->dir) + 1);
		for (const char *l = ks_buf_str(&src); *l;) {
			size_t n = strcspn(l, "\n");
			ks_buf_addf(out, "  %.*s\n", (int)n, l);
			l += n + (l[n] == '\n');
		}
		ks_buf_release(&src);
		return ks_buf_failed(out);
	}
	ks_buf_release(&src);
	int metal = !strcmp(flavour, "metal");
	ks_buf_addf(out, "\nExample (flavour %s, one thread per element of the first output; a "
			 "skeleton, not this task's math):\n"
			 "  // @mlx flavour: %s\n  // @mlx grid: <number of elements>, 1, 1\n"
			 "  // @mlx threadgroup: 256, 1, 1\n  // @mlx body\n%s"
			 "  ...\n",
		    flavour, flavour,
		    metal ? "  uint i = thread_position_in_grid.x;\n"
			  : "  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n");
	return ks_buf_failed(out);
}

/* the signature MLX generates around the body in one flavour */
static void add_signature(const struct ks_task *t, int metal, struct ks_buf *out)
{
	ks_buf_addf(out, "  Signature MLX generates, flavour %s (%s):\n", metal ? "metal" : "cuda",
		    metal ? "mx.fast.metal_kernel" : "mx.fast.cuda_kernel, compiled by NVRTC");
	if (metal) {
		ks_buf_adds(out, "    template <");
		for (int i = 0; i < t->nparams; i++)
			ks_buf_addf(out, "%sint %s", i ? ", " : "", t->params[i].name);
		ks_buf_addf(out, "%s...>\n    [[kernel]] void custom_kernel_%s(\n",
			    t->nparams ? ", " : "", t->name);
	} else {
		ks_buf_addf(out, "    __global__ void custom_kernel_%s(\n", t->name);
	}
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		if (metal)
			ks_buf_addf(out, "        %sdevice %s* %s [[buffer(%d)]],\n",
				    d->is_output ? "" : "const ", mlx_ctype(d->dtype, 1), d->name, i);
		else
			ks_buf_addf(out, "        %s%s* %s%s\n", d->is_output ? "" : "const ",
				    mlx_ctype(d->dtype, 0), d->name, i + 1 < t->ntensors ? "," : ") {");
	}
	if (metal) {
		ks_buf_adds(out, "        uint3 thread_position_in_grid [[thread_position_in_grid]], "
				 "... (each attribute the body names)) {\n"
				 "      (an input of fewer than 8 elements comes as `const constant T*`, "
				 "not device: take input pointers with `auto`)\n");
	} else {
		for (int i = 0; i < t->nparams; i++)
			ks_buf_addf(out, "      constexpr int %s = ...;\n", t->params[i].name);
		ks_buf_adds(out, "      constexpr int KNOB = ...;   (each knob and 'template:' "
				 "line)\n");
	}
	ks_buf_adds(out, "      <body>\n    }\n");
}

static const char mlx_directives[] =
	"  A kernel file (.mlx, docs/mlx.md) holds the body of an MLX custom kernel and\n"
	"  '// @mlx' lines saying how to launch it; MLX writes the signature.\n\n"
	"  // @mlx flavour: cuda | metal | native\n"
	"  // @mlx grid: X, Y, Z            threads (not blocks) per axis\n"
	"  // @mlx threadgroup: X, Y, Z     threads per threadgroup (a CUDA block)\n"
	"  // @mlx template: NAME = EXPR     extra template args (repeatable)\n"
	"  // @mlx init: nan | none | EXPR   outputs' init_value for timed calls "
	"(correctness calls always poison with NaN)\n"
	"  // @mlx shared_memory: EXPR       dynamic shared memory bytes (cuda)\n"
	"  // @mlx header                    the lines up to '@mlx body' are the header\n"
	"  // @mlx include: PATH             (in the header) a file of the task's folder, "
	"knob values as macros around it\n"
	"  // @mlx body                      the rest of the file is the body\n\n"
	"  The file, top to bottom: comments (an @ksearch knob block among them) and one\n"
	"  '#define NAME VALUE' line per knob, the value the file runs with as written (a\n"
	"  template arg; the knob tuning's value replaces it); the '// @mlx' lines; '// @mlx\n"
	"  header' and the helpers (device functions, structs, templates); '// @mlx body' and\n"
	"  the body.  Lines above the header and the body are not part of the kernel.\n\n";

/* The expression language of the values (util/expr.c through ks_mlx_launch_resolve), with
 * examples over the task's first param that resolve (tests/unit/test_mlx_kernel.c) */
static void add_expressions(const struct ks_task *t, struct ks_buf *out)
{
	const char *p = t->nparams ? t->params[0].name : "N";
	ks_buf_adds(out, "  Values (grid, threadgroup, template, shared_memory, init) are C integer\n"
			 "  expressions: numbers, names, + - * / % (integer / and % truncate as in C),\n"
			 "  << >>, < <= > >= == !=, && || !, ?: and parentheses, and the functions min\n"
			 "  and max (2 to 8 arguments), ceil_div(a, b), floor, ceil, sqrt, log2, pow and\n"
			 "  abs, nested freely: ");
	ks_buf_addf(out, "'ceil_div(%s, 4) * 128', '%s <= 1024 ? 256 : 1024',\n"
			 "  'min(max(%s / 4, 32), 1024)'.  ",
		    p, p, p);
	ks_buf_adds(out, "No bitwise & | ^ ~, casts or sizeof.  The names are the\n"
			 "  params, the knobs and the template args: a 'template:' line sees those above\n"
			 "  it, grid, threadgroup, shared_memory and init see them all (true and false\n"
			 "  count as 1 and 0; a dtype such as f16 is no number).  grid and threadgroup\n"
			 "  take one to three values (missing axes are 1), each an integer >= 1.  Flavour\n"
			 "  cuda launches ceil(grid / threadgroup) blocks of threadgroup threads per axis\n"
			 "  (threadgroup capped at grid), so threads past grid run and must be guarded;\n"
			 "  flavour metal launches exactly grid threads, the last threadgroup of an axis\n"
			 "  smaller.\n\n");
}

/* where the template args are visible: the body, never the header */
static void add_template_args(const struct ks_task *t, struct ks_buf *out)
{
	ks_buf_adds(out, "  Template args, in order: the params");
	for (int i = 0; i < t->nparams; i++)
		ks_buf_addf(out, "%s%s", i ? ", " : " (", t->params[i].name);
	ks_buf_adds(out, t->nparams ? ") as ints" : "");
	ks_buf_adds(out, ", a template's knobs, then the 'template:' lines.  In a cuda body each\n"
			 "  is a constexpr int (a constexpr bool for true or false, a type alias for a\n"
			 "  dtype) declared before the body; in a metal kernel a template parameter.\n"
			 "  The header comes before the kernel function and sees none of them: pass\n"
			 "  them to helper templates as template arguments (helper<ITEMS>(...)), and\n"
			 "  never #define a knob in the header or the body.\n\n");
}

/* What NVRTC as MLX runs it accepts (bench/mlx/nvrtc_check.py with NVRTC 13.0 and MLX's
 * device headers), and shared memory as MLX launches the kernel (custom_kernel.cpp) */
static const char mlx_cuda_notes[] =
	"  Under NVRTC (flavour cuda): no system headers (#include <stdint.h>, <cstdint> or\n"
	"  <math.h> fails; <cuda/std/...> headers work); int8_t to uint64_t, size_t and\n"
	"  uintptr_t are defined already, in the header and the body; __half,\n"
	"  __nv_bfloat16 (cuda_fp16.h, cuda_bf16.h) and cooperative_groups (cg:: in the\n"
	"  body) are included; the math functions (expf, __expf, fmaxf, ...) are built in;\n"
	"  FLT_MAX is not defined (cuda::std::numeric_limits<float>::max(); -inf is\n"
	"  -__int_as_float(0x7f800000)).  The body is inside namespace mlx::core::cu; the\n"
	"  kernel has no __launch_bounds__ or other attribute (MLX writes the signature).\n"
	"  Shared memory: static __shared__ arrays up to 48 KB in all; beyond that dynamic\n"
	"  shared memory, 'extern __shared__ __align__(16) unsigned char smem[];' in the\n"
	"  body and '// @mlx shared_memory: BYTES'.  MLX raises the kernel's limit itself\n"
	"  when BYTES is above 48000 (cuFuncSetAttribute), up to the GPU's opt-in maximum\n"
	"  (smem_per_block_optin in the hardware section, static arrays included); there\n"
	"  is no host code, so no cudaFuncSetAttribute of your own.\n";

static const char mlx_metal_notes[] =
	"  Threadgroup memory (flavour metal): 'threadgroup float buf[N];' in the body, N a\n"
	"  compile-time constant, within the GPU's threadgroup memory in all (the hardware\n"
	"  section); there is no shared_memory line for Metal.\n";

int ks_mlx_describe_abi(const struct ks_task *t, const char *flavour, const char *here,
			struct ks_buf *out)
{
	ks_buf_adds(out, mlx_directives);
	add_expressions(t, out);
	add_template_args(t, out);
	for (int metal = 0; metal < 2; metal++)
		if (!flavour || !strcmp(flavour, metal ? "metal" : "cuda"))
			add_signature(t, metal, out);
	ks_buf_adds(out, "  An input NAME also gets NAME_shape, NAME_strides, NAME_ndim when the body "
			 "uses them.\n  Metal spellings (uint, device, threadgroup) do not compile "
			 "under NVRTC, nor CUDA's under Metal.\n");
	if (!flavour || !strcmp(flavour, "cuda"))
		ks_buf_adds(out, mlx_cuda_notes);
	if (!flavour || !strcmp(flavour, "metal"))
		ks_buf_adds(out, mlx_metal_notes);
	for (int i = 0; i < t->ntensors; i++) {
		const struct ks_tensor_decl *d = &t->tensors[i];
		ks_buf_addf(out, "%s%s %s [", i ? "; " : "  Shapes: ", d->name, ks_dtype_name(d->dtype));
		for (int j = 0; j < d->ndim; j++)
			ks_buf_addf(out, "%s%s", j ? ", " : "", d->shape[j]);
		ks_buf_adds(out, "]");
	}
	ks_buf_adds(out, " (row-major).\n");
	return add_example(t, flavour ? flavour : here, out);
}

void ks_mlx_describe_timing(int chain, struct ks_buf *out)
{
	ks_buf_addf(out, "a timed call is one MLX eval of %d %s of the kernel on the same inputs, "
			 "its wall-clock time divided by %d (as an MLX program runs many ops per "
			 "eval); the L2 is not flushed between calls, and the first eval, which "
			 "compiles the kernel, is never timed",
		    chain, chain == 1 ? "launch" : "chained launches", chain);
}

const char ks_mlx_reply_file[] =
	"the whole .mlx kernel file in the format the Task section describes, top to bottom: "
	"comments (an @ksearch knob block among them) and one '#define NAME VALUE' line per "
	"knob; the '// @mlx' lines (flavour, grid, threadgroup and any template, "
	"shared_memory, init); '// @mlx header' and the helpers; '// @mlx body' and the body "
	"(MLX writes the kernel's signature; no system #include, no host code)";

const char ks_mlx_knob_use[] =
	"in a .mlx file a '#define BLOCK 128' line above '// @mlx header' gives the value the "
	"file runs with as written (ksearch's tuning replaces it with each other value), and "
	"BLOCK is a template arg: a constexpr int in a cuda body, a template parameter of a "
	"metal kernel, not visible in the header (pass it to helper templates as a template "
	"argument); never #define it in the header or the body";
