#!/usr/bin/env python3
"""Side-by-side timing of ksearch's CUDA kernels against the library equivalents.

One process, one CUDA context (the kernels' shared libraries reuse torch's libcudart), the
same inputs for every implementation, repetitions interleaved (the order rotates each
round), L2 flushed before every timed call, CUDA events around each call on torch's
current stream.  Reports median and interquartile spread, the ratio to torch, and the
fraction of the ceilings measured by bench/cuda/ceilings.cu.

usage: compare.py --task softmax|matmul|matmul_bf16 --kernel BEST.cu [--kernel-label L]
                  [--extra LABEL=FILE.cu ...] [--baseline baseline.cu] --ceilings ceilings.json --out docs/results/X.md
                  [--run-json run.json] [--reps 30] [--command "..."]
"""
import argparse
import ctypes
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

import torch
import yaml

WRAPPERS = {
    "softmax": (
        "void softmax(const float *x, float *y, int32_t rows, int32_t cols, cudaStream_t stream);\n"
        'extern "C" void ks_bench_call(void **t, const int64_t *p, void *s)\n'
        "{ softmax((const float *)t[0], (float *)t[1], (int32_t)p[0], (int32_t)p[1], (cudaStream_t)s); }\n"
    ),
    "matmul": (
        "void matmul(const float *a, const float *b, float *c, int32_t m, int32_t n, int32_t k,\n"
        "            cudaStream_t stream);\n"
        'extern "C" void ks_bench_call(void **t, const int64_t *p, void *s)\n'
        "{ matmul((const float *)t[0], (const float *)t[1], (float *)t[2], (int32_t)p[0],\n"
        "         (int32_t)p[1], (int32_t)p[2], (cudaStream_t)s); }\n"
    ),
    "matmul_bf16": (
        "#include <cuda_bf16.h>\n"
        "void matmul_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, __nv_bfloat16 *c,\n"
        "                 int32_t m, int32_t n, int32_t k, cudaStream_t stream);\n"
        'extern "C" void ks_bench_call(void **t, const int64_t *p, void *s)\n'
        "{ matmul_bf16((const __nv_bfloat16 *)t[0], (const __nv_bfloat16 *)t[1],\n"
        "              (__nv_bfloat16 *)t[2], (int32_t)p[0], (int32_t)p[1], (int32_t)p[2],\n"
        "              (cudaStream_t)s); }\n"
    ),
}


def arch():
    major, minor = torch.cuda.get_device_capability()
    cc = major * 10 + minor
    return os.environ.get("KSEARCH_CUDA_ARCH", f"{cc}a" if cc in (90, 100, 103) else f"{cc}")


def build(task, src, workdir, name):
    """compile src plus a C-callable wrapper into a shared library; returns ctypes fn"""
    wrap = os.path.join(workdir, f"{name}_wrap.cu")
    with open(wrap, "w") as f:
        f.write("#include <cuda_runtime.h>\n#include <stdint.h>\n" + WRAPPERS[task])
    lib = os.path.join(workdir, f"{name}.so")
    a = arch()
    nvcc = os.environ.get("KSEARCH_NVCC", "nvcc")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cmd = [nvcc, "-O3", "-std=c++17", f"-gencode=arch=compute_{a},code=sm_{a}", "-lineinfo",
           "-cudart", "shared", "-shared", "-Xcompiler", "-fPIC", "-I", os.path.join(root, "include"),
           src, wrap, "-o", lib]
    subprocess.run(cmd, check=True)
    fn = ctypes.CDLL(lib).ks_bench_call
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p]
    fn.restype = None
    return fn


def ext_call(fn, tensors, params):
    ptrs = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
    vals = (ctypes.c_int64 * len(params))(*params)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    return lambda: fn(ptrs, vals, stream)


def quartiles(v):
    s = sorted(v)
    q = statistics.quantiles(s, n=4) if len(s) >= 4 else [s[0], statistics.median(s), s[-1]]
    return q[0], statistics.median(s), q[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True, choices=sorted(WRAPPERS))
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--kernel-label", default="ksearch best")
    ap.add_argument("--extra", action="append", default=[], metavar="LABEL=FILE.cu",
                    help="more kernels to time alongside (e.g. templates at their defaults)")
    ap.add_argument("--baseline")
    ap.add_argument("--ceilings", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--run-json")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--command", default=" ".join(sys.argv))
    args = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "ieee"
    torch.set_float32_matmul_precision("highest")
    dev = torch.device("cuda")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    task_dir = os.path.join(root, "tasks", args.task)
    with open(os.path.join(task_dir, "task.yaml")) as f:
        spec = yaml.safe_load(f)
    with open(args.ceilings) as f:
        ceil = json.load(f)

    work = tempfile.mkdtemp(prefix="ksbench-")
    impls = [(args.kernel_label, build(args.task, args.kernel, work, "best"))]
    for i, e in enumerate(args.extra):
        label, _, path = e.partition("=")
        try:
            impls.append((label, build(args.task, path, work, f"extra{i}")))
        except subprocess.CalledProcessError as err:
            print(f"skipping {label}: {err}", file=sys.stderr)
    if args.baseline:
        impls.append(("naive baseline", build(args.task, args.baseline, work, "base")))

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    rows = []
    for w in spec["workloads"]:
        if "backends" in w and "cuda" not in w["backends"]:
            continue
        if args.task == "softmax":
            r, c = w["rows"], w["cols"]
            x = torch.randn(r, c, device=dev, generator=gen) * 3
            outs = {}
            cands = []
            for label, fn in impls:
                if label == "naive baseline" and r * c > (1 << 24):
                    continue  # minutes of naive code: not needed for the ratio to torch
                y = torch.empty_like(x)
                cands.append((label, ext_call(fn, [x, y], [r, c]), [y]))
            holder = [torch.empty_like(x)]

            def torch_fn(x=x, holder=holder):
                holder[0] = torch.softmax(x, dim=-1)

            cands.append(("torch.softmax", torch_fn, holder))
            ref = torch.softmax(x.double(), dim=-1)
            nbytes, nflop = 8 * r * c, 5 * r * c
            label_w = f"rows={r} cols={c}"
        else:
            m, n, k = w["m"], w["n"], w["k"]
            bf16 = args.task == "matmul_bf16"
            dt = torch.bfloat16 if bf16 else torch.float32
            a = torch.randn(m, k, device=dev, generator=gen).to(dt)
            b = torch.randn(k, n, device=dev, generator=gen).to(dt)
            cands = []
            for label, fn in impls:
                if label == "naive baseline" and m * n * k > (1 << 36):
                    continue
                cc = torch.empty(m, n, device=dev, dtype=dt)
                cands.append((label, ext_call(fn, [a, b, cc], [m, n, k]), [cc]))
            ct = torch.empty(m, n, device=dev, dtype=dt)

            def torch_fn(a=a, b=b, ct=ct):
                torch.matmul(a, b, out=ct)

            cands.append(("torch.matmul (cuBLAS, bf16)" if bf16 else
                          "torch.matmul (cuBLAS, fp32, TF32 off)", torch_fn, [ct]))
            ref = a.double() @ b.double()
            nbytes, nflop = a.element_size() * (m * k + k * n + m * n), 2 * m * n * k
            label_w = f"m={m} n={n} k={k}"
        # correctness of every output, then warm-up
        errs = {}
        for label, fn, out in cands:
            out[0].fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            d = (out[0].double() - ref).norm() / ref.norm()
            errs[label] = float(d) if torch.isfinite(d) else float("inf")
            for _ in range(2):
                fn()
        torch.cuda.synchronize()
        times = {label: [] for label, _, _ in cands}
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in cands]
        for rep in range(args.reps):
            order = list(range(len(cands)))
            order = order[rep % len(order):] + order[:rep % len(order)]
            for i in order:
                label, fn, _ = cands[i]
                flush.zero_()
                ev[i][0].record()
                fn()
                ev[i][1].record()
                torch.cuda.synchronize()
                times[label].append(ev[i][0].elapsed_time(ev[i][1]) * 1e3)  # us
        tmed = statistics.median(times[cands[-1][0]])
        for label, _, _ in cands:
            q1, med, q3 = quartiles(times[label])
            rate_gbs = nbytes / (med * 1e-6) / 1e9
            rate_tf = nflop / (med * 1e-6) / 1e12
            rows.append({
                "workload": label_w, "impl": label, "median_us": med,
                "spread_pct": (q3 - q1) / med * 100, "vs_torch": tmed / med,
                "gbs": rate_gbs, "tflops": rate_tf, "rel_l2": errs[label],
                "floor_ratio": med / (nbytes / (ceil["copy_tbs"] * 1e12) * 1e6),
                "pct_gemm": rate_tf / ceil["bf16_gemm_tflops" if args.task == "matmul_bf16"
                                          else "sgemm_tflops"] * 100,
            })
            print(f"{label_w:28s} {label:40s} {med:10.2f} us  x{tmed / med:5.2f} vs torch", flush=True)

    run = {}
    if args.run_json and os.path.exists(args.run_json):
        with open(args.run_json) as f:
            try:
                run = json.load(f)
            except ValueError:
                run = {}
        if not isinstance(run, dict):
            run = {}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(f"# CUDA {args.task}: ksearch's best kernel against {'torch.softmax' if args.task == 'softmax' else 'cuBLAS (torch.matmul)'}\n\n")
        f.write(f"Produced by `{args.command}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.\n\n")
        f.write(f"- device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}, CUDA {torch.version.cuda}\n")
        f.write(f"- measured ceilings (bench/cuda/ceilings.cu): device copy {ceil['copy_tbs']:.2f} TB/s, "
                f"cuBLAS SGEMM 4096^3 {ceil['sgemm_tflops']:.1f} TFLOP/s (fp32), bf16 GEMM 8192^3 {ceil['bf16_gemm_tflops']:.0f} TFLOP/s\n")
        f.write(f"- kernel: `{os.path.relpath(args.kernel, root) if args.kernel.startswith(root) else args.kernel}` ({args.kernel_label})\n")
        if run:
            best = run.get("best") or {}  # null when no candidate passed
            f.write(f"- ksearch run: `{run.get('run_dir', '')}`, speedup vs the naive baseline in ksearch's own timing: "
                    f"{best.get('speedup_vs_baseline', 'n/a')}\n")
        f.write(f"- method: one process, same inputs, {args.reps} interleaved repetitions per implementation, "
                "L2 flushed (2x L2 zeroed) before each call, CUDA events on torch's stream; median, "
                "spread = interquartile range / median; rel L2 error against float64\n\n")
        if args.task == "softmax":
            f.write("| workload | implementation | median us | spread | torch time / this | GB/s | time / memory floor | rel L2 err |\n")
            f.write("|---|---|---:|---:|---:|---:|---:|---:|\n")
            for r in rows:
                f.write(f"| {r['workload']} | {r['impl']} | {r['median_us']:.2f} | {r['spread_pct']:.1f}% | "
                        f"{r['vs_torch']:.3f} | {r['gbs']:.0f} | {r['floor_ratio']:.2f} | {r['rel_l2']:.1e} |\n")
            f.write("\nMemory floor = 8 bytes per element (read x, write y) at the measured copy bandwidth; "
                    "target: within 1.2x of it and at least at parity with torch (ratio >= 1).\n")
        else:
            ceiling = "bf16 GEMM" if args.task == "matmul_bf16" else "SGEMM"
            f.write(f"| workload | implementation | median us | spread | cuBLAS time / this | TFLOP/s | % of {ceiling} ceiling | rel L2 err |\n")
            f.write("|---|---|---:|---:|---:|---:|---:|---:|\n")
            for r in rows:
                f.write(f"| {r['workload']} | {r['impl']} | {r['median_us']:.1f} | {r['spread_pct']:.1f}% | "
                        f"{r['vs_torch']:.3f} | {r['tflops']:.2f} | {r['pct_gemm']:.0f}% | {r['rel_l2']:.1e} |\n")
            if args.task == "matmul_bf16":
                f.write("\nbf16 inputs and output, fp32 accumulation; torch.matmul with its default "
                        "settings (cuBLAS, which uses wgmma on Hopper). The ceiling is cuBLAS's own "
                        "bf16 GEMM at 8192^3.\n")
            else:
                f.write("\nTarget: fp32 matmul at least 0.7x of cuBLAS (ratio >= 0.7); TF32 is off in torch "
                        "and would fail the task's tolerance anyway.\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
