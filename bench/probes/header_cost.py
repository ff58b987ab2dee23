#!/usr/bin/env python3
"""What the kernel text costs on every call through MLX: an exported attention module timed
as exported (its device code inline in the kernel's header, which MLX copies and hashes on
every call: docs/mlx.md, "Kernel text") against the same module whose header is one line,
`#include "FILE"`, with the device code in FILE (NVRTC reads it from disk when MLX compiles
the kernel; FILE's name is its content's hash, so MLX's module and PTX-cache keys still change
with the content), and against MLX's own attention.  Needs MLX's CUDA backend.

  build/ksearch export tasks/attention/templates/mlx/flash_wgmma.cuda.mlx --task attention \\
      --to mlx --out /tmp/attn.py
  python3 bench/probes/header_cost.py /tmp/attn.py [--blocks 30] [--chain 8] [--seqlen 2048]

Method: one process, the same inputs; each block times CHAIN chained calls of each variant
(rotating their order) with the wall clock around mx.eval, as ksearch's mlx backend does;
median per call over the blocks and the interquartile spread.  Prints the two variants'
largest difference (the same kernel: expect 0) and their error against MLX's attention.
"""
import argparse
import hashlib
import importlib.util
import math
import os
import shutil
import statistics
import sys
import tempfile
import time

import mlx.core as mx


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def header_in_file(mod, folder):
    """point every kernel header of mod at a file holding it; the number of bytes moved"""
    moved = 0
    for attr in [a for a in dir(mod) if a.startswith("_") and a.endswith("_HEADER")]:
        text = getattr(mod, attr)
        path = os.path.join(folder, hashlib.sha256(text.encode()).hexdigest()[:32] + ".cuh")
        with open(path, "w") as f:
            f.write(text)
        setattr(mod, attr, f'#include "{path}"\n')
        moved += len(text)
    mod._KERNELS.clear()
    return moved


def per_call_us(fns, chain, blocks):
    """{name: [us per call, one per block]}, the variants' blocks interleaved"""
    names = list(fns)
    for fn in fns.values():  # compile and warm up
        for _ in range(3):
            mx.eval(fn())
    ts = {n: [] for n in names}
    for b in range(blocks):
        for n in names[b % len(names):] + names[:b % len(names)]:
            t0 = time.perf_counter()
            outs = [fns[n]() for _ in range(chain)]
            mx.eval(*outs)
            ts[n].append((time.perf_counter() - t0) / chain * 1e6)
    return ts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("module", help="a module written by ksearch export --to mlx (attention)")
    ap.add_argument("--blocks", type=int, default=30)
    ap.add_argument("--chain", type=int, default=8)
    ap.add_argument("--seqlen", type=int, default=2048)
    a = ap.parse_args()
    if a.blocks < 4 or a.chain < 1:
        ap.error("--blocks at least 4 (for the quartiles), --chain at least 1")
    if not mx.cuda.is_available():
        sys.exit("header_cost.py: needs MLX's CUDA backend (pip install 'mlx[cuda13]' on a "
                 f"machine with an NVIDIA GPU); this MLX ({mx.__version__}) has none")
    inline = load(a.module, "ks_inline")
    in_file = load(a.module, "ks_in_file")
    folder = tempfile.mkdtemp(prefix="ks-header-")
    moved = header_in_file(in_file, folder)
    b, h, d = 1, 32, 128
    mx.random.seed(0)
    q, k, v = (mx.random.normal((b, h, a.seqlen, d)).astype(mx.float16) for _ in range(3))
    scale = 1 / math.sqrt(d)
    print(f"mlx {mx.__version__}, {mx.device_info().get('device_name', '?')}; "
          f"B{b} H{h} L{a.seqlen} D{d} f16; {moved} bytes of header moved to {folder}; "
          f"{a.chain} chained calls a block, {a.blocks} blocks")
    print("| causal | variant | median us per call | spread | native time / this |")
    print("|---|---|---:|---:|---:|")
    for causal in (0, 1):
        fns = {"inline header (as exported)": lambda: inline.attention(q, k, v, causal=causal),
               "#include of a file": lambda: in_file.attention(q, k, v, causal=causal),
               "MLX native": lambda: mx.fast.scaled_dot_product_attention(
                   q, k, v, scale=scale, mask="causal" if causal else None)}
        o = [fns[n]() for n in fns]
        mx.eval(*o)
        same = mx.max(mx.abs(o[0].astype(mx.float32) - o[1].astype(mx.float32))).item()
        err = mx.max(mx.abs(o[0].astype(mx.float32) - o[2].astype(mx.float32))).item()
        ts = per_call_us(fns, a.chain, a.blocks)
        med = {n: statistics.median(t) for n, t in ts.items()}
        for n, t in ts.items():
            qs = statistics.quantiles(t, n=4)
            print(f"| {causal} | {n} | {med[n]:.1f} | {(qs[2] - qs[0]) / med[n] * 100:.1f}% "
                  f"| {med['MLX native'] / med[n]:.3f} |")
        print(f"causal {causal}: max |inline - file| {same:.3g}, max |inline - native| {err:.3g}")
    shutil.rmtree(folder)  # NVRTC read it when MLX compiled the kernels


if __name__ == "__main__":
    main()
