# Two facts about MLX's CUDA build that the mlx backend depends on, measured in one Python
# process (docs/results/mlx-h200.md, 2026-12-02):
#   1. a custom kernel that NVRTC rejects raises from mx.eval and mx.async_eval (with CUDA
#      graphs on or off): the runner can report COMPILE_ERROR with NVRTC's log;
#   2. how far mx.matmul on bfloat16 arrays is from float32 accumulation rounded once to
#      bfloat16 (the matmul_bf16 task's contract), per shape.
# On a GPU machine with MLX's CUDA build (bench/mlx/gpu_env.sh):
#   python3 bench/probes/cuda_diag.py              # and MLX_USE_CUDA_GRAPHS=0 python3 ...
# On MLX's CPU build the kernels report "No CUDA back-end" and the matmuls run on the CPU.
import os, sys, time
import numpy as np
import mlx.core as mx
print("mlx", mx.__version__, "graphs", os.environ.get("MLX_USE_CUDA_GRAPHS"), "device", mx.default_device())
x = mx.ones((256,), dtype=mx.float32)
def kern(src, name):
    return mx.fast.cuda_kernel(name=name, input_names=["x"], output_names=["y"], source=src)
good = "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < 256) y[i] = x[i] + 1.0f;"
bad1 = "threadgroup float partial[32];\nuint row = thread_position_in_grid.x;\nif (row < 256) y[row] = x[row] + partial[row % 32];"
bad2 = "this is not C++ at all;"
for label, src, mode in [("good", good, "eval"), ("bad1", bad1, "eval"), ("bad2", bad2, "eval"),
                         ("bad2-async", bad2 + " ", "async"), ("bad1-init", bad1 + "  ", "init")]:
    try:
        k = kern(src, "k_" + label.replace("-", "_"))
        kw = dict(inputs=[x], grid=(256, 1, 1), threadgroup=(128, 1, 1), output_shapes=[(256,)],
                  output_dtypes=[mx.float32])
        if mode == "init":
            kw["init_value"] = float("nan")
        t = time.time()
        out = k(**kw)[0]
        if mode == "async":
            mx.async_eval(out)
        mx.eval(out)
        a = np.array(out)
        print(label, "NO EXCEPTION", "%.2fs" % (time.time() - t), "first values", a[:4], "nan count", int(np.isnan(a).sum()))
    except Exception as ex:
        print(label, "EXCEPTION", type(ex).__name__, str(ex)[:300].replace("\n", " | "))
print("--- bf16 matmul accuracy (max abs err, rel L2) vs float32-accumulated, rounded to bf16")
rng = np.random.default_rng(0)
for (m, n, k) in [(9, 19, 4099), (9, 19, 4096), (64, 64, 4099), (512, 512, 4099), (9, 19, 512), (1, 19, 4099), (17, 33, 65)]:
    a = rng.standard_normal((m, k)).astype(np.float32); b = rng.standard_normal((k, n)).astype(np.float32)
    A = mx.array(a).astype(mx.bfloat16); B = mx.array(b).astype(mx.bfloat16)
    a64 = np.array(A.astype(mx.float32)).astype(np.float64); b64 = np.array(B.astype(mx.float32)).astype(np.float64)
    ref = a64 @ b64
    ref_bf = np.array(mx.array(ref.astype(np.float32)).astype(mx.bfloat16).astype(mx.float32)).astype(np.float64)
    got = np.array(mx.matmul(A, B).astype(mx.float32)).astype(np.float64)
    got32 = np.array(mx.matmul(A.astype(mx.float32), B.astype(mx.float32))).astype(np.float64)
    def st(g):
        return "max abs %.3g rel L2 %.2e out(1e-2+1e-2|r|) %d" % (np.abs(g - ref).max(), np.linalg.norm(g - ref) / np.linalg.norm(ref), int((np.abs(g - ref_bf) > 1e-2 + 1e-2 * np.abs(ref_bf)).sum()))
    print("m%d n%d k%d: bf16 matmul %s | ref rounded to bf16 %s | f32 matmul %s" % (m, n, k, st(got), st(ref_bf), st(got32)))
