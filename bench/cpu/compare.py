#!/usr/bin/env python3
"""Time a ksearch CPU kernel side by side with library implementations, in one process.

    python3 bench/cpu/compare.py --task matmul --kernel runs/matmul/best.c \
        [--extra 'label=path.c' ...] [--threads 2] [--out docs/results/cpu-libraries.md]

matmul: the kernel against OpenBLAS sgemm (numpy.matmul) and ONNX Runtime's MatMul (MLAS);
matmul_bf16: the bf16 kernel against the same two fp32 libraries on the same values widened
to fp32 beforehand (neither has a bf16 GEMM on the CPU; the widening is not timed);
softmax: against ONNX Runtime's Softmax and a plain numpy expression. Every implementation
gets the same inputs, rotating over enough input sets to exceed twice the last-level cache
(as ksearch's own timing does), and the repetitions are interleaved in a shuffled order so
drift and a loaded machine hit all of them alike.  Reported: median, spread (interquartile
range / median), ratio library time / this, GFLOP/s, and relative L2 error against float64.
"""
import argparse
import ctypes
import datetime
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# the CPU workloads of the shipped tasks (tasks/*/task.yaml, those without `backends: [cuda]`)
WORKLOADS = {
    "matmul": [dict(m=512, n=512, k=512), dict(m=256, n=1000, k=768)],
    "matmul_bf16": [dict(m=512, n=512, k=512), dict(m=256, n=1000, k=768)],
    "softmax": [dict(rows=2048, cols=2048), dict(rows=8192, cols=512)],
}


def llc_bytes():
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    for d in os.listdir(base) if os.path.isdir(base) else []:
        try:
            with open(f"{base}/{d}/size") as f:
                s = f.read().strip()
            v = int(s[:-1]) * (1024 if s.endswith("K") else 1 << 20 if s.endswith("M") else 1)
            best = max(best, v)
        except (OSError, ValueError):
            pass
    return best or (32 << 20)


def build(task, src, work, name):
    """compile a kernel the way the cpu backend does (flags of src/backend/cpu.c)"""
    so = os.path.join(work, name + ".so")
    cmd = ["cc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-I", os.path.join(ROOT, "include"),
           src, "-o", so, "-lm"]
    subprocess.run(cmd, check=True)
    lib = ctypes.CDLL(so)
    fn = getattr(lib, task)
    p = ctypes.c_void_p
    i32 = ctypes.c_int32
    fn.argtypes = [p, p, p, i32, i32, i32] if task.startswith("matmul") else [p, p, i32, i32]
    fn.restype = None
    return fn


def to_bf16(a):
    """fp32 -> bf16 bits, round to nearest even (finite inputs)"""
    u = a.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(h):
    return (h.astype(np.uint32) << 16).view(np.float32)


def ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def ort_session(task, threads):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
    f = TensorProto.FLOAT
    if task.startswith("matmul"):
        node = helper.make_node("MatMul", ["a", "b"], ["c"])
        inputs = [helper.make_tensor_value_info("a", f, ["m", "k"]),
                  helper.make_tensor_value_info("b", f, ["k", "n"])]
        outputs = [helper.make_tensor_value_info("c", f, ["m", "n"])]
    else:
        node = helper.make_node("Softmax", ["x"], ["y"], axis=-1)
        inputs = [helper.make_tensor_value_info("x", f, ["r", "c"])]
        outputs = [helper.make_tensor_value_info("y", f, ["r", "c"])]
    graph = helper.make_graph([node], task, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess, ort


def kernel_call(task, fn, label):
    """a ksearch kernel through its C entry point; pointers are resolved once per set"""
    if task.startswith("matmul"):
        return lambda s: fn(s["pin"][0], s["pin"][1], s["pout"][label], *s["dims"])
    return lambda s: fn(s["pin"][0], s["pout"][label], *s["dims"])


def make_impls(task, kernels, threads):
    """name -> function(set) that computes the task on input set `set` into its output"""
    impls = {}
    sess, ort = ort_session(task, threads)

    def ort_runner(names_in, name_out):
        def run(s):
            b = s["bind"]
            sess.run_with_iobinding(b)
        def prepare(s):
            b = sess.io_binding()
            for n, arr in zip(names_in, s["in32"]):
                b.bind_cpu_input(n, arr)
            out = s["outs"]["onnxruntime"]
            b.bind_output(name_out, "cpu", 0, np.float32, out.shape, out.ctypes.data)
            s["bind"] = b
        return run, prepare

    for label, fn in kernels:
        impls[label] = kernel_call(task, fn, label)
    if task.startswith("matmul"):
        impls["numpy.matmul (OpenBLAS sgemm)"] = lambda s: np.matmul(s["in32"][0], s["in32"][1],
                                                                    out=s["outs"]["numpy.matmul (OpenBLAS sgemm)"])
        run, prep = ort_runner(["a", "b"], "c")
    else:
        def np_softmax(s):
            x, y = s["in"][0], s["outs"]["numpy (exp, max, sum)"]
            np.subtract(x, x.max(axis=1, keepdims=True), out=y)
            np.exp(y, out=y)
            y /= y.sum(axis=1, keepdims=True)
        impls["numpy (exp, max, sum)"] = np_softmax
        run, prep = ort_runner(["x"], "y")
    impls["onnxruntime"] = run
    return impls, prep, ort.__version__


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", required=True, choices=sorted(WORKLOADS))
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--kernel-label", default="ksearch best")
    ap.add_argument("--extra", action="append", default=[], help="LABEL=path.c, another kernel")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds of timed calls per implementation")
    ap.add_argument("--out", help="write a markdown table here (appended when --append)")
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--command", default="", help="the command to print in the table's header")
    args = ap.parse_args()

    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    work = tempfile.mkdtemp(prefix="ks-cpu-compare-")
    kernels = []
    for i, (label, path) in enumerate([(args.kernel_label, args.kernel)] +
                                      [tuple(x.split("=", 1)) for x in args.extra]):
        kernels.append((label, build(args.task, path, work, f"k{i}")))
    impls, prepare_ort, ort_version = make_impls(args.task, kernels, args.threads)
    names = list(impls)
    rng = np.random.default_rng(1)
    bf16 = args.task == "matmul_bf16"
    llc = llc_bytes()
    rows = []
    for w in WORKLOADS[args.task]:
        if args.task.startswith("matmul"):
            m, n, k = w["m"], w["n"], w["k"]
            shapes_in, shape_out, dims = [(m, k), (k, n)], (m, n), (m, n, k)
            flops = 2.0 * m * n * k
            label_w = f"m={m} n={n} k={k}"
        else:
            r, c = w["rows"], w["cols"]
            shapes_in, shape_out, dims = [(r, c)], (r, c), (r, c)
            flops = 5.0 * r * c
            label_w = f"rows={r} cols={c}"
        set_bytes = 4 * (sum(a * b for a, b in shapes_in) + shape_out[0] * shape_out[1] * len(names))
        nsets = max(1, min(64, -(-2 * llc // set_bytes)))
        sets = []
        for _ in range(nsets):
            ins32 = [rng.standard_normal(sh, dtype=np.float32) * (3 if args.task == "softmax" else 1)
                     for sh in shapes_in]
            ins, outs = ins32, {nm: np.full(shape_out, np.nan, np.float32) for nm in names}
            if bf16:
                # the kernels take bf16 bits; the libraries the same values as fp32
                ins = [to_bf16(a) for a in ins32]
                ins32 = [from_bf16(a) for a in ins]
                for nm, _ in kernels:
                    outs[nm] = np.full(shape_out, 0x7fc0, np.uint16)
            s = {"in": ins, "in32": ins32, "dims": dims, "outs": outs}
            s["pin"] = [ptr(a) for a in ins]
            s["pout"] = {nm: ptr(o) for nm, o in s["outs"].items()}
            prepare_ort(s)
            sets.append(s)
        # correctness on set 0 against float64
        s0 = sets[0]
        if args.task.startswith("matmul"):
            ref = s0["in32"][0].astype(np.float64) @ s0["in32"][1].astype(np.float64)
        else:
            x = s0["in"][0].astype(np.float64)
            e = np.exp(x - x.max(axis=1, keepdims=True))
            ref = e / e.sum(axis=1, keepdims=True)
        errs = {}
        for nm in names:
            impls[nm](s0)
            out = s0["outs"][nm]
            got = (from_bf16(out) if out.dtype == np.uint16 else out).astype(np.float64)
            errs[nm] = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
        # Blocks of calls per implementation, interleaved in a shuffled order round after
        # round. Each block starts after a pause and two untimed calls: OpenMP, OpenBLAS and
        # ONNX Runtime keep their worker threads spinning for a while after a call, and a
        # block must not compete with the previous implementation's spinning threads.
        est = {}
        for nm in names:
            t0 = time.perf_counter()
            for s in sets[:3]:
                impls[nm](s)
            est[nm] = (time.perf_counter() - t0) / 3
        samples = {nm: [] for nm in names}
        spent = {nm: 0.0 for nm in names}
        order = names[:]
        rounds = 0
        while rounds < 3 or min(spent.values()) < args.min_time:
            random.Random(rounds).shuffle(order)
            for nm in order:
                time.sleep(0.05)
                block = max(3, min(200, int(0.1 / max(est[nm], 1e-6))))
                for j in range(block + 2):
                    s = sets[j % nsets]
                    t0 = time.perf_counter_ns()
                    impls[nm](s)
                    dt = (time.perf_counter_ns() - t0) * 1e-3
                    if j >= 2:
                        samples[nm].append(dt)
                        spent[nm] += dt * 1e-6
            rounds += 1
        lib = "numpy.matmul (OpenBLAS sgemm)" if args.task.startswith("matmul") else "onnxruntime"
        lib_med = statistics.median(samples[lib])
        for nm in names:
            v = sorted(samples[nm])
            med = statistics.median(v)
            q1, q3 = v[len(v) // 4], v[(3 * len(v)) // 4]
            rows.append(dict(workload=label_w, impl=nm, med=med, spread=(q3 - q1) / med * 100,
                             ratio=lib_med / med, gflops=flops / (med * 1e-6) / 1e9, err=errs[nm],
                             reps=len(v), sets=nsets))
            print(f"{label_w:24s} {nm:40s} {med:10.1f} us  +-{(q3 - q1) / med * 100:4.1f}%  "
                  f"x{lib_med / med:5.2f} vs {lib.split(' ')[0]}  err {errs[nm]:.1e}", flush=True)

    if args.out:
        lib = "OpenBLAS sgemm (numpy.matmul)" if args.task.startswith("matmul") else "ONNX Runtime Softmax"
        cpu = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        except (OSError, StopIteration):
            pass
        with open(args.out, "a" if args.append else "w") as f:
            f.write(f"\n## {args.task}, {args.threads} thread(s): ksearch's best CPU kernel against {lib}\n\n")
            f.write(f"Produced by `{args.command}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
                    f"{cpu}, {os.cpu_count()} logical CPUs, {args.threads} thread{'s' if args.threads != 1 else ''} for every implementation; "
                    f"numpy {np.__version__}, onnxruntime {ort_version}.\n\n")
            f.write("| workload | implementation | median us | spread | library time / this | GFLOP/s | rel L2 err |\n")
            f.write("|---|---|---:|---:|---:|---:|---:|\n")
            for r in rows:
                f.write(f"| {r['workload']} | {r['impl']} | {r['med']:.1f} | {r['spread']:.1f}% | "
                        f"{r['ratio']:.3f} | {r['gflops']:.1f} | {r['err']:.1e} |\n")
            f.write(f"\nLibrary = {lib}. Method: blocks of calls per implementation, interleaved in a "
                    f"shuffled order over at least 3 rounds and {args.min_time:g} s of timed calls each; every "
                    f"block starts after a 50 ms pause and 2 untimed calls (thread pools stop spinning); "
                    f"inputs rotate over " + ", ".join(sorted({f"{r['sets']} sets for {r['workload']}" for r in rows}))
                    + f" (more than twice the {llc >> 20} MiB last-level cache); spread = interquartile "
                    f"range / median.\n")
            if args.task == "matmul_bf16":
                f.write("\nNo bf16 GEMM library runs on this CPU here (numpy has no bf16, ONNX Runtime's "
                        "CPU MatMul has no bf16 kernel), so the libraries compute the same products "
                        "in fp32 from copies of the bf16 inputs widened beforehand (not timed) and "
                        "write fp32; the ksearch kernels read bf16 and write bf16, so their rel L2 "
                        "error includes the bf16 rounding of the output (~1e-3).\n")
    print("done")


if __name__ == "__main__":
    sys.exit(main())
