#!/usr/bin/env python3
"""Side-by-side timing of ksearch's selective_scan kernels against mamba_ssm's fused kernel,
torch baselines and the memory floor, in one process on one GPU.

Implementations, all on the same fp16 inputs drawn like the task's (u, delta, z, B, C
N(0, 1); A = -exp(N(0, 1)); D U(0.5, 1.5); delta_bias U(-4, -1)):
  - ksearch kernels (--kernel, --extra, --baseline): compiled with nvcc into a shared library
    with a C wrapper (bench/cuda/compare.py's build), called through ctypes on torch's stream;
  - mamba_ssm's fused selective_scan_fwd (--mamba-src DIR: a copy of csrc/selective_scan of
    github.com/state-spaces/mamba; bench/cuda/mamba_ssm_fwd.cu is built against it with
    torch.utils.cpp_extension for the detected arch, with mamba_ssm's own nvcc flags), with z
    and, as an extra row, without z;
  - torch, f32 arithmetic: the per-token loop and a log-depth (Hillis-Steele) scan over L,
    timed on --torch-workloads only (they take milliseconds).
Correctness: relative L2 error of each output against a float64 per-token scan in torch.
Timing: like compare.py: interleaved repetitions, L2 flushed before each call, CUDA events.
The memory floor is the task's byte count over the device-to-device copy bandwidth measured
here (bytes read plus written, best of 10 copies of 1 GiB).

usage: selective_scan.py --kernel BEST.cu [--kernel-label L] [--extra LABEL=FILE.cu ...]
       [--baseline baseline.cu] [--mamba-src DIR] --out docs/results/cuda-selective_scan.md
       [--run-json run.json] [--reps 50] [--command "..."]
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import torch
import torch.nn.functional as F
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (build, ext_call, quartiles, arch)

compare.WRAPPERS["selective_scan"] = (
    "#include <cuda_fp16.h>\n"
    "void selective_scan(const __half *u, const __half *delta, const float *A, const __half *B,\n"
    "                    const __half *C, const float *D, const __half *z, const float *delta_bias,\n"
    "                    __half *y, int32_t batch, int32_t dim, int32_t seqlen, int32_t dstate,\n"
    "                    cudaStream_t stream);\n"
    'extern "C" void ks_bench_call(void **t, const int64_t *p, void *s)\n'
    "{ selective_scan((const __half *)t[0], (const __half *)t[1], (const float *)t[2],\n"
    "                 (const __half *)t[3], (const __half *)t[4], (const float *)t[5],\n"
    "                 (const __half *)t[6], (const float *)t[7], (__half *)t[8], (int32_t)p[0],\n"
    "                 (int32_t)p[1], (int32_t)p[2], (int32_t)p[3], (cudaStream_t)s); }\n"
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
dev = torch.device("cuda")


def build_mamba(src, work):
    """mamba_ssm's forward kernel as a torch extension; returns the module or raises"""
    from torch.utils import cpp_extension
    major, minor = torch.cuda.get_device_capability()
    os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}" + ("a" if major * 10 + minor in (90, 100) else "")
    os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 4))
    flags = ["-O3", "-std=c++17", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
             "-U__CUDA_NO_BFLOAT16_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
             "-U__CUDA_NO_BFLOAT162_OPERATORS__", "-U__CUDA_NO_BFLOAT162_CONVERSIONS__",
             "--expt-relaxed-constexpr", "--expt-extended-lambda", "--use_fast_math", "-lineinfo"]
    t = time.time()
    mod = cpp_extension.load(name="ks_mamba_ssm_fwd",
                             sources=[os.path.join(ROOT, "bench", "cuda", "mamba_ssm_fwd.cu")],
                             extra_include_paths=[os.path.abspath(src)], extra_cflags=["-O3", "-std=c++17"],
                             extra_cuda_cflags=flags, build_directory=work, verbose=False)
    print(f"built mamba_ssm's selective_scan_fwd (fp16) in {time.time() - t:.0f} s "
          f"for TORCH_CUDA_ARCH_LIST={os.environ['TORCH_CUDA_ARCH_LIST']}", flush=True)
    return mod


def inputs(b, d, L, n, gen):
    def rn(*s):
        return torch.randn(*s, device=dev, generator=gen)

    def ru(lo, hi, *s):
        return torch.rand(*s, device=dev, generator=gen) * (hi - lo) + lo
    return {
        "u": rn(b, d, L).half(), "delta": rn(b, d, L).half(), "A": -torch.exp(rn(d, n)),
        "B": rn(b, 1, n, L).half(), "C": rn(b, 1, n, L).half(), "D": ru(0.5, 1.5, d),
        "z": rn(b, d, L).half(), "delta_bias": ru(-4.0, -1.0, d),
    }


def torch_loop(x, dtype, gate=True):
    """selective_scan_ref's recurrence one step at a time (mamba_ssm's reference semantics)"""
    u, delta = x["u"].to(dtype), x["delta"].to(dtype)
    A, B, C = x["A"].to(dtype), x["B"][:, 0].to(dtype), x["C"][:, 0].to(dtype)
    dt = F.softplus(delta + x["delta_bias"].to(dtype)[:, None])  # threshold 20, as in the task
    b, d, L = u.shape
    h = torch.zeros(b, d, A.shape[1], device=dev, dtype=dtype)
    ys = torch.empty(b, d, L, device=dev, dtype=dtype)
    dtu = dt * u
    for t in range(L):
        h = torch.exp(dt[:, :, t, None] * A) * h + dtu[:, :, t, None] * B[:, None, :, t]
        ys[:, :, t] = (h * C[:, None, :, t]).sum(-1)
    y = ys + x["D"].to(dtype)[:, None] * u
    return y * F.silu(x["z"].to(dtype)) if gate else y


def torch_logdepth(x):
    """the same in f32 as a Hillis-Steele scan over L of the pairs (exp(dt A), dt u B)"""
    u, delta = x["u"].float(), x["delta"].float()
    A, B, C = x["A"], x["B"][:, 0].float(), x["C"][:, 0].float()
    dt = F.softplus(delta + x["delta_bias"][:, None])
    a = torch.exp(dt[:, :, None, :] * A[None, :, :, None])  # (b, d, n, L)
    h = (dt * u)[:, :, None, :] * B[:, None, :, :]
    L = u.shape[-1]
    s = 1
    while s < L:
        h2 = h.clone()
        h2[..., s:] += a[..., s:] * h[..., :-s]
        a2 = a.clone()
        a2[..., s:] *= a[..., :-s]
        a, h, s = a2, h2, 2 * s
    y = (h * C[:, None]).sum(2) + x["D"][:, None] * u
    return y * F.silu(x["z"].float())


def copy_bandwidth():
    src = torch.empty(1 << 28, dtype=torch.float32, device=dev)
    dst = torch.empty_like(src)
    best = math.inf
    for _ in range(12):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        dst.copy_(src)
        e1.record()
        torch.cuda.synchronize()
        best = min(best, e0.elapsed_time(e1) * 1e-3)
    return 2 * src.numel() * 4 / best / 1e12  # TB/s, read + write


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel")
    ap.add_argument("--mamba-build-dir", help="build folder of the mamba_ssm extension (kept, so a second run reuses it)")
    ap.add_argument("--build-only", action="store_true", help="build the mamba_ssm extension and exit")
    ap.add_argument("--kernel-label", default="ksearch best")
    ap.add_argument("--extra", action="append", default=[], metavar="LABEL=FILE.cu")
    ap.add_argument("--baseline")
    ap.add_argument("--mamba-src")
    ap.add_argument("--out")
    ap.add_argument("--run-json")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--torch-workloads", default="1x2048x2048",
                    help="BxDxL list (comma-separated) on which the torch loop and log-depth scan are timed")
    ap.add_argument("--command", default=" ".join(sys.argv))
    args = ap.parse_args()
    if args.build_only:
        os.makedirs(args.mamba_build_dir, exist_ok=True)
        build_mamba(args.mamba_src, args.mamba_build_dir)
        return
    if not args.kernel or not args.out:
        ap.error("--kernel and --out are required")

    with open(os.path.join(ROOT, "tasks", "selective_scan", "task.yaml")) as f:
        spec = yaml.safe_load(f)
    work = tempfile.mkdtemp(prefix="ksbench-scan-")
    impls = [(args.kernel_label, compare.build("selective_scan", args.kernel, work, "best"))]
    for i, e in enumerate(args.extra):
        label, _, path = e.rpartition("=")  # the label may hold "=" (knob values)
        try:
            impls.append((label, compare.build("selective_scan", path, work, f"extra{i}")))
        except subprocess.CalledProcessError as err:
            print(f"skipping {label}: {err}", file=sys.stderr)
    if args.baseline:
        impls.append(("naive baseline (baseline.cu)", compare.build("selective_scan", args.baseline, work, "base")))
    mamba, mamba_note = None, "not built (no --mamba-src)"
    if args.mamba_src:
        try:
            t = time.time()
            bdir = args.mamba_build_dir or os.path.join(work, "mamba")
            os.makedirs(bdir, exist_ok=True)
            mamba = build_mamba(args.mamba_src, bdir)
            commit = ""
            cpath = os.path.join(args.mamba_src, "COMMIT")
            if os.path.exists(cpath):
                with open(cpath) as cf:
                    commit = f" at commit {cf.read().strip()[:12]}"
            mamba_note = (f"csrc/selective_scan of github.com/state-spaces/mamba{commit}, built on this machine "
                          f"by bench/cuda/mamba_ssm_fwd.cu with torch.utils.cpp_extension for "
                          f"{os.environ['TORCH_CUDA_ARCH_LIST']} and mamba_ssm's nvcc flags (-O3 --use_fast_math ...); "
                          f"loaded in {time.time() - t:.0f} s")
        except Exception:  # a failed build leaves the other rows standing, and says why
            mamba_note = "build failed: " + traceback.format_exc().strip().splitlines()[-1][:300]
            print(mamba_note, file=sys.stderr)

    copy_tbs = copy_bandwidth()
    print(f"device copy bandwidth: {copy_tbs:.2f} TB/s (read + write)", flush=True)
    torch_ws = {tuple(int(v) for v in s.split("x")) for s in args.torch_workloads.split(",") if s}
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    rows = []
    for w in spec["workloads"]:
        if "backends" in w and "cuda" not in w["backends"]:
            continue
        b, d, L, n = w["batch"], w["dim"], w["seqlen"], w["dstate"]
        x = inputs(b, d, L, n, gen)
        ref = torch_loop(x, torch.float64)
        ref_ng = None
        cands = []
        order = ["u", "delta", "A", "B", "C", "D", "z", "delta_bias"]
        for label, fn in impls:
            if label.startswith("naive") and b * d * L > (1 << 22):
                continue  # milliseconds of naive code: timed by ksearch itself
            y = torch.empty(b, d, L, device=dev, dtype=torch.half)
            cands.append((label, compare.ext_call(fn, [x[k] for k in order] + [y], [b, d, L, n]), y, ref))
        if mamba is not None:
            out = torch.empty(b, d, L, device=dev, dtype=torch.half)
            outz = torch.empty_like(out)
            xs = torch.empty(b, d, (L + 2047) // 2048, 2 * n, device=dev, dtype=torch.float32)

            def mz(x=x, out=out, outz=outz, xs=xs):
                mamba.fwd(x["u"], x["delta"], x["A"], x["B"], x["C"], x["D"], x["z"], x["delta_bias"], out, outz, xs)

            def mnz(x=x, out=out, outz=outz, xs=xs):
                mamba.fwd(x["u"], x["delta"], x["A"], x["B"], x["C"], x["D"], None, x["delta_bias"], out, outz, xs)
            ref_ng = torch_loop(x, torch.float64, gate=False)
            cands.append(("mamba_ssm fused selective_scan_fwd, with z", mz, outz, ref))
            cands.append(("mamba_ssm fused, z absent (y + D u, no gate)", mnz, out, ref_ng))
        if (b, d, L) in torch_ws:
            hold = [None, None]

            def tl(x=x, hold=hold):
                hold[0] = torch_loop(x, torch.float32)

            def tls(x=x, hold=hold):
                hold[1] = torch_logdepth(x)
            cands.append(("torch per-token loop (f32)", tl, hold, 0))
            cands.append(("torch log-depth scan (f32)", tls, hold, 1))
        errs, times = {}, {}
        for label, fn, out, r in cands:
            if isinstance(out, torch.Tensor):
                out.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            got = out if isinstance(out, torch.Tensor) else out[r]
            want = r if isinstance(r, torch.Tensor) else ref
            e = (got.double() - want).norm() / want.norm()
            errs[label] = float(e) if torch.isfinite(e) else float("inf")
            fn()
            times[label] = []
        torch.cuda.synchronize()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in cands]
        for rep in range(args.reps):
            idx = list(range(len(cands)))
            idx = idx[rep % len(idx):] + idx[:rep % len(idx)]
            for i in idx:
                label, fn, _, _ = cands[i]
                if label.startswith("torch") and rep >= 5:
                    continue  # tens of milliseconds each: 5 repetitions suffice
                flush.zero_()
                ev[i][0].record()
                fn()
                ev[i][1].record()
                torch.cuda.synchronize()
                times[label].append(ev[i][0].elapsed_time(ev[i][1]) * 1e3)
        nbytes = 8 * b * d * L + 4 * b * n * L + 4 * d * n + 8 * d
        floor_us = nbytes / (copy_tbs * 1e12) * 1e6
        mref = statistics.median(times["mamba_ssm fused selective_scan_fwd, with z"]) if mamba is not None else None
        for label, _, _, _ in cands:
            q1, med, q3 = compare.quartiles(times[label])
            rows.append({"workload": f"b={b} d={d} L={L} n={n}", "impl": label, "median_us": med,
                         "spread_pct": (q3 - q1) / med * 100, "floor_ratio": med / floor_us,
                         "vs_mamba": (mref / med) if mref else None, "rel_l2": errs[label], "floor_us": floor_us})
            print(f"b{b} d{d} L{L:<5d} {label:52s} {med:10.2f} us  {med / floor_us:6.2f}x floor"
                  + (f"  x{mref / med:5.2f} vs mamba" if mref else "") + f"  err {errs[label]:.1e}", flush=True)

    run = {}
    if args.run_json and os.path.exists(args.run_json):
        try:
            with open(args.run_json) as f:
                run = json.load(f)
        except ValueError:
            run = {}
        run = run if isinstance(run, dict) else {}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("# CUDA selective_scan: ksearch's kernels against mamba_ssm's fused kernel, torch and the memory floor\n\n")
        f.write(f"Produced by `{args.command}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.\n\n")
        f.write(f"- device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}, CUDA {torch.version.cuda}; "
                f"device-to-device copy measured here: {copy_tbs:.2f} TB/s (read + write)\n")
        f.write(f"- kernel: `{os.path.relpath(args.kernel, ROOT) if args.kernel.startswith(ROOT) else args.kernel}` ({args.kernel_label})\n")
        if run:
            best = run.get("best") or {}
            f.write(f"- ksearch run: `{run.get('run_dir', '')}`, speedup vs the naive baseline in ksearch's own timing: "
                    f"{best.get('speedup_vs_baseline', 'n/a')}\n")
        f.write(f"- mamba_ssm: {mamba_note}\n")
        f.write(f"- method: one process, same inputs, {args.reps} interleaved repetitions per implementation "
                "(5 for the torch rows), L2 flushed (2x L2 zeroed) before each call, CUDA events on torch's stream; "
                "median, spread = interquartile range / median; rel L2 error against a float64 per-token scan "
                "(the z-absent row against the ungated float64 result)\n\n")
        f.write("| workload | implementation | median us | spread | time / memory floor | mamba_ssm time / this | rel L2 err |\n")
        f.write("|---|---|---:|---:|---:|---:|---:|\n")
        for r in rows:
            vm = f"{r['vs_mamba']:.2f}" if r["vs_mamba"] else "-"
            f.write(f"| {r['workload']} | {r['impl']} | {r['median_us']:.1f} | {r['spread_pct']:.1f}% | "
                    f"{r['floor_ratio']:.2f} | {vm} | {r['rel_l2']:.1e} |\n")
        f.write("\nMemory floor: u, delta, z read and y written at 2 bytes, B and C read once per batch, A, D "
                "and delta_bias once (the task's `bytes`), at the copy bandwidth above; per workload: " +
                ", ".join(sorted({f"{r['workload']}: {r['floor_us']:.1f} us" for r in rows})) + ".\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
