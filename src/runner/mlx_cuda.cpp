// ks_mlx_cuda_eval (mlx_cuda.h): events on MLX's own CUDA stream.  The CUDA driver and
// mlx::core::cu::get_command_encoder are looked up among the loaded objects (libmlx.so of
// the CUDA build links libcuda.so.1); on MLX's CPU build neither is there and the answer
// is 1.  MLX's header for the encoder needs fmt, which the wheels do not ship, so the stream
// is read where that header (mlx/backend/cuda/device.h, 0.32) puts it: CommandEncoder's
// first member is `Device& device_`, the second `CudaStream stream_`, a class holding one
// cudaStream_t.  It is checked before use: MLX creates its streams non-blocking, and a
// handle the driver does not know as such is not used (the answer is then 1).
#include "runner/mlx_cuda.h"

#include <cuda.h>
#include <dlfcn.h>

#include "mlx/backend/cuda/cuda.h"

namespace mlx::core::cu {
class CommandEncoder;
}

namespace {
// the first two members of mlx::core::cu::CommandEncoder (device.h): Device& device_;
// CudaStream stream_ (CudaHandle<cudaStream_t>: the handle alone, no virtual functions)
struct encoder_head {
	void *device;
	CUstream stream;
};
} // namespace

namespace mx = mlx::core;

namespace {

struct driver {
	CUresult (*event_create)(CUevent *, unsigned);
	CUresult (*event_record)(CUevent, CUstream);
	CUresult (*event_sync)(CUevent);
	CUresult (*event_elapsed)(float *, CUevent, CUevent);
	CUresult (*error_string)(CUresult, const char **);
	CUresult (*stream_flags)(CUstream, unsigned *);
	mx::cu::CommandEncoder &(*encoder)(mx::Stream);
	CUevent start, end;
	bool ok;
};

template <class F> void find(F &slot, const char *name)
{
	slot = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

driver &drv()
{
	static driver d = [] {
		driver v{};
		find(v.event_create, "cuEventCreate");
		find(v.event_record, "cuEventRecord");
		find(v.event_sync, "cuEventSynchronize");
		find(v.event_elapsed, "cuEventElapsedTime_v2"); // CUDA 12.8 on; cuda.h's name
		if (!v.event_elapsed)
			find(v.event_elapsed, "cuEventElapsedTime");
		find(v.error_string, "cuGetErrorString");
		find(v.stream_flags, "cuStreamGetFlags");
		find(v.encoder, "_ZN3mlx4core2cu19get_command_encoderENS0_6StreamE");
		v.ok = v.event_create && v.event_record && v.event_sync && v.event_elapsed &&
		       v.error_string && v.stream_flags && v.encoder;
		return v;
	}();
	return d;
}

std::string cuda_error(driver &d, CUresult r, const char *what)
{
	const char *s = nullptr;
	d.error_string(r, &s);
	return std::string(what) + ": " + (s ? s : "unknown CUDA error") + " (CUDA error " +
	       std::to_string((int)r) + ")";
}

} // namespace

int ks_mlx_cuda_eval(const std::vector<mx::array> &arrs, float *gpu_ms, std::string &err)
{
	driver &d = drv();
	auto s = mx::default_stream(mx::default_device());
	if (!d.ok || s.device != mx::Device::gpu || !mx::cu::is_available())
		return 1;
	mx::cu::CommandEncoder &enc = d.encoder(s);
	CUstream st = reinterpret_cast<const encoder_head *>(&enc)->stream;
	unsigned flags = 0;
	if (!st || d.stream_flags(st, &flags) != CUDA_SUCCESS || !(flags & CU_STREAM_NON_BLOCKING)) {
		d.ok = false; // not MLX's stream: this MLX's encoder is laid out otherwise
		return 1;
	}
	CUresult r = CUDA_SUCCESS;
	// created on first use, in MLX's context (made current on this thread by MLX's first
	// eval); where that fails, MLX's own eval it is
	if (!d.start && ((r = d.event_create(&d.start, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
			 (r = d.event_create(&d.end, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)) {
		d.ok = false;
		return 1;
	}
	if ((r = d.event_record(d.start, st)) != CUDA_SUCCESS) {
		err = cuda_error(d, r, "cuEventRecord");
		return -1;
	}
	mx::async_eval(arrs); // records, launches (one CUDA graph by default), commits
	if ((r = d.event_record(d.end, st)) != CUDA_SUCCESS ||
	    (r = d.event_sync(d.end)) != CUDA_SUCCESS) {
		err = cuda_error(d, r, "after the kernels on MLX's stream");
		return -1;
	}
	if ((r = d.event_elapsed(gpu_ms, d.start, d.end)) != CUDA_SUCCESS) {
		err = cuda_error(d, r, "cuEventElapsedTime");
		return -1;
	}
	mx::eval(arrs); // done already: MLX's completion handlers
	return 0;
}
