#!/usr/bin/env python3
"""docs/results/mlx-attention.md from bench/mlx/attention.sh's `ksearch eval --json` files:
per workload the template's median time and spread, MLX native's (the eval's baseline,
timed in interleaved blocks in the same session), the ratio (native time / template time)
and TFLOP/s; the ratio's spread between processes from the repeated timing-only evals; the
correctness of every check; the `ksearch run` summary when one was made."""
import argparse
import datetime
import json
import statistics


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as ex:
        return {"status": "NO RESULT (%s)" % ex, "workloads": [], "checks": []}


def label(p):
    # kv_heads and kv_seqlen are named only where they differ from heads and seqlen (JSON of
    # the ABI before GQA has neither)
    s = "B%d H%d" % (p["batch"], p["heads"])
    if p.get("kv_heads", p["heads"]) != p["heads"]:
        s += " Hkv%d" % p["kv_heads"]
    s += " L%d" % p["seqlen"]
    if p.get("kv_seqlen", p["seqlen"]) != p["seqlen"]:
        s += " Lk%d" % p["kv_seqlen"]
    s += " D%d" % p["head_dim"]
    return s + (" causal" if p.get("causal") else "")


def tflops(p, us):
    """the task's flops (tasks/attention/task.yaml): 4*B*H*D per visible (query, key) pair,
    the causal mask top-left aligned"""
    L, Lk = p["seqlen"], p.get("kv_seqlen", p["seqlen"])
    if not p.get("causal"):
        pairs = L * Lk
    elif L <= Lk:
        pairs = L * (L + 1) // 2
    else:
        pairs = Lk * (Lk + 1) // 2 + (L - Lk) * Lk
    f = 4 * p["batch"] * p["heads"] * p["head_dim"] * pairs
    return f / us / 1e6 if us else 0.0


def num(x, fmt):
    return fmt % x if isinstance(x, (int, float)) and x == x else "-"


def knobs(run_dir):
    """the knob values a run's best.mlx carries (its leading #define lines)"""
    try:
        out = []
        for l in open(run_dir + "/best.mlx"):  # the knob values final.c bakes in, after its comment
            if not l.startswith("#define ") or len(l.split()) < 3:
                if out:
                    break
                continue
            out.append("%s=%s" % tuple(l.split()[1:3]))
        return " ".join(out) or "-"
    except (OSError, TypeError, IndexError):
        return "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eval", action="append", default=[], help="CONFIG=FILE")
    ap.add_argument("--repeat", action="append", default=[])
    ap.add_argument("--run")
    ap.add_argument("--run-log")
    ap.add_argument("--device", default="")
    ap.add_argument("--probe", default="")
    ap.add_argument("--command", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    o = ["# Attention through MLX: ksearch's templates against MLX's native attention", "",
         "Produced by `%s` on %s." % (a.command, now), "",
         "- device: %s; %s" % (a.device.strip(), a.probe.strip()),
         ("- kernels: `tasks/attention/templates/mlx/T.metal.mlx` for the configuration's "
          "template T (`T:knobs`), an `mx.fast.metal_kernel` compiled by Metal inside MLX; "
          if "metal=1" in a.probe else
          "- kernels: `tasks/attention/templates/mlx/T.cuda.mlx` for the configuration's "
          "template T (`T:knobs`; flash2 when T is left out), an `mx.fast.cuda_kernel` whose "
          "header is `templates/cuda/T.cu`'s device code (`// @mlx include:`), compiled by "
          "NVRTC inside MLX; ") +
         "baseline: `mx.fast.scaled_dot_product_attention` (`tasks/attention/baseline.mlx`)",
         "- method: `ksearch eval --backend mlx`: correctness on 3 seeds and every check against "
         "reference.c, then blocks of timed calls interleaved with the native op, each call 8 "
         "chained kernels per `eval` (KSEARCH_MLX_CHAIN), wall clock; median, spread = "
         "interquartile range / median (docs/mlx.md, Timing)", ""]
    o += ["| workload | configuration | status | median us | spread | TFLOP/s | MLX native us | "
          "native time / this | max abs err |", "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for ev in a.eval:
        cfg, path = ev.rsplit("=", 1)  # the configuration has '=' too, the path none
        d = load(path)
        for w in d.get("workloads", []):
            p = w["params"]
            o.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                label(p), cfg.replace(",", " "), w["status"], num(w.get("median_us"), "%.1f"),
                num(w.get("spread_pct"), "%.1f%%"), num(tflops(p, w.get("median_us")), "%.1f"),
                num(w.get("baseline_us"), "%.1f"), num(w.get("speedup_vs_baseline"), "%.3f"),
                num(w.get("max_abs_err"), "%.1e")))
        bad = [c.get("name") or label(c["params"]) for c in d.get("checks", [])
               if c["status"] != "PASSED"]
        o.append("")
        o.append("%s: overall %s, geometric-mean ratio %s; checks: %d, %s." % (
            cfg, d.get("status"), num(d.get("speedup_vs_baseline"), "%.3f"),
            len(d.get("checks", [])), "all PASSED" if not bad else "not passed: " + ", ".join(bad)))
        if d.get("compile_log"):
            o += ["", "```", d["compile_log"][:3000], "```"]
        o.append("")
    if a.repeat:
        o += ["## Between processes", "",
              "The first configuration again, headline workloads only, timing only (`--workloads "
              "2,3 --no-checks`), %d separate `ksearch eval` processes (each compiles anew):" %
              len(a.repeat), "",
              "| workload | ratios (native time / this) | median | min-max |", "|---|---|---:|---:|"]
        per = {}
        for r in a.repeat:
            for w in load(r).get("workloads", []):
                per.setdefault(label(w["params"]), []).append(w.get("speedup_vs_baseline"))
        for k, v in per.items():
            v = [x for x in v if isinstance(x, (int, float))]
            if v:
                o.append("| %s | %s | %.3f | %.3f-%.3f |" % (
                    k, ", ".join("%.3f" % x for x in v), statistics.median(v), min(v), max(v)))
        o.append("")
    if a.run:
        d = load(a.run)
        best = d.get("best") or {}
        o += ["## ksearch run attention --backend mlx", "",
              "%s candidates evaluated, %s passed (budget %s, strategy %s); best: candidate %s, "
              "%s x MLX native (geometric mean over the run's workloads), knobs: %s" % (
                  d.get("evaluated", "-"), d.get("passed", "-"), d.get("budget", "-"),
                  d.get("strategy", "-"), best.get("candidate", "-"),
                  num(best.get("speedup_vs_baseline"), "%.3f"), knobs(d.get("run_dir"))), "", "```"]
        try:
            o += [l.rstrip() for l in open(a.run_log).readlines()[-15:]]
        except (OSError, TypeError):
            pass
        o += ["```", ""]
    open(a.out, "w").write("\n".join(o) + "\n")
    print("\n".join(o))


if __name__ == "__main__":
    main()
