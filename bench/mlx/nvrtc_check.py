#!/usr/bin/env python3
"""Compile CUDA-flavour .mlx kernels the way MLX's cuda_kernel does, with NVRTC, no GPU needed.

    python3 bench/mlx/nvrtc_check.py --mlx-src DIR [--arch sm_90a] TASK_YAML ROWS=V,COLS=V FILE.mlx...

For each file it writes the source MLX 0.32 generates (mlx/backend/cuda/custom_kernel.cpp,
build_kernel: MLX's default header, the file's header, the signature from the task's
tensors, the template args as constexpr lines, the body) and compiles it with NVRTC's
options as MLX passes them (jit_module.cpp: --device-as-default-execution-space,
--gpu-architecture, include paths).  The params given are the workload's; knob values are
the template's defaults (or NAME=V among the params).  MLX's own device headers
(mlx/backend/cuda/device/*.cuh) are compiled into libmlx.so, not shipped in the wheel:
--mlx-src names a checkout of MLX's source that has them.  Prints one line per file,
"ok" or the log; exit 1 when one fails.  Where this machine has no GPU, this is how a
kernel file is known to compile for MLX before it runs.
"""
import argparse
import ctypes
import os
import re
import sys

DTYPES = {"f32": "float", "f16": "__half", "bf16": "__nv_bfloat16", "i32": "int32_t",
          "i64": "int64_t", "f64": "double"}


def task_tensors(path):
    """[(name, dtype, is_output)] in the task's order (inputs, then outputs)."""
    text = open(path).read()
    out = []
    for section, is_out in (("inputs", False), ("outputs", True)):
        m = re.search(r"^%s:\n((?:  .*\n)+)" % section, text, re.M)
        for line in (m.group(1).splitlines() if m else []):
            t = re.match(r"\s+(\w+):\s*\{dtype:\s*(\w+)", line)
            if t:
                out.append((t.group(1), t.group(2), is_out))
    return out


def split_kernel(path):
    """(knob defaults, extra template lines, header, body) of a .mlx file."""
    text = open(path).read()
    knobs = {}
    block = re.search(r"@ksearch(.*?)@end", text, re.S)
    if block:
        for name, default in re.findall(r"^\s+(\w+):\s*\{values:.*?default:\s*([\w.-]+)",
                                        block.group(1), re.M):
            knobs[name] = default
    for name, value in re.findall(r"^#define\s+(\w+)\s+(\S+)", text, re.M):
        knobs[name] = value
    lines = text.splitlines()
    header, body, where = [], [], None
    templates = []
    for line in lines:
        if line.strip() == "// @mlx header":
            where = header
            continue
        if line.strip() == "// @mlx body":
            where = body
            continue
        if where is body:
            body.append(line)
        elif where is header:
            header.append(line)
        else:
            t = re.match(r"//\s*@mlx\s+template:\s*(\w+)\s*=\s*(.+)", line)
            if t:
                templates.append((t.group(1), t.group(2).strip()))
    return knobs, templates, "\n".join(header) + "\n", "\n".join(body)


def build_source(name, tensors, targs, header, body):
    src = '\n#include "mlx/backend/cuda/device/utils.cuh"\n\n#include <cooperative_groups.h>\n\n'
    src += header
    src += "namespace mlx::core::cu {\n\nnamespace cg = cooperative_groups;\n\n"
    src += "__global__ void custom_kernel_%s(\n" % name
    ins = [t for t in tensors if not t[2]]
    outs = [t for t in tensors if t[2]]
    for n, dt, _ in ins:
        src += "    const %s* %s,\n" % (DTYPES[dt], n)
    for i, (n, dt, _) in enumerate(outs):
        src += "    %s* %s%s" % (DTYPES[dt], n, ",\n" if i + 1 < len(outs) else ") {\n")
    for k, v in targs:
        if v in ("true", "false"):
            src += "  constexpr bool %s = %s;\n" % (k, v)
        elif v in DTYPES:
            src += "  using %s = %s;\n" % (k, DTYPES[v])
        else:
            src += "  constexpr int %s = %s;\n" % (k, v)
    src += "\n" + body + "\n}\n\n} // namespace mlx::core::cu\n"
    return src


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlx-src", required=True, help="MLX source checkout (mlx/backend/cuda/device)")
    ap.add_argument("--mlx-include", default=None, help="the wheel's mlx/include (CCCL)")
    ap.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("task_yaml")
    ap.add_argument("params")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    nvrtc = ctypes.CDLL(os.path.join(a.cuda, "lib64", "libnvrtc.so"))
    params = [p.split("=") for p in a.params.split(",") if p]
    tensors = task_tensors(a.task_yaml)
    task = re.search(r"^name:\s*(\w+)", open(a.task_yaml).read(), re.M).group(1)
    incs = [a.mlx_src]
    if a.mlx_include:
        incs += [a.mlx_include, os.path.join(a.mlx_include, "cccl")]
    incs.append(os.path.join(a.cuda, "include"))
    opts = [b"--device-as-default-execution-space", ("--gpu-architecture=" + a.arch).encode()]
    opts += [("--include-path=" + i).encode() for i in incs]
    failed = 0
    for f in a.files:
        knobs, templates, header, body = split_kernel(f)
        given = dict(params)
        targs = [(k, v) for k, v in params if k not in knobs]
        targs += [(k, given.get(k, v)) for k, v in knobs.items()]
        targs += templates
        src = build_source(task, tensors, targs, header, body)
        prog = ctypes.c_void_p()
        nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None)
        arr = (ctypes.c_char_p * len(opts))(*opts)
        rc = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value + 1)
        nvrtc.nvrtcGetProgramLog(prog, log)
        nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
        if rc == 0:
            print("ok   %s (%s)" % (f, " ".join("%s=%s" % t for t in targs)))
        else:
            failed += 1
            print("FAIL %s (%s):\n%s" % (f, " ".join("%s=%s" % t for t in targs),
                                         log.value.decode(errors="replace")[:3000]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
