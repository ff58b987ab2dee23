#!/usr/bin/env python3
"""Side-by-side timing of CUDA attention kernels against torch's SDPA backends.

One process, one CUDA context (the kernels' shared libraries reuse torch's libcudart), the
same inputs (fp16, or bf16 with --dtype bf16) for every implementation, repetitions interleaved (the order rotates each
round), L2 flushed before every timed call, CUDA events around each call on torch's current
stream, recorded behind a short GPU spin so that host-side dispatch (SDPA picking its backend,
the ctypes call) overlaps the spin instead of being timed.  For every CUDA workload of
tasks/attention/task.yaml it times: the kernel under test, any --extra kernels (a template with knob values: LABEL=FILE.cu:BM=64,BN=64), the naive
baseline.cu, and torch.nn.functional.scaled_dot_product_attention with each backend forced:
FLASH_ATTENTION (FlashAttention-2), CUDNN_ATTENTION and MATH (materialise S, softmax, P V).
Reports median and interquartile spread, TFLOP/s by the task's flops, the ratio to FA2 and to
cuDNN, and each output's relative L2 error against an fp32 reference (torch math backend on
fp32 copies of the inputs, k and v repeated to every query head).

Shapes follow the task: q, o [batch, heads, seqlen, head_dim], k, v [batch, kv_heads,
kv_seqlen, head_dim] (a workload without kv_heads or kv_seqlen has kv_heads = heads,
kv_seqlen = seqlen); causal is top-left aligned (torch's is_causal).  For grouped-query
workloads (kv_heads < heads) each torch backend is first called with enable_gqa=True; one that
refuses it gets k and v repeated to every query head (repeat_interleave, done once outside the
timed call, so its time excludes the copy); the "gqa" column says which.  A backend that
refuses a shape (FlashAttention with is_causal and seqlen != kv_seqlen) is left out of that
workload's rows, with its reason on stderr.

usage: attention.py --kernel BEST.cu [--kernel-label L] [--dtype f16|bf16] [--extra LABEL=FILE.cu[:K=V,...]]
                    [--baseline baseline.cu] [--workloads 2,3] [--reps 20] --out X.md
                    [--command "..."] [--json X.json]
"""
import argparse
import concurrent.futures
import ctypes
import datetime
import json
import os
import statistics
import subprocess
import sys
import re
import tempfile

import torch
import torch.nn.functional as F
import yaml
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# the C-callable shim around a kernel's entry point, per element type: (type, header, entry)
DTYPES = {"f16": ("__half", "cuda_fp16.h", "attention", torch.half, "attention"),
          "bf16": ("__nv_bfloat16", "cuda_bf16.h", "attention_bf16", torch.bfloat16, "attention_bf16")}
WRAPPER = (
    "#include <{hdr}>\n#include <cuda_runtime.h>\n#include <stdint.h>\n"
    "void {fn}(const {t} *q, const {t} *k, const {t} *v, {t} *o, int32_t batch,\n"
    "          int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen,\n"
    "          int32_t head_dim, int32_t causal, cudaStream_t stream);\n"
    'extern "C" void ks_bench_call(void **t, const int64_t *p, void *s)\n'
    "{{ {fn}((const {t} *)t[0], (const {t} *)t[1], (const {t} *)t[2], ({t} *)t[3],\n"
    "        (int32_t)p[0], (int32_t)p[1], (int32_t)p[2], (int32_t)p[3], (int32_t)p[4],\n"
    "        (int32_t)p[5], (int32_t)p[6], (cudaStream_t)s); }}\n"
)
INCLUDE = re.compile(r"^[ \t]*//[ \t]*@ksearch include:[ \t]*(\S+)[ \t]*$", re.M)


def expand_includes(path):
    """the file's text with each `// @ksearch include: PATH` line replaced by PATH's text (PATH
    relative to the file's folder, one level), as ksearch reads kernel files (docs/tasks.md)"""
    with open(path) as f:
        text = f.read()
    base = os.path.dirname(os.path.abspath(path))

    def sub(m):
        with open(os.path.join(base, m.group(1))) as g:
            return g.read()
    return INCLUDE.sub(sub, text)
TORCH = [("torch SDPA flash (FA2)", SDPBackend.FLASH_ATTENTION),
         ("torch SDPA cuDNN", SDPBackend.CUDNN_ATTENTION),
         ("torch SDPA math (naive)", SDPBackend.MATH)]
FA2, CUDNN = TORCH[0][0], TORCH[1][0]
SLEEP_CYCLES = 400_000  # ~200 us at 2 GHz, longer than any implementation's host dispatch


def arch():
    major, minor = torch.cuda.get_device_capability()
    cc = major * 10 + minor
    return os.environ.get("KSEARCH_CUDA_ARCH", f"{cc}a" if cc in (90, 100, 103) else f"{cc}")


def build(spec, workdir, name, dtype):
    """FILE.cu[:K=V,...] plus a C-callable wrapper into a shared library; returns ctypes fn"""
    path, _, defs = spec.partition(":")
    src = os.path.join(workdir, f"{name}_src.cu")
    with open(src, "w") as f:
        f.write(expand_includes(path))
    t, hdr, fn, _, _ = DTYPES[dtype]
    wrap = os.path.join(workdir, f"{name}_wrap.cu")
    with open(wrap, "w") as f:
        f.write(WRAPPER.format(t=t, hdr=hdr, fn=fn))
    lib = os.path.join(workdir, f"{name}.so")
    a = arch()
    cmd = [os.environ.get("KSEARCH_NVCC", "nvcc"), "-O3", "-std=c++17",
           f"-gencode=arch=compute_{a},code=sm_{a}", "-lineinfo", "-cudart", "shared", "-shared",
           "-Xcompiler", "-fPIC", "-I", os.path.join(ROOT, "include")]
    cmd += [f"-D{d}" for d in defs.split(",") if d]
    subprocess.run(cmd + [src, wrap, "-o", lib], check=True)
    fn = ctypes.CDLL(lib).ks_bench_call
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p]
    fn.restype = None
    return fn


def ext_call(fn, tensors, params):
    ptrs = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
    vals = (ctypes.c_int64 * len(params))(*params)
    return lambda: fn(ptrs, vals, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))


def quartiles(v):
    s = sorted(v)
    q = statistics.quantiles(s, n=4) if len(s) >= 4 else [s[0], statistics.median(s), s[-1]]
    return q[0], statistics.median(s), q[2]


def sdpa(q, k, v, causal, backend, gqa=False):
    with sdpa_kernel([backend]):
        if gqa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))


def expand_kv(x, heads):
    """[b, kv_heads, s, d] to [b, heads, s, d]: query head h reads kv head h // (heads // kv_heads)"""
    return x if x.shape[1] == heads else x.repeat_interleave(heads // x.shape[1], dim=1)


def reference(q, k, v, causal):
    """fp32 math attention, a head group at a time so the scores stay under ~4 GiB"""
    b, h, l, _ = q.shape
    s = k.shape[2]
    step = max(1, (1 << 30) // (l * s))
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    qf = q.reshape(b * h, 1, l, -1)
    kf, vf = (expand_kv(x, h).reshape(b * h, 1, s, -1) for x in (k, v))
    of = out.view(b * h, 1, l, -1)
    for i in range(0, b * h, step):
        of[i:i + step] = sdpa(qf[i:i + step].float(), kf[i:i + step].float(),
                              vf[i:i + step].float(), causal, SDPBackend.MATH)
    return out


def task_flops(b, h, l, s, d, causal):
    """the task's flops: 4*batch*heads*head_dim per visible (query, key) pair, top-left causal"""
    if not causal:
        pairs = l * s
    elif l <= s:
        pairs = l * (l + 1) // 2
    else:
        pairs = s * (s + 1) // 2 + (l - s) * s
    return 4 * b * h * d * pairs


def wl_label(b, h, kvh, l, s, d, causal):
    """B1 H32 L2048 D128 for the shapes without GQA or a second length (the labels of the
    earlier tables), KV8 and Lkv200 added when they differ"""
    return (f"B{b} H{h}" + (f" KV{kvh}" if kvh != h else "") + f" L{l}" +
            (f" Lkv{s}" if s != l else "") + f" D{d}" + (" causal" if causal else ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True, help="FILE.cu[:K=V,...]")
    ap.add_argument("--kernel-label", default="ksearch best")
    ap.add_argument("--extra", action="append", default=[], metavar="LABEL=FILE.cu[:K=V,...]",
                    help="LABEL must not contain '='")
    ap.add_argument("--baseline")
    ap.add_argument("--workloads", help="indexes into the task's workloads (default: all CUDA ones)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", required=True)
    ap.add_argument("--json")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="f16",
                    help="f16: tasks/attention, bf16: tasks/attention_bf16 (its workloads, entry point)")
    ap.add_argument("--command", default=" ".join(sys.argv))
    args = ap.parse_args()

    dev = torch.device("cuda")
    elem, task_dir = DTYPES[args.dtype][3], DTYPES[args.dtype][4]
    with open(os.path.join(ROOT, "tasks", task_dir, "task.yaml")) as f:
        spec = yaml.safe_load(f)
    work = tempfile.mkdtemp(prefix="ksattn-")
    runs = [(args.kernel_label, args.kernel)]
    runs += [tuple(e.split("=", 1)) for e in args.extra]
    if args.baseline:
        runs.append(("naive baseline.cu", args.baseline))
    # nvcc runs single-threaded: compile everything at once
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        futs = [(label, pool.submit(build, path, work, f"k{i}", args.dtype))
                for i, (label, path) in enumerate(runs)]
    impls = []
    for label, fut in futs:
        try:
            impls.append((label, fut.result()))
        except subprocess.CalledProcessError as err:
            if not impls:
                raise  # the kernel under test itself
            print(f"skipping {label}: {err}", file=sys.stderr)

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    picked = [int(x) for x in args.workloads.split(",")] if args.workloads else None
    rows = []
    for wi, w in enumerate(spec["workloads"]):
        if picked is not None and wi not in picked:
            continue
        if picked is None and "backends" in w and "cuda" not in w["backends"]:
            continue
        b, h, l, d, causal = (w[x] for x in ("batch", "heads", "seqlen", "head_dim", "causal"))
        kvh, s = w.get("kv_heads", h), w.get("kv_seqlen", l)
        shape, kv_shape = (b, h, l, d), (b, kvh, s, d)
        q = torch.randn(shape, device=dev, generator=gen).to(elem)
        k, v = (torch.randn(kv_shape, device=dev, generator=gen).to(elem) for _ in range(2))
        ref = reference(q, k, v, causal)
        gqa = kvh != h
        kx, vx = None, None  # k and v repeated to every query head, made when first needed
        cands, how = [], {}
        for lab, fn in impls:
            o = torch.empty(shape, device=dev, dtype=elem)
            cands.append((lab, ext_call(fn, [q, k, v, o], [b, h, kvh, l, s, d, causal]), [o]))
            how[lab] = "native" if gqa else "-"
        for lab, backend in TORCH:
            holder = [torch.empty(shape, device=dev, dtype=elem)]
            # kvarg[0]: the k, v and enable_gqa of the call; the check below may switch it
            # to the repeated k and v when the backend refuses enable_gqa
            kvarg = [(k, v, gqa)]

            def fn(backend=backend, holder=holder, kvarg=kvarg, q=q, causal=causal):
                kk, vv, g = kvarg[0]
                holder[0] = sdpa(q, kk, vv, causal, backend, g)

            cands.append((lab, fn, holder, kvarg))
            how[lab] = "enable_gqa" if gqa else "-"
        # correctness of every output (poisoned first), then warm-up; an implementation
        # that cannot run this shape (a backend refusing it) is dropped with its reason
        errs, ok = {}, []
        for cand in cands:
            label, fn, out = cand[:3]
            out[0].fill_(float("nan"))
            try:
                try:
                    fn()
                    torch.cuda.synchronize()
                except (RuntimeError, TypeError) as err:
                    if not (gqa and len(cand) > 3):
                        raise RuntimeError(str(err)) from err
                    # this backend (or this torch) refuses enable_gqa: repeat k and v
                    print(f"{label}: enable_gqa refused ({str(err).splitlines()[0]}); "
                          "k, v repeated to every head outside the timed call", file=sys.stderr)
                    if kx is None:
                        kx, vx = expand_kv(k, h), expand_kv(v, h)
                    cand[3][0] = (kx, vx, False)
                    how[label] = "repeat_interleave (untimed)"
                    fn()
                    torch.cuda.synchronize()
            except RuntimeError as err:
                print(f"{label}: cannot run q {shape} k, v {kv_shape} causal {causal}: "
                      f"{str(err).splitlines()[0]}", file=sys.stderr)
                continue
            dd = (out[0].float() - ref).norm() / ref.norm()
            errs[label] = float(dd) if torch.isfinite(dd) else float("inf")
            for _ in range(2):
                fn()
            ok.append((label, fn, out))
        cands = ok
        torch.cuda.synchronize()
        times = {label: [] for label, _, _ in cands}
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in cands]
        slow = {label for label, _, _ in cands if "naive" in label}
        for rep in range(args.reps):
            order = list(range(len(cands)))
            order = order[rep % len(order):] + order[:rep % len(order)]
            for i in order:
                label, fn, _ = cands[i]
                if label in slow and rep >= 5:
                    continue  # the naive kernels take milliseconds; 5 reps say enough
                flush.zero_()
                # keep the GPU busy while the host records the start event and launches,
                # so host-side dispatch (SDPA's backend selection, ctypes) is not timed
                torch.cuda._sleep(SLEEP_CYCLES)
                ev[i][0].record()
                fn()
                ev[i][1].record()
                torch.cuda.synchronize()
                times[label].append(ev[i][0].elapsed_time(ev[i][1]) * 1e3)  # us
        flops = task_flops(b, h, l, s, d, causal)
        med = {label: statistics.median(times[label]) for label, _, _ in cands}
        wl = wl_label(b, h, kvh, l, s, d, causal)
        for label, _, _ in cands:
            q1, m, q3 = quartiles(times[label])
            rows.append({"workload": wl, "index": wi, "impl": label, "median_us": m,
                         "spread_pct": (q3 - q1) / m * 100, "tflops": flops / (m * 1e-6) / 1e12,
                         "vs_fa2": med[FA2] / m if FA2 in med else None,
                         "vs_cudnn": med[CUDNN] / m if CUDNN in med else None,
                         "rel_l2": errs[label], "reps": len(times[label]), "gqa": how[label]})
            r = rows[-1]
            print(f"{wl:28s} {label:44s} {m:10.1f} us {r['tflops']:7.1f} TFLOP/s  "
                  f"x{r['vs_fa2'] or 0:5.3f} FA2  x{r['vs_cudnn'] or 0:5.3f} cuDNN  "
                  f"err {r['rel_l2']:.1e}  gqa {r['gqa']}", flush=True)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("# CUDA attention: ksearch's kernel against torch SDPA (FlashAttention-2, cuDNN, math)\n\n")
        f.write(f"Produced by `{args.command}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.\n\n")
        f.write(f"- device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}, CUDA {torch.version.cuda}, "
                f"cuDNN {torch.backends.cudnn.version()}\n")
        f.write(f"- kernel under test: `{args.kernel}` ({args.kernel_label})\n")
        f.write(f"- method: one process, same {args.dtype} inputs (normal(0, 1)), {args.reps} interleaved repetitions "
                "(5 for the naive kernels), L2 flushed (2x L2 zeroed) before each call, then a ~200 us "
                "GPU spin (torch.cuda._sleep) so host dispatch is not timed, CUDA events on torch's stream; median, spread = interquartile range / median; TFLOP/s from the task's "
                "flops (4BHD times the visible (query, key) pairs: L*Lkv, causal top-left L(L+1)/2 when L <= Lkv, "
                "else Lkv(Lkv+1)/2 + (L-Lkv)Lkv); rel L2 error against fp32 math attention; "
                "workload KVn: n kv heads (grouped-query), Lkvn: n keys; gqa: how a torch backend got "
                "the grouped k and v (enable_gqa, or repeat_interleave outside the timed call), "
                "native for the ksearch kernels, - without GQA\n\n")
        f.write("| workload | implementation | median us | spread | TFLOP/s | FA2 time / this | cuDNN time / this | rel L2 err | gqa |\n")
        f.write("|---|---|---:|---:|---:|---:|---:|---:|---|\n")
        for r in rows:
            fa2 = f"{r['vs_fa2']:.3f}" if r["vs_fa2"] else "n/a"
            cud = f"{r['vs_cudnn']:.3f}" if r["vs_cudnn"] else "n/a"
            f.write(f"| {r['workload']} | {r['impl']} | {r['median_us']:.1f} | {r['spread_pct']:.1f}% | "
                    f"{r['tflops']:.1f} | {fa2} | {cud} | {r['rel_l2']:.1e} | {r['gqa']} |\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
