#!/usr/bin/env python3
"""Mamba-1 prefill through MLX: mlx-lm's model, stock against its selective scan replaced by
the kernel ksearch found.

    python3 bench/mlx/mamba_prefill.py [--kernels MODULE.py] [--tokens 128,512,1024,2048]
                                       [--layers 48] [--reps 3] [--write]

The model is mlx_lm.models.mamba with the mamba-370m configuration (d_model 1024, 48 layers,
d_state 16, expand 2, conv 4, dt rank 64, vocab 50280), random f16 weights (seed 0), no
download.  Prefill is one forward over a prompt of random tokens, mx.eval'd; one warm-up,
then the median of --reps (wall clock; MLX has no GPU timer).

Stock, mlx-lm's MambaBlock walks the sequence one token at a time (x_proj, dt_proj and the
state update per token).  Patched, the same block computes x_proj, dt and B, C for the whole
sequence, then calls `selective_scan(u, delta, A, B, C, D, z, delta_bias)` once per layer, with
mlx-lm's dt_proj bias as delta_bias and the silu(z) gate inside the scan.  --kernels names a
`ksearch export --to mlx` module holding that function (it needs MLX's CUDA or Metal backend);
--scan reference uses the task's semantics written in MLX ops instead (any MLX, slow), which
checks the patching itself.  The patched block does not return the final state: it serves
prefill without a cache, which is what is timed.

Both models' logits are compared at every length (max |difference|, beside max |logits|).
Exit 0 when everything ran, 2 when the patched path cannot run here (the stock rows are
printed first), 1 when the logits differ beyond the tolerance.
"""
import argparse
import importlib
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import time
import types

import mlx.core as mx
import mlx.nn as nn


def import_mamba():
    """mlx_lm.models.mamba without mlx_lm/__init__.py, which imports transformers for
    loading checkpoints (a random-weight model needs only the model code)."""
    spec = importlib.util.find_spec("mlx_lm")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("mamba_prefill: mlx-lm is not installed (pip install mlx-lm==0.32.2; "
                 "--no-deps will do: only its model code is used)")
    if "mlx_lm" not in sys.modules:
        pkg = types.ModuleType("mlx_lm")
        pkg.__path__ = list(spec.submodule_search_locations)
        sys.modules["mlx_lm"] = pkg
    return importlib.import_module("mlx_lm.models.mamba")


mamba = import_mamba()

MAMBA_370M = dict(model_type="mamba", vocab_size=50280, hidden_size=1024,
                  intermediate_size=2048, state_size=16, num_hidden_layers=48, conv_kernel=4,
                  use_bias=False, use_conv_bias=True, time_step_rank=64,
                  tie_word_embeddings=True)
# fp16 activations through 48 layers, the stock state in f16 and the kernel's in f32: the
# logits may differ by this much relative to their largest magnitude
REL_TOL = 2e-2
STOCK_PROCESS = mamba.MambaBlock._process_sequence


def reference_scan(u, delta, A, B, C, D, z, delta_bias):
    """The task's selective scan in MLX ops, one step at a time in f32 (u, delta, z
    (b, d, L); A (d, n); B, C (b, n, L); D, delta_bias (d)) -> y (b, d, L) in u's dtype."""
    f = mx.float32
    dt = nn.softplus(delta.astype(f) + delta_bias[:, None])
    du = dt * u.astype(f)
    h = mx.zeros((u.shape[0], u.shape[1], A.shape[1]), dtype=f)
    ys = []
    for t in range(u.shape[2]):
        h = mx.exp(dt[:, :, t, None] * A) * h + du[:, :, t, None] * B[:, None, :, t].astype(f)
        ys.append((h * C[:, None, :, t].astype(f)).sum(-1))
    y = (mx.stack(ys, axis=-1) + D[:, None] * u.astype(f)) * nn.silu(z.astype(f))
    return y.astype(u.dtype)


def patched_process(scan):
    """MambaBlock._process_sequence with the per-token loop replaced by one scan call."""
    def process(self, x, conv_cache, state_cache):
        if conv_cache is not None or state_cache is not None:
            return STOCK_PROCESS(self, x, conv_cache, state_cache)
        K, R, N = self.conv_kernel_size, self.time_step_rank, self.ssm_state_size
        xz = self.in_proj(x)
        x, z = xz.split(indices_or_sections=2, axis=-1)
        x_full = mx.pad(x, [(0, 0), (K - 1, 0), (0, 0)])
        new_conv_cache = x_full[:, -(K - 1):, :]
        x = nn.silu(self.conv1d(x_full))
        delta, B, C = mx.split(self.x_proj(x), [R, R + N], axis=-1)  # the whole sequence
        if self.use_bcdt_rms:
            eps = self.args.mixer_rms_eps
            delta = mx.fast.rms_norm(delta, weight=None, eps=eps)
            B = mx.fast.rms_norm(B, weight=None, eps=eps)
            C = mx.fast.rms_norm(C, weight=None, eps=eps)
        dt = delta @ self.dt_proj.weight.T  # the bias goes in as delta_bias, before softplus
        f16, f32 = mx.float16, mx.float32
        t = lambda a: a.transpose(0, 2, 1).astype(f16)  # (b, L, c) -> (b, c, L)
        y = scan(t(x), t(dt), -mx.exp(self.A_log.astype(f32)), t(B), t(C),
                 self.D.astype(f32), t(z), self.dt_proj.bias.astype(f32))
        y = y.transpose(0, 2, 1).astype(x.dtype)
        return self.out_proj(y), (new_conv_cache, None)
    return process


def build_model(layers, seed=0):
    mx.random.seed(seed)
    model = mamba.Model(mamba.ModelArgs(**dict(MAMBA_370M, num_hidden_layers=layers)))
    model.set_dtype(mx.float16)
    mx.eval(model.parameters())
    return model


def prefill(model, tokens, process):
    mamba.MambaBlock._process_sequence = process
    try:
        logits = model(tokens)
        mx.eval(logits)
    finally:
        mamba.MambaBlock._process_sequence = STOCK_PROCESS
    return logits


def time_prefill(model, tokens, process, reps):
    """(median seconds, the logits of the warm-up forward)"""
    logits = prefill(model, tokens, process)  # warm-up: compiles kernels, allocates
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        prefill(model, tokens, process)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), logits


def load_scan(args):
    """(scan function, label) or (None, why it cannot run here)."""
    if args.scan == "reference":
        return reference_scan, "the task's semantics in MLX ops (--scan reference)"
    if not args.kernels:
        return None, "no --kernels MODULE.py (a `ksearch export --to mlx` module) given"
    spec = importlib.util.spec_from_file_location("ks_kernels", args.kernels)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not hasattr(mod, "selective_scan"):
        return None, f"'{args.kernels}' has no selective_scan function"
    # one small call says whether this MLX can run the kernel at all
    try:
        f16 = mx.float16
        mx.eval(mod.selective_scan(mx.zeros((1, 8, 8), f16), mx.zeros((1, 8, 8), f16),
                                   -mx.ones((8, 16)), mx.zeros((1, 16, 8), f16),
                                   mx.zeros((1, 16, 8), f16), mx.ones((8,)),
                                   mx.zeros((1, 8, 8), f16), mx.zeros((8,))))
    except (RuntimeError, ValueError) as e:
        if mx.default_device().type != mx.DeviceType.gpu:
            return None, f"custom kernels need a GPU MLX: {e}"
        return None, f"the exported kernel failed on this GPU MLX: {e}"
    return mod.selective_scan, f"ksearch's kernel from {args.kernels}"


def device_line():
    line = f"MLX {mx.__version__}, device {mx.default_device()}"
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        if gpu:
            line += f" ({gpu.splitlines()[0]})"
    except (OSError, subprocess.SubprocessError):
        pass
    return line + f", {platform.machine()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", help="a `ksearch export --to mlx` module with selective_scan")
    ap.add_argument("--scan", choices=["kernel", "reference"], default="kernel",
                    help="what replaces the loop: the --kernels module (default) or MLX ops")
    ap.add_argument("--tokens", default="128,512,1024,2048", help="prompt lengths")
    ap.add_argument("--layers", type=int, default=48)
    ap.add_argument("--reps", type=int, default=3, help="timed forwards of the stock model")
    ap.add_argument("--patched-reps", type=int, default=10)
    ap.add_argument("--write", action="store_true",
                    help="write docs/results/mlx-mamba-prefill.md")
    args = ap.parse_args()
    lengths = [int(t) for t in args.tokens.split(",")]

    model = build_model(args.layers)
    scan, scan_label = load_scan(args)
    cfg = f"mamba-370m configuration, {args.layers} layer{'s' * (args.layers != 1)}"
    print(f"# Mamba-1 prefill, mlx-lm ({cfg}, random f16 weights); {device_line()}")
    print(f"# patched scan: {scan_label}")
    rows = []
    head = ("| tokens | stock ms | stock tok/s | patched ms | patched tok/s | speedup "
            "| max abs dlogits | max abs logits |")
    print(head + "\n|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    worst, speedups = 0.0, {}
    for T in lengths:
        tokens = mx.random.randint(0, MAMBA_370M["vocab_size"], (1, T))
        s_med, ref = time_prefill(model, tokens, STOCK_PROCESS, args.reps)
        row = f"| {T} | {s_med * 1e3:.1f} | {T / s_med:.0f} |"
        if scan is None:
            print(row + " - | - | - | - | - |", flush=True)
            rows.append(row + " - | - | - | - | - |")
            continue
        process = patched_process(scan)
        p_med, got = time_prefill(model, tokens, process, args.patched_reps)
        ref, got = ref.astype(mx.float32), got.astype(mx.float32)
        diff, scale = mx.abs(got - ref).max().item(), mx.abs(ref).max().item()
        worst = max(worst, diff / max(scale, 1e-6))
        speedups[T] = s_med / p_med
        row += (f" {p_med * 1e3:.2f} | {T / p_med:.0f} | {s_med / p_med:.1f}x | {diff:.3g} "
                f"| {scale:.3g} |")
        print(row, flush=True)
        rows.append(row)
    if scan is None:
        print(f"patched: {scan_label}", file=sys.stderr)
        return 2
    ok = worst <= REL_TOL
    print(f"# logits: largest max|dlogits| / max|logits| = {worst:.3g} "
          f"({'within' if ok else 'BEYOND'} the fp16 tolerance {REL_TOL})")
    goal = ""
    if 1024 in speedups:
        goal = (f"speedup at 1024 tokens {speedups[1024]:.1f}x: the goal (>= 100x, issue 16) "
                f"is {'met' if speedups[1024] >= 100 else 'not met'}")
        print("# " + goal)
    if args.write:
        write_results(args, cfg, scan_label, head, rows, worst, ok, goal)
    return 0 if ok else 1


def write_results(args, cfg, scan_label, head, rows, worst, ok, goal):
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "results",
                        "mlx-mamba-prefill.md")
    cmd = "python3 bench/mlx/mamba_prefill.py " + " ".join(sys.argv[1:])
    text = f"""# Mamba-1 prefill through MLX: mlx-lm stock against ksearch's selective scan

Measured with `{cmd}` (bench/mlx/scan.sh runs it), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.

- {device_line()}; mlx-lm's `mlx_lm.models.mamba`, {cfg}, random f16 weights (seed 0).
- Prefill: one forward over a prompt of random tokens, `mx.eval`'d; one warm-up, then the
  median of {args.reps} (stock) and {args.patched_reps} (patched) forwards, wall clock.
- Stock: mlx-lm's `MambaBlock` walks the prompt one token at a time (x_proj, dt_proj and
  the state update per token).  Patched: the same weights; x_proj, dt, B and C for the whole
  prompt, then one call per layer of {scan_label}
  (softplus(dt + dt_proj bias), D skip and the silu(z) gate inside the kernel).
- Logits compared at each length; the largest max |dlogits| / max |logits| is {worst:.3g}
  ({'within' if ok else 'beyond'} {REL_TOL}).

{head}
|---:|---:|---:|---:|---:|---:|---:|---:|
""" + "\n".join(rows) + f"""

{goal + "." if goal else ""}

Not measured here: the conv, projections and gating fused around the scan; decode (one
token with a cache), which the patched block leaves to mlx-lm; Apple silicon (the Metal
export).
"""
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {os.path.normpath(path)}")


if __name__ == "__main__":
    sys.exit(main())
