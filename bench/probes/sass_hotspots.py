#!/usr/bin/env python3
"""Where a kernel's warps wait, per SASS instruction: a digest of Nsight Compute's source page.

  ncu --clock-control none -k regex:NAME --section SourceCounters -o REP -f APP ARGS...
  python3 bench/probes/sass_hotspots.py REP.ncu-rep [--top N]

(a .ncu-rep is exported first: `ncu -i REP.ncu-rep --page source --csv --print-source sass`
into REP.csv beside it; a .csv of that page is read as it is)

prints the instructions with the most warp-state samples (each with its address, the share
of all samples and its text), then the samples summed per opcode (HGMMA, MUFU, SHFL, ...)
and per stall reason where the page has a column per reason.  ncu samples the program
counter of warps at a fixed interval: an instruction with many samples is one that warps
sat at, waiting to issue it (its operands, its pipe, a barrier), so the list says which
dependency costs the time, which the per-kernel stall ratios cannot.

ncu 2024-2025 name the page's columns "Address", "Source" (the SASS text), "Warp Stall
Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)" and one "stall_REASON"
per reason (as public scripts that read this page use them; this script has not yet read a
page of ours).  Other versions may differ: the text is the column named "Source" (or
the first whose rows hold SASS), the samples the first column whose name has "Sampling" and
"All" (else "Sampling", else "Samples"); a column whose name starts with "stall_" or holds
"Stall" and a reason counts as a reason.  When none is found the script prints the columns
it saw and exits 1.
"""
import argparse
import collections
import csv
import re
import shutil
import subprocess
import sys


def number(text):
    try:
        return float(text.replace(",", "")) if text.strip() else 0.0
    except ValueError:
        return None


def pick(header, rows):
    src = next((i for i, h in enumerate(header) if h.strip().lower() == "source"), None)
    if src is None:  # the column whose rows read like SASS (an opcode in capitals)
        for i in range(len(header)):
            if sum(bool(re.match(r"\s*(@!?U?P\w+\s+)?[A-Z][A-Z0-9_.]+", r[i])) for r in rows[:50]
                   if i < len(r)) > 25:
                src = i
                break
    samples = None
    for want in (("sampling", "all"), ("sampling",), ("samples",)):
        samples = next((i for i, h in enumerate(header)
                        if all(w in h.lower() for w in want) and "not" not in h.lower()), None)
        if samples is not None:
            break
    reasons = [i for i, h in enumerate(header) if i not in (samples, src) and
               (h.lower().startswith("stall_") or ("stall" in h.lower() and "sampling" not in h.lower()))]
    addr = next((i for i, h in enumerate(header) if h.strip().lower() in ("address", "pc")), None)
    return src, samples, reasons, addr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report", help="an Nsight Compute report (.ncu-rep) or its source page (.csv)")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    a.csv = a.report
    if a.report.endswith(".ncu-rep"):
        a.csv = a.report[:-len(".ncu-rep")] + ".csv"
        if not shutil.which("ncu"):
            print("sass_hotspots: no ncu on PATH to export %s (Nsight Compute, part of the CUDA "
                  "toolkit); or give the .csv of its source page" % a.report)
            return 1
        with open(a.csv, "w") as out:
            r = subprocess.run(["ncu", "-i", a.report, "--page", "source", "--csv",
                                "--print-source", "sass"], stdout=out, stderr=subprocess.PIPE,
                               text=True)
        if r.returncode:
            print("sass_hotspots: ncu could not export the source page of %s:\n%s"
                  % (a.report, r.stderr[-1500:]))
            return 1
    lines = open(a.csv, newline="", errors="replace").read().splitlines()
    # ncu may print lines of its own before the table: the header is the first CSV row with
    # several quoted fields
    start = next((i for i, ln in enumerate(lines) if ln.count('","') >= 2), 0)
    table = list(csv.reader(lines[start:]))
    if len(table) < 2:
        print("sass_hotspots: no table in %s" % a.csv)
        return 1
    header, rows = table[0], [r for r in table[1:] if len(r) == len(table[0])]
    src, samples, reasons, addr = pick(header, rows)
    if src is None or samples is None:
        print("sass_hotspots: no SASS text or sample column; the columns are:\n  " +
              "\n  ".join(header))
        return 1
    vals = [(number(r[samples]) or 0.0, r) for r in rows]
    total = sum(v for v, _ in vals) or 1.0
    print("%d instructions, %.0f samples (column '%s')" % (len(rows), total, header[samples]))
    print("\ntop %d instructions by samples:" % a.top)
    for v, r in sorted(vals, key=lambda x: -x[0])[:a.top]:
        where = r[addr] if addr is not None else ""
        why = ""
        if reasons:
            top = sorted(((number(r[i]) or 0.0, header[i]) for i in reasons), reverse=True)[:2]
            why = "  [" + ", ".join("%s %.0f" % (h, n) for n, h in top if n > 0) + "]"
        print("%6.2f%%  %8s  %s%s" % (100 * v / total, where, r[src].strip()[:90], why))
    per_op = collections.Counter()
    for v, r in vals:
        m = re.match(r"\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", r[src])
        if m:
            per_op[m.group(1)] += v
    print("\nsamples per opcode:")
    for op, v in per_op.most_common(20):
        print("%6.2f%%  %s" % (100 * v / total, op))
    if reasons:
        sums = sorted(((sum(number(r[i]) or 0.0 for r in rows), header[i]) for i in reasons),
                      reverse=True)
        print("\nsamples per stall reason:")
        for v, h in sums[:15]:
            if v > 0:
                print("%6.2f%%  %s" % (100 * v / total, h))
    return 0


if __name__ == "__main__":
    sys.exit(main())
