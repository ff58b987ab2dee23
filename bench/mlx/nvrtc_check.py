#!/usr/bin/env python3
"""Compile an MLX CUDA kernel file (.mlx) the way MLX 0.32's mx.fast.cuda_kernel does, with
NVRTC, without a GPU or MLX's CUDA build: a check that a kernel file's header and body
compile before they reach a GPU.

It mimics mlx/backend/cuda/custom_kernel.cpp (build_kernel: MLX's default header, the
file's header, `namespace mlx::core::cu {`, the generated signature, one `constexpr int`
per template arg, the body) and jit_module.cpp (nvrtcCreateProgram with MLX's device
headers as in-memory headers, --device-as-default-execution-space, --gpu-architecture,
include paths for the CUDA headers and CCCL).  `// @mlx include:` lines are resolved the
way the mlx backend resolves them (src/backend/mlx_include.c): the file of the task's
folder between #define and #undef lines for the knob values.

  python3 bench/mlx/nvrtc_check.py --mlx-src MLX_CHECKOUT --task-dir tasks/attention \\
      tasks/attention/templates/mlx/flash2.cuda.mlx --define BM=128 --define BN=32 \\
      --params batch=1,heads=32,kv_heads=32,seqlen=2048,kv_seqlen=2048,head_dim=128,causal=1

MLX_CHECKOUT is a clone of github.com/ml-explore/mlx (for mlx/backend/cuda/device/*).
Prints "compiled NAME: N bytes of CUBIN" or NVRTC's log, and exits 1 on a compile error.
"""
import argparse
import ctypes
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlx_file  # noqa: E402  (the task's tensors, the file's knobs)

# the headers MLX compiles custom kernels with (jit_module.cpp, g_include_names)
MLX_DEVICE = ["atomic_ops.cuh", "binary_ops.cuh", "cast_op.cuh", "config.h", "complex.cuh",
              "cute_dequant.cuh", "fp16_math.cuh", "gemm_sm70.cuh", "hadamard.cuh",
              "indexing.cuh", "qmm_naive.cuh", "qmm_sm80.cuh", "qmm_sm90.cuh",
              "scatter_ops.cuh", "unary_ops.cuh", "ternary_ops.cuh", "utils.cuh"]
DEFAULT_HEADER = '\n#include "mlx/backend/cuda/device/utils.cuh"\n\n#include <cooperative_groups.h>\n\n'
CUDA_TYPE = {"f32": "float", "f16": "__half", "bf16": "__nv_bfloat16", "i32": "int32_t"}


def split_kernel(text):
    """(leading #define pairs, header, body) of a kernel file, as ks_mlx_kernel_parse splits"""
    lines = text.split("\n")
    defines, header, body, where = [], [], [], "pre"
    for ln in lines:
        d = re.match(r"\s*//\s*@mlx\s+(\w+)", ln)
        if d and d.group(1) == "header" and where == "pre":
            where = "header"
            continue
        if d and d.group(1) == "body" and where != "body":
            where = "body"
            continue
        if where == "pre":
            m = re.match(r"\s*#define\s+(\w+)\s+(.+?)\s*$", ln)
            if m:
                defines.append((m.group(1), m.group(2)))
        elif where == "header":
            header.append(ln)
        else:
            body.append(ln)
    return defines, header, "\n".join(body)


def task_tensors(task_dir):
    """"name:dtype,..." of the task's inputs and of its outputs, in the task's order"""
    _, tensors = mlx_file.task_decl(task_dir)
    return [",".join("%s:%s" % (n, t) for n, t, o in tensors if o == out) for out in (False, True)]


def template_args(text, names):
    """(name, value) of each `// @mlx template: NAME = EXPR` line, evaluated as the mlx
    backend does (C operators; ceil_div, min, max) over the params, knobs and earlier ones"""
    out = []
    env = dict(names, ceil_div=lambda a, b: -(-a // b), min=min, max=max)
    for name, expr in re.findall(r"^\s*//\s*@mlx\s+template:\s*(\w+)\s*=\s*(.+?)\s*$", text, re.M):
        py = re.sub(r"!(?!=)", " not ", expr.replace("&&", " and ").replace("||", " or "))
        env[name] = int(eval(py.replace("/", "//"), {"__builtins__": {}}, env))
        out.append((name, str(env[name])))
    return out


def resolve(header, task_dir, macros):
    out = []
    for ln in header:
        m = re.match(r"\s*//\s*@mlx\s+include:\s*(\S+)\s*$", ln)
        if not m:
            out.append(ln)
            continue
        out += ["#define %s %s" % kv for kv in macros]
        out.append(open(os.path.join(task_dir, m.group(1))).read())
        out += ["#undef %s" % k for k, _ in macros]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel")
    ap.add_argument("--mlx-src", required=True)
    ap.add_argument("--task-dir", required=True)
    ap.add_argument("--define", action="append", default=[], help="NAME=VALUE (a knob)")
    ap.add_argument("--params", required=True, help="name=value,... in the task's order")
    ap.add_argument("--inputs", help="name:dtype,... (default: the task's inputs)")
    ap.add_argument("--outputs", help="name:dtype,... (default: the task's outputs)")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    ap.add_argument("--name", help="the kernel's name (default custom_kernel_TASK)")
    ap.add_argument("--keep", help="write the generated source here")
    ap.add_argument("--header-file", help="write the kernel's header here and hand NVRTC an "
                    "#include of it instead (bench/probes/header_cost.py's variant; absolute path)")
    ap.add_argument("--cubin", help="write the CUBIN here (for cuobjdump -sass)")
    ap.add_argument("--extra", action="append", default=[],
                    help="another NVRTC option (not MLX's), e.g. --ptxas-options=-v")
    ap.add_argument("--log", action="store_true", help="print NVRTC's log")
    a = ap.parse_args()

    ins, outs = task_tensors(a.task_dir)
    a.inputs = a.inputs or ins
    a.outputs = a.outputs or outs
    text = open(a.kernel).read()
    pre, header, body = split_kernel(text)
    # every knob, as the mlx backend passes them: --define, else the file's #define, else
    # the knob's default
    knobs = [tuple(d.split("=", 1)) for d in a.define]
    macros = knobs + [kv for kv in pre if kv[0] not in dict(knobs)]
    macros += [kv for kv in mlx_file.knob_defaults(text) if kv[0] not in dict(macros)]
    params = [tuple(p.split("=", 1)) for p in a.params.split(",")]
    targs = params + macros  # the params, then the knob values (docs/mlx.md)
    values = {n: int(v) for n, v in targs if re.fullmatch(r"-?\d+", v)}
    targs += template_args(text, values)  # then the `@mlx template:` lines

    a.name = a.name or "custom_kernel_" + os.path.basename(os.path.normpath(a.task_dir))
    header_text = resolve(header, a.task_dir, macros)
    if a.header_file:
        open(a.header_file, "w").write(header_text)
        header_text = '#include "%s"\n' % os.path.abspath(a.header_file)
    src = DEFAULT_HEADER + header_text
    src += "namespace mlx::core::cu {\n\nnamespace cg = cooperative_groups;\n\n"
    src += "__global__ void %s(\n" % a.name
    for spec in a.inputs.split(","):
        n, t = spec.split(":")
        src += "    const %s* %s,\n" % (CUDA_TYPE[t], n)
    outs = a.outputs.split(",")
    for i, spec in enumerate(outs):
        n, t = spec.split(":")
        src += "    %s* %s%s" % (CUDA_TYPE[t], n, ",\n" if i + 1 < len(outs) else ") {\n")
    for n, v in targs:
        src += "  constexpr int %s = %s;\n" % (n, v)
    src += "\n" + body + "\n}\n\n} // namespace mlx::core::cu\n"
    if a.keep:
        open(a.keep, "w").write(src)

    dev = os.path.join(a.mlx_src, "mlx/backend/cuda/device")
    names = ["mlx/backend/cuda/device/" + h for h in MLX_DEVICE]
    texts = [open(os.path.join(dev, h), "rb").read() for h in MLX_DEVICE]
    nv = ctypes.CDLL(os.path.join(a.cuda, "lib64", "libnvrtc.so"))
    prog = ctypes.c_void_p()
    arr = lambda xs: (ctypes.c_char_p * len(xs))(*xs)
    rc = nv.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"kernel.cu", len(texts),
                               arr(texts), arr([n.encode() for n in names]))
    assert rc == 0, "nvrtcCreateProgram: %d" % rc
    kname = ("mlx::core::cu::" + a.name).encode()
    nv.nvrtcAddNameExpression(prog, kname)
    inc = [os.path.join(a.cuda, "include"), os.path.join(a.cuda, "include", "cccl")]
    opts = [b"--device-as-default-execution-space", ("--gpu-architecture=" + a.arch).encode()]
    opts += [("--include-path=" + p).encode() for p in inc if os.path.isdir(p)]
    opts += [o.encode() for o in a.extra]
    rc = nv.nvrtcCompileProgram(prog, len(opts), arr(opts))
    size = ctypes.c_size_t()
    nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value + 1)
    nv.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace").strip()
    if rc != 0:
        print("NVRTC compile error (%d):\n%s" % (rc, text))
        return 1
    if a.log:
        print(text)
    nv.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    if a.cubin:
        cubin = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetCUBIN(prog, cubin)
        open(a.cubin, "wb").write(cubin.raw)
    warn = len(re.findall(r"warning", text))
    print("compiled %s (%s): %d bytes of CUBIN, %d NVRTC warnings" % (
        a.name, ",".join("%s=%s" % kv for kv in targs), size.value, warn))
    return 0


if __name__ == "__main__":
    sys.exit(main())
