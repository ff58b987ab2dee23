#!/usr/bin/env python3
"""Compile-check the CUDA kernels of a `ksearch export --to mlx` module without a GPU.

    python3 bench/mlx/cuda_kernel_check.py MODULE.py TASK --mlx-src DIR [--ksearch BIN]

Every workload and check `ksearch tasks show TASK --backend mlx` lists is launched through
the module's function with mx.fast.cuda_kernel replaced by a recorder; the recorder writes
the source MLX would generate (mlx/backend/cuda/custom_kernel.cpp, build_kernel: MLX's
default header, the kernel's header, the signature from the inputs' dtypes, the template
args as constexpr ints, the body) and compiles each distinct one twice:

  - with NVRTC and MLX's options (--device-as-default-execution-space,
    --gpu-architecture=sm_90a, MLX's device headers from DIR and the CUDA headers), as MLX
    compiles it at its first eval;
  - with nvcc -arch=sm_90a -cubin -Xptxas -v, for registers, spills and shared memory.

DIR is an MLX source tree (mlx/backend/cuda/device/utils.cuh under it).  It also checks that
the launch (grid, threadgroup, dynamic shared memory) fits a block of an sm_90 GPU.  Exit 0
when everything compiles.  Needs MLX (the CPU build will do) and CUDA 12 or later.
"""
import argparse
import ctypes
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import mlx.core as mx

CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
MLX_DEFAULT_HEADER = """
#include "mlx/backend/cuda/device/utils.cuh"

#include <cooperative_groups.h>

"""
CUDA_TYPES = {mx.float16: "__half", mx.bfloat16: "__nv_bfloat16", mx.float32: "float",
              mx.int32: "int32_t", mx.int64: "int64_t", mx.bool_: "bool"}


def build_source(name, input_names, output_names, source, header, inputs, out_dtypes, targs):
    """What MLX 0.32's build_kernel writes for these arguments."""
    s = MLX_DEFAULT_HEADER + header
    s += "namespace mlx::core::cu {\n\nnamespace cg = cooperative_groups;\n\n"
    s += f"__global__ void {name}(\n"
    for n, a in zip(input_names, inputs):
        s += f"    const {CUDA_TYPES[a.dtype]}* {n},\n"
        if a.ndim > 0:
            if n + "_shape" in source:
                s += f"    const __grid_constant__ Shape {n}_shape,\n"
            if n + "_strides" in source:
                s += f"    const __grid_constant__ Strides {n}_strides,\n"
            if n + "_ndim" in source:
                s += f"    const __grid_constant__ int {n}_ndim,\n"
    for i, (n, t) in enumerate(zip(output_names, out_dtypes)):
        s += f"    {CUDA_TYPES[t]}* {n}" + (",\n" if i < len(output_names) - 1 else ") {\n")
    for n, v in targs:
        if isinstance(v, bool):
            s += f"  constexpr bool {n} = {'true' if v else 'false'};\n"
        elif isinstance(v, int):
            s += f"  constexpr int {n} = {v};\n"
        else:
            s += f"  using {n} = {CUDA_TYPES[v]};\n"
    if targs:
        s += "\n"
    return s + source + "\n}\n\n} // namespace mlx::core::cu\n"


class Recorder:
    def __init__(self):
        self.launches = []

    def cuda_kernel(self, name, input_names, output_names, source, header="",
                    ensure_row_contiguous=True, shared_memory=0):
        def call(inputs, grid, threadgroup, output_shapes, output_dtypes, template=(),
                 init_value=None, verbose=False, stream=None):
            hashed = "".join(f"_{'t' if v is True else 'f' if v is False else v}"
                             for _, v in template)
            src = build_source(f"custom_kernel_{name}{hashed}", input_names, output_names,
                               source, header, inputs, output_dtypes, list(template))
            self.launches.append((name + hashed, src, grid, threadgroup, shared_memory))
            return [mx.zeros(s, dtype=t) for s, t in zip(output_shapes, output_dtypes)]
        return call


def task_shapes(ksearch, task):
    """(tensors [(name, dtype, shape exprs)], [params dict]) from `ksearch tasks show`."""
    out = subprocess.run([ksearch, "tasks", "show", task, "--backend", "mlx"],
                         capture_output=True, text=True, check=True).stdout
    tensors = [(m[1], m[2], [x.strip() for x in m[3].split(",")])
               for m in re.finditer(r"^  in\s+(\w+)\s+(\w+)\s+\[([^\]]*)\]", out, re.M)]
    sets = []
    for m in re.finditer(r"\(?((?:\w+=\d+ ?)+)\)?", out):
        kv = dict(p.split("=") for p in m[1].split())
        if kv and kv not in sets:
            sets.append({k: int(v) for k, v in kv.items()})
    return tensors, sets


def nvrtc_compile(lib, src, name, opts):
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), (name + ".cu").encode(), 0,
                                None, None)
    if rc:
        return f"nvrtcCreateProgram: {rc}"
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return None if rc == 0 else log.value.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("module")
    ap.add_argument("task")
    ap.add_argument("--mlx-src", required=True, help="an MLX source tree (its mlx/ folder)")
    ap.add_argument("--ksearch", default="build/ksearch")
    ap.add_argument("--keep", help="write the generated sources into this folder")
    a = ap.parse_args()

    spec = importlib.util.spec_from_file_location("ks_exported", a.module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rec = Recorder()
    mx.fast.cuda_kernel = rec.cuda_kernel  # the module looks it up at call time
    mod._available = lambda flavour: flavour == "cuda"
    fn = getattr(mod, a.task)
    tensors, sets = task_shapes(a.ksearch, a.task)
    dtypes = {"f16": mx.float16, "f32": mx.float32, "bf16": mx.bfloat16, "i32": mx.int32}
    for params in sets:
        inputs = [mx.zeros([eval(x, {}, dict(params)) for x in shape], dtype=dtypes[dt])
                  for _, dt, shape in tensors]
        fn(*inputs)

    lib = ctypes.CDLL(os.path.join(CUDA_HOME, "lib64", "libnvrtc.so"))
    opts = ["--device-as-default-execution-space", "--gpu-architecture=sm_90a",
            f"--include-path={a.mlx_src}", f"--include-path={CUDA_HOME}/include",
            f"--include-path={CUDA_HOME}/include/cccl"]
    seen, bad = set(), 0
    tmp = a.keep or tempfile.mkdtemp(prefix="ks-mlx-check-")
    os.makedirs(tmp, exist_ok=True)
    for name, src, grid, tg, smem in rec.launches:
        threads = tg[0] * tg[1] * tg[2]
        if threads > 1024 or smem > 227 * 1024:
            print(f"FAIL {name}: block of {threads} threads, {smem} bytes of shared memory")
            bad += 1
        if src in seen:
            continue
        seen.add(src)
        log = nvrtc_compile(lib, src, name, opts)
        path = os.path.join(tmp, name + ".cu")
        with open(path, "w") as f:
            f.write(src)
        r = subprocess.run([os.path.join(CUDA_HOME, "bin", "nvcc"), "-arch=sm_90a", "-cubin",
                            "-std=c++17", "-Xptxas", "-v", f"-I{a.mlx_src}", "-o",
                            path + ".cubin", path], capture_output=True, text=True)
        usage = " ".join(re.findall(r"Used \d+ registers|\d+ bytes spill stores|"
                                    r"\d+ bytes smem", r.stderr))
        status = "ok" if log is None and r.returncode == 0 else "FAIL"
        bad += status != "ok"
        print(f"{status} {name}: nvrtc {'ok' if log is None else 'error'}, nvcc "
              f"{'ok' if r.returncode == 0 else 'error'}; {usage}; dynamic smem {smem}")
        if log:
            print(log[-3000:])
        if r.returncode:
            print(r.stderr[-3000:])
    print(f"{len(rec.launches)} launches, {len(seen)} distinct kernels, {bad} failed")
    return 1 if bad or not rec.launches else 0


if __name__ == "__main__":
    sys.exit(main())
