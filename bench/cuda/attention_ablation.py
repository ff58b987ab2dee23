#!/usr/bin/env python3
"""The "Ablation at equal budget" section of docs/results/cuda-attention.md, from
bench/cuda/attention_ablation.sh's `ksearch run --json` summaries and bench/cuda/attention.py's
--json rows.  The section (from its heading to the next "## " heading or the end) is
replaced, or appended when the file has none; the rest of the file is kept."""
import argparse
import datetime
import json
import re

HEAD = "## Ablation at equal budget"


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def knobs(run_dir):
    try:
        out = []
        for l in open(run_dir + "/best.cu"):  # the knob values final.c bakes in, after its comment
            if not l.startswith("#define ") or len(l.split()) < 3:
                if out:
                    break
                continue
            out.append("%s=%s" % tuple(l.split()[1:3]))
        return " ".join(out) or "-"
    except (OSError, TypeError):
        return "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", action="append", default=[], help="STRATEGY=run.json")
    ap.add_argument("--table", required=True, help="attention.py --json")
    ap.add_argument("--budget", required=True)
    ap.add_argument("--time-limit", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--doc", required=True)
    a = ap.parse_args()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    o = [HEAD, "",
         "Produced by `%s` on %s: `ksearch run attention --backend cuda --strategy S --budget %s "
         "--workloads 2,3 --seed 1 --time-limit %s` for each strategy S (builtin policy), then "
         "each run's best kernel, the naive `baseline.cu` and torch SDPA timed side by side by "
         "`bench/cuda/attention.py --workloads 2,3` (method as above)." % (
             a.command, now, a.budget, a.time_limit), "",
         "| strategy | evaluated | passed | stopped | best knobs | ksearch speedup vs naive "
         "(geomean, workloads 2,3) |", "|---|---:|---:|---|---|---:|"]
    for r in a.run:
        s, path = r.split("=", 1)
        d = load(path) or {}
        best = d.get("best") or {}
        sp = best.get("speedup_vs_baseline")
        o.append("| %s | %s | %s | %s | %s | %s |" % (
            s, d.get("evaluated", "-"), d.get("passed", "-"), d.get("stopped") or "budget",
            knobs(d.get("run_dir")), "%.1fx" % sp if isinstance(sp, (int, float)) else "no result"))
    rows = load(a.table) or []
    o += ["", "| workload | implementation | median us | spread | TFLOP/s | FA2 time / this | "
          "cuDNN time / this | rel L2 err |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    f3 = lambda x: "%.3f" % x if isinstance(x, (int, float)) else "n/a"
    for r in rows:
        o.append("| %s | %s | %.1f | %.1f%% | %.1f | %s | %s | %.1e |" % (
            r["workload"], r["impl"], r["median_us"], r["spread_pct"], r["tflops"],
            f3(r["vs_fa2"]), f3(r["vs_cudnn"]), r["rel_l2"]))
    o += ["", "`--context none|spec|full` is not part of this ablation: only the llm and cmd "
          "policies read it (src/policy/llm.c); the builtin policy proposes knob configurations "
          "without prompts, so the three levels would give the same run.", ""]
    section = "\n".join(o) + "\n"
    try:
        doc = open(a.doc).read()
    except OSError:
        doc = ""
    m = re.search(r"^%s.*?(?=^## |\Z)" % re.escape(HEAD), doc, flags=re.S | re.M)
    doc = doc[:m.start()] + section + ("\n" if doc[m.end():] else "") + doc[m.end():] if m \
        else doc.rstrip("\n") + "\n\n" + section
    open(a.doc, "w").write(doc)
    print(section)


if __name__ == "__main__":
    main()
