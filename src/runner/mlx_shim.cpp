// The C++ shim between ksearch-runner-mlx (C) and MLX's C++ API (mlx_shim.h).
//
// Built as C++20 with the libstdc++ C++11 ABI, as MLX's wheels are.  Every entry point
// catches every exception: MLX reports a custom kernel's compile error, a missing GPU
// backend or a bad shape by throwing, and none of that may unwind into C or end the runner.
#include "runner/mlx_shim.h"
#include "runner/mlx_cuda.h"
#include "util/env.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlx/backend/cuda/cuda.h"
#include "mlx/backend/metal/metal.h"
#include "mlx/mlx.h"

namespace mx = mlx::core;

struct ks_mlx_arr {
	mx::array a;
};

struct ks_mlx_prog {
	int flavour;
	std::string native, name, header, body;
	std::vector<std::string> inputs, outputs;
	std::optional<mx::fast::CustomKernelFunction> fn;
	int fn_smem = -1; // the shared memory a cuda kernel function was built for
};

namespace {

// KS_DT_* order of include/ksearch/task.h: f32 f64 f16 bf16 i32 i64
mx::Dtype to_mx(int dt)
{
	static const mx::Dtype map[] = {mx::float32, mx::float64, mx::float16,
					mx::bfloat16, mx::int32, mx::int64};
	if (dt < 0 || dt >= (int)(sizeof(map) / sizeof(map[0])))
		throw std::invalid_argument("unknown dtype " + std::to_string(dt));
	return map[dt];
}

int fail(int rc, const char *what, char *err, size_t n)
{
	if (err && n)
		snprintf(err, n, "%s", what);
	return rc;
}

// compile errors come from eval: NVRTC's "Failed to compile kernel: <log>", Metal's
// "Unable to build metal library from source <log>"
int classify(const std::exception &ex)
{
	const char *m = ex.what();
	if (strstr(m, "Failed to compile kernel") || strstr(m, "Unable to build metal library") ||
	    strstr(m, "nvrtcCompileProgram"))
		return KS_MLX_ECOMPILE;
	if (strstr(m, "No Metal back-end") || strstr(m, "No CUDA back-end") ||
	    strstr(m, "only run on GPU") || strstr(m, "Only supports the GPU"))
		return KS_MLX_EUNSUPPORTED;
	return KS_MLX_ERUNTIME;
}

// KSEARCH_MLX_TRACE=1: every shim call and exception on stderr (the runner's log, shown
// when a runner fails); KSEARCH_MLX_TRACE=/abs/path: appended to that file (for a verdict that
// is no failure of the runner; with --no-sandbox, or a path the sandbox lets it write).  MLX
// also prints each custom kernel's generated source then.  For finding out what MLX did.
FILE *trace()
{
	static FILE *const out = []() -> FILE * {
		const char *v = ks_env_get()->mlx_trace;
		if (!v || !*v || !strcmp(v, "0"))
			return nullptr;
		FILE *f = v[0] == '/' ? fopen(v, "a") : nullptr;
		return f ? f : stderr;
	}();
	return out;
}

template <class F> int guard(const char *what, F &&f, char *err, size_t n)
{
	try {
		f();
		if (trace())
			fprintf(trace(), "ksearch-runner-mlx: trace: %s ok\n", what), fflush(trace());
		return KS_MLX_OK;
	} catch (const std::exception &ex) {
		if (trace())
			fprintf(trace(), "ksearch-runner-mlx: trace: %s threw: %.2000s\n", what, ex.what()),
				fflush(trace());
		return fail(classify(ex), ex.what(), err, n);
	} catch (...) {
		return fail(KS_MLX_ERUNTIME, "unknown C++ exception", err, n);
	}
}

double param(const ks_mlx_call *c, const char *name)
{
	for (int i = 0; i < c->nparams; i++)
		if (!strcmp(c->param_names[i], name))
			return c->params[i];
	throw std::invalid_argument(std::string("the native op needs the task param '") + name +
				    "'");
}

// Mamba's selective scan the way mlx-lm runs it: one token at a time, the state
// [batch, dim, dstate] carried through the loop (its ssm_step), in float32.
mx::array mamba_scan(const std::vector<mx::array> &in)
{
	if (in.size() != 8)
		throw std::invalid_argument("selective_scan takes u, delta, A, B, C, D, z, delta_bias");
	auto f = [](const mx::array &a) { return mx::astype(a, mx::float32); };
	// time-major views: [T, batch, dim] and [T, batch, dstate]
	auto u = mx::transpose(f(in[0]), {2, 0, 1});
	auto dt_raw = mx::transpose(f(in[1]), {2, 0, 1});
	auto A = f(in[2]);
	auto B = mx::transpose(f(in[3]), {2, 0, 1});
	auto C = mx::transpose(f(in[4]), {2, 0, 1});
	auto D = f(in[5]);
	auto z = mx::transpose(f(in[6]), {2, 0, 1});
	auto bias = f(in[7]);
	// softplus as mlx.nn.softplus writes it
	auto dt = mx::logaddexp(mx::add(dt_raw, bias), mx::array(0.0f));
	int T = u.shape(0);
	auto us = mx::split(u, T, 0), dts = mx::split(dt, T, 0), Bs = mx::split(B, T, 0),
	     Cs = mx::split(C, T, 0), zs = mx::split(z, T, 0);
	std::optional<mx::array> state;
	std::vector<mx::array> ys;
	ys.reserve(T);
	for (int t = 0; t < T; t++) {
		auto ut = mx::squeeze(us[t], 0), dtt = mx::squeeze(dts[t], 0);   // [b, d]
		auto Bt = mx::squeeze(Bs[t], 0), Ct = mx::squeeze(Cs[t], 0);     // [b, n]
		auto dA = mx::exp(mx::multiply(mx::expand_dims(dtt, -1), A));    // [b, d, n]
		auto dBu = mx::multiply(mx::expand_dims(mx::multiply(dtt, ut), -1),
					mx::expand_dims(Bt, 1));
		state = state ? mx::add(mx::multiply(*state, dA), dBu) : dBu;
		auto y = mx::squeeze(mx::matmul(*state, mx::expand_dims(Ct, -1)), -1); // [b, d]
		y = mx::add(y, mx::multiply(D, ut));
		auto zt = mx::squeeze(zs[t], 0);
		ys.push_back(mx::multiply(y, mx::multiply(zt, mx::sigmoid(zt))));
	}
	return mx::stack(ys, -1); // [b, d, T]
}

mx::array native(const std::string &op, const std::vector<mx::array> &in, const ks_mlx_call *c)
{
	if (op == "softmax")
		return mx::softmax(in.at(0), -1);
	if (op == "matmul")
		return mx::matmul(in.at(0), in.at(1));
	if (op == "scaled_dot_product_attention") {
		// q [b, heads, seqlen, d]; k, v [b, kv_heads, kv_seqlen, d]: MLX maps query head h
		// to kv head h / (heads / kv_heads) itself, as the task does
		auto q = in.at(0), k = in.at(1), v = in.at(2);
		float scale = 1.0f / std::sqrt((float)q.shape(-1));
		const int seqlen = q.shape(-2), kv_seqlen = k.shape(-2);
		std::string mask_mode;
		std::optional<mx::array> mask;
		if (param(c, "causal") != 0) {
			// the task's mask is top-left aligned (query i sees keys j <= i); MLX's
			// "causal" is bottom-right aligned, the same only when the lengths are equal,
			// so otherwise the mask goes as a boolean array [seqlen, kv_seqlen]
			if (seqlen == kv_seqlen) {
				mask_mode = "causal";
			} else {
				auto i = mx::reshape(mx::arange(seqlen, mx::int32), {seqlen, 1});
				auto j = mx::reshape(mx::arange(kv_seqlen, mx::int32), {1, kv_seqlen});
				mask_mode = "array";
				mask = mx::less_equal(j, i);
			}
		}
		// MLX's GPU kernels keep the scores in float32; its CPU fallback rounds them to
		// the inputs' f16 (the large-logits check then fails by 10x atol, measured), so
		// on the CPU the op runs on float32 copies
		if (mx::default_device() == mx::Device::cpu && q.dtype() != mx::float32) {
			auto f = [](const mx::array &a) { return mx::astype(a, mx::float32); };
			return mx::fast::scaled_dot_product_attention(f(q), f(k), f(v), scale,
								      mask_mode, mask);
		}
		return mx::fast::scaled_dot_product_attention(q, k, v, scale, mask_mode, mask);
	}
	if (op == "mamba_selective_scan")
		return mamba_scan(in);
	throw std::invalid_argument("unknown native op '" + op +
				    "' (known: softmax, matmul, scaled_dot_product_attention, "
				    "mamba_selective_scan)");
}

mx::Shape shape_of(const int *dims, int ndim)
{
	mx::Shape s;
	for (int i = 0; i < ndim; i++)
		s.push_back(dims[i]);
	return s;
}

} // namespace

extern "C" {

int ks_mlx_shim_info(struct ks_mlx_info *out, char *err, size_t n)
{
	memset(out, 0, sizeof(*out));
	return guard("shim_info",
		[&] {
			snprintf(out->version, sizeof(out->version), "%s", mx::version());
			out->metal = mx::metal::is_available();
			out->cuda = mx::cu::is_available();
			snprintf(out->device, sizeof(out->device), "cpu");
			if (out->metal || out->cuda) {
				auto &info = mx::device_info(mx::Device(mx::Device::gpu));
				auto it = info.find("device_name");
				if (it != info.end() && std::holds_alternative<std::string>(it->second))
					snprintf(out->device, sizeof(out->device), "%s",
						 std::get<std::string>(it->second).c_str());
				else
					snprintf(out->device, sizeof(out->device), "gpu");
			}
		},
		err, n);
}

void ks_mlx_shim_lib_dir(char *out, size_t n)
{
	Dl_info info;
	out[0] = '\0';
	if (dladdr((void *)&mx::version, &info) && info.dli_fname) {
		snprintf(out, n, "%s", info.dli_fname);
		char *slash = strrchr(out, '/');
		if (slash)
			*slash = '\0';
	}
}

int ks_mlx_shim_init(int use_gpu, char *err, size_t n)
{
	return guard("shim_init",
		[&] {
			mx::set_default_device(mx::Device(use_gpu ? mx::Device::gpu : mx::Device::cpu));
		},
		err, n);
}

int ks_mlx_arr_from_host(const void *data, int dtype, const int *shape, int ndim,
			 struct ks_mlx_arr **out, char *err, size_t n)
{
	*out = nullptr;
	return guard("arr_from_host",
		[&] {
			auto dt = to_mx(dtype);
			auto s = shape_of(shape, ndim);
			size_t bytes = mx::size_of(dt);
			for (int d : s)
				bytes *= (size_t)d;
			// a copy MLX owns (and frees): the runner's host buffer stays its own
			void *copy = malloc(bytes ? bytes : 1);
			if (!copy)
				throw std::bad_alloc();
			memcpy(copy, data, bytes);
			auto a = std::make_unique<ks_mlx_arr>(
				ks_mlx_arr{mx::array(copy, s, dt, [](void *p) { free(p); })});
			mx::eval(a->a);
			*out = a.release();
		},
		err, n);
}

int ks_mlx_arr_to_host(struct ks_mlx_arr *a, void *dst, size_t bytes, char *err, size_t n)
{
	return guard("arr_to_host",
		[&] {
			auto c = a->a.flags().row_contiguous ? a->a : mx::contiguous(a->a);
			mx::eval(c);
			if (c.nbytes() != bytes)
				throw std::invalid_argument("the array holds " + std::to_string(c.nbytes()) +
							    " bytes, the tensor " + std::to_string(bytes));
			memcpy(dst, c.data<void>(), bytes);
		},
		err, n);
}

void ks_mlx_arr_free(struct ks_mlx_arr *a)
{
	delete a;
}

int ks_mlx_prog_new(const struct ks_mlx_prog_desc *d, struct ks_mlx_prog **out, char *err,
		    size_t n)
{
	*out = nullptr;
	return guard("prog_new",
		[&] {
			auto p = std::make_unique<ks_mlx_prog>();
			p->flavour = d->flavour;
			p->native = d->native ? d->native : "";
			p->name = d->name ? d->name : "kernel";
			p->header = d->header ? d->header : "";
			p->body = d->body ? d->body : "";
			for (int i = 0; i < d->ninputs; i++)
				p->inputs.push_back(d->input_names[i]);
			for (int i = 0; i < d->noutputs; i++)
				p->outputs.push_back(d->output_names[i]);
			*out = p.release();
		},
		err, n);
}

void ks_mlx_prog_free(struct ks_mlx_prog *p)
{
	delete p;
}

int ks_mlx_prog_call(struct ks_mlx_prog *p, struct ks_mlx_arr *const *in,
		     const struct ks_mlx_call *c, struct ks_mlx_arr **out, char *err, size_t n)
{
	return guard("prog_call",
		[&] {
			std::vector<mx::array> inputs;
			for (size_t i = 0; i < p->inputs.size(); i++)
				inputs.push_back(in[i]->a);
			std::vector<mx::array> outs;
			if (p->flavour == 0) {
				auto r = native(p->native, inputs, c);
				auto want = shape_of(c->out_shapes[0], c->out_ndims[0]);
				if (r.shape() != want)
					throw std::invalid_argument("native op '" + p->native +
								    "' gave a shape other than the task's output");
				outs.push_back(mx::contiguous(mx::astype(r, to_mx(c->out_dtypes[0]))));
			} else {
				if (p->flavour == 1 && (!p->fn || p->fn_smem != c->shared_memory)) {
					p->fn = mx::fast::cuda_kernel(p->name, p->inputs, p->outputs,
								      p->body, p->header, true,
								      c->shared_memory);
					p->fn_smem = c->shared_memory;
				} else if (p->flavour == 2 && !p->fn) {
					p->fn = mx::fast::metal_kernel(p->name, p->inputs, p->outputs,
								       p->body, p->header, true, false);
				}
				std::vector<mx::Shape> shapes;
				std::vector<mx::Dtype> dtypes;
				for (size_t i = 0; i < p->outputs.size(); i++) {
					shapes.push_back(shape_of(c->out_shapes[i], c->out_ndims[i]));
					dtypes.push_back(to_mx(c->out_dtypes[i]));
				}
				std::vector<std::pair<std::string, mx::fast::TemplateArg>> targs;
				for (int i = 0; i < c->ntargs; i++) {
					mx::fast::TemplateArg v;
					if (c->targ_kinds[i] == 1)
						v = c->targ_values[i] != 0;
					else if (c->targ_kinds[i] == 2)
						v = to_mx(c->targ_values[i]);
					else
						v = c->targ_values[i];
					targs.emplace_back(c->targ_names[i], v);
				}
				std::optional<float> init;
				if (c->has_init)
					init = c->init;
				outs = (*p->fn)(inputs, shapes, dtypes,
						{c->grid[0], c->grid[1], c->grid[2]},
						{c->threadgroup[0], c->threadgroup[1], c->threadgroup[2]},
						targs, init, trace() != nullptr, {});
			}
			for (size_t i = 0; i < outs.size(); i++)
				out[i] = new ks_mlx_arr{outs[i]};
		},
		err, n);
}

int ks_mlx_eval(struct ks_mlx_arr *const *arrs, int count, uint64_t *gpu_ns, char *err,
		size_t n)
{
	*gpu_ns = 0;
	return guard("eval",
		[&] {
			std::vector<mx::array> v;
			for (int i = 0; i < count; i++)
				v.push_back(arrs[i]->a);
			float ms = 0;
			std::string cuda_err;
			int rc = ks_mlx_cuda_eval(v, &ms, cuda_err);
			if (rc < 0)
				throw std::runtime_error(cuda_err);
			if (rc > 0)
				mx::eval(v);
			else
				*gpu_ns = (uint64_t)((double)ms * 1e6);
		},
		err, n);
}

} // extern "C"
