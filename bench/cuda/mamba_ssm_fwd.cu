// Torch extension around mamba_ssm's fused selective-scan forward kernel, for
// bench/cuda/selective_scan.py.  Only this binding is ksearch's: the kernel itself
// (selective_scan_fwd_kernel.cuh and the headers it includes) comes from the public
// repository state-spaces/mamba, csrc/selective_scan, which the bench script's caller copies
// into a git-ignored folder and passes as an include path (it is never part of this
// repository).
//
// What it instantiates: the kernel templates mamba_ssm itself dispatches to for real A
// (float weights), variable B and C with one group, delta_softplus, optional z and fp16
// inputs, with mamba_ssm's own choice of threads and items per thread by sequence length
// and its even-length switch.  The other combinations (bf16, f32, complex A, fixed B or C)
// are left out to keep the build short; the launch is the same as selective_scan_fwd_cuda's.
// Outputs and the chunk-state scratch are passed in preallocated, so a timed call is the
// kernel launch alone.
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

#include "selective_scan_fwd_kernel.cuh"

template <int kNThreads, int kNItems, typename input_t>
static void launch(SSMParamsBase &p, cudaStream_t stream)
{
	BOOL_SWITCH(p.seqlen % (kNThreads * kNItems) == 0, kIsEvenLen, [&] {
		BOOL_SWITCH(p.z_ptr != nullptr, kHasZ, [&] {
			using K = Selective_Scan_fwd_kernel_traits<kNThreads, kNItems, 1, kIsEvenLen,
								   true, true, kHasZ, input_t, float>;
			constexpr int smem = K::kSmemSize + MAX_DSTATE * sizeof(typename K::scan_t);
			auto kernel = &selective_scan_fwd_kernel<K>;
			if (smem >= 48 * 1024)
				C10_CUDA_CHECK(cudaFuncSetAttribute(
					kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
			kernel<<<dim3(p.batch, p.dim), K::kNThreads, smem, stream>>>(p);
			C10_CUDA_KERNEL_LAUNCH_CHECK();
		});
	});
}

// out = selective_scan_fn(u, delta, A, B, C, D, z, delta_bias, delta_softplus=True), with
// u, delta, z, out, out_z (b, d, L) fp16; A (d, n), D, delta_bias (d) f32; B, C (b, 1, n, L)
// fp16; x (b, d, ceil(L / 2048), 2 n) f32 scratch.  With z, the gated result is out_z.
void fwd(at::Tensor u, at::Tensor delta, at::Tensor A, at::Tensor B, at::Tensor C, at::Tensor D,
	 c10::optional<at::Tensor> z, at::Tensor delta_bias, at::Tensor out, at::Tensor out_z,
	 at::Tensor x)
{
	TORCH_CHECK(u.scalar_type() == at::ScalarType::Half && A.scalar_type() == at::ScalarType::Float,
		    "fp16 activations and f32 A only");
	TORCH_CHECK(u.is_contiguous() && delta.is_contiguous() && B.is_contiguous() &&
		    C.is_contiguous() && out.is_contiguous() && A.is_contiguous());
	const int64_t batch = u.size(0), dim = u.size(1), seqlen = u.size(2), dstate = A.size(1);
	TORCH_CHECK(B.dim() == 4 && B.size(1) == 1 && B.size(2) == dstate && B.size(3) == seqlen);
	TORCH_CHECK(dstate <= 256);
	SSMParamsBase p;
	memset(&p, 0, sizeof(p));
	p.batch = batch, p.dim = dim, p.seqlen = seqlen, p.dstate = dstate;
	p.n_groups = 1, p.n_chunks = (seqlen + 2047) / 2048, p.dim_ngroups_ratio = dim;
	p.is_variable_B = p.is_variable_C = true;
	p.delta_softplus = true;
	p.u_ptr = u.data_ptr(), p.delta_ptr = delta.data_ptr(), p.A_ptr = A.data_ptr();
	p.B_ptr = B.data_ptr(), p.C_ptr = C.data_ptr(), p.D_ptr = D.data_ptr();
	p.delta_bias_ptr = delta_bias.data_ptr(), p.out_ptr = out.data_ptr(), p.x_ptr = x.data_ptr();
	p.A_d_stride = A.stride(0), p.A_dstate_stride = A.stride(1);
	p.B_batch_stride = B.stride(0), p.B_group_stride = B.stride(1), p.B_dstate_stride = B.stride(2);
	p.C_batch_stride = C.stride(0), p.C_group_stride = C.stride(1), p.C_dstate_stride = C.stride(2);
	p.u_batch_stride = u.stride(0), p.u_d_stride = u.stride(1);
	p.delta_batch_stride = delta.stride(0), p.delta_d_stride = delta.stride(1);
	p.out_batch_stride = out.stride(0), p.out_d_stride = out.stride(1);
	if (z.has_value()) {
		TORCH_CHECK(z->is_contiguous() && out_z.is_contiguous());
		p.z_ptr = z->data_ptr(), p.out_z_ptr = out_z.data_ptr();
		p.z_batch_stride = z->stride(0), p.z_d_stride = z->stride(1);
		p.out_z_batch_stride = out_z.stride(0), p.out_z_d_stride = out_z.stride(1);
	}
	cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
	// mamba_ssm's selective_scan_fwd_cuda: threads and items per thread by sequence length
	if (seqlen <= 128)
		launch<32, 4, at::Half>(p, stream);
	else if (seqlen <= 256)
		launch<32, 8, at::Half>(p, stream);
	else if (seqlen <= 512)
		launch<32, 16, at::Half>(p, stream);
	else if (seqlen <= 1024)
		launch<64, 16, at::Half>(p, stream);
	else
		launch<128, 16, at::Half>(p, stream);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
	m.def("fwd", &fwd, "mamba_ssm selective_scan_fwd (fp16, real A, variable B and C)");
}
