"""Validate what ksearch wrote for a flashinfer-bench Definition with flashinfer-bench's own
models: python3 flashinfer_validate.py TRACESET_DIR DEFINITION.  TRACESET_DIR is laid out as
flashinfer-bench's TraceSet (definitions/, workloads/, solutions/, traces/), with the
definition's own files and ksearch's Traces and Solution (bench/flashinfer_roundtrip.sh makes
it).  Prints each check with its counts; exits 1 when one fails."""
import collections
import json
import sys
import typing
from pathlib import Path

import pydantic
from flashinfer_bench.data import Solution, Trace, TraceSet

failed = []


def check(ok, what):
    print("%s %s" % ("ok:  " if ok else "FAIL:", what))
    if not ok:
        failed.append(what)


def models_in(ann):
    """the pydantic models an annotation may hold (through Optional, List, Dict, Union)"""
    if isinstance(ann, type) and issubclass(ann, pydantic.BaseModel):
        return [ann]
    return [m for a in typing.get_args(ann) for m in models_in(a)]


def unknown_keys(model, data, where):
    """the keys of data that model does not know: pydantic ignores them without a word"""
    out = []
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None:
            out.append(where + key)
            continue
        origin = typing.get_origin(field.annotation)
        args = [a for a in typing.get_args(field.annotation) if a is not type(None)]
        if origin is typing.Union and len(args) == 1:
            origin = typing.get_origin(args[0])
        items = (value.values() if origin is dict and isinstance(value, dict)
                 else value if isinstance(value, list) else [value])
        for item in items:
            if not isinstance(item, dict):
                continue
            for sub in models_in(field.annotation):
                try:
                    sub.model_validate(item)
                except pydantic.ValidationError:
                    continue
                out += unknown_keys(sub, item, where + key + ".")
                break
    return out


def main(root, name):
    ts = TraceSet.from_path(root)
    check(name in ts.definitions, "TraceSet.from_path loads the Definition '%s'" % name)
    d = ts.definitions[name]
    given = {t.workload.uuid: t.workload for t in ts.workloads.get(name, [])}
    check(len(given) > 0, "%d workloads of the definition load as workload Traces" % len(given))
    traces = ts.traces.get(name, [])
    check(len(traces) > 0, "%d ksearch Traces load as Trace (flashinfer_bench.data)" % len(traces))
    lines = [json.loads(l) for f in Path(root, "traces").rglob(name + ".jsonl") for l in open(f)]
    extra = sorted({k for l in lines for k in unknown_keys(Trace, l, "")})
    check(not extra, "every key of the Traces is a field of Trace (unknown: %s)" % (extra or "none"))

    wrong = collections.Counter()
    for t in traces:
        w = given.get(t.workload.uuid)
        if w is None:
            wrong["uuid not the definition's"] += 1
            continue
        if t.workload.axes != w.axes:
            wrong["axes differ from the definition's workload"] += 1
        if {k: v.type for k, v in t.workload.inputs.items()} != {k: v.type for k, v in w.inputs.items()}:
            wrong["inputs differ"] += 1
        shapes = d.get_input_shapes(t.workload.axes)
        if len(shapes) != len(d.inputs) or any(s is None for s in shapes):
            wrong["input shapes not bound by the axes"] += 1
    uuids = {t.workload.uuid for t in traces}
    check(not wrong, "each Trace names a workload of the definition by its uuid, with its axes, "
          "every input and shapes from Definition.get_input_shapes (%d distinct uuids; %s)"
          % (len(uuids), dict(wrong) or "no mismatch"))
    statuses = collections.Counter(t.evaluation.status.value for t in traces)
    print("      statuses: %s; axes traced: %s" % (dict(statuses), sorted(
        {tuple(sorted(t.workload.axes.items())) for t in traces})))

    sols = [s for v in ts.solutions.values() for s in v]
    check(len(sols) == 1 and isinstance(sols[0], Solution) and sols[0].definition == name,
          "the Solution loads and names the definition (%s)" % [(s.name, s.definition) for s in sols])
    if not sols:
        return
    s = sols[0]
    raw = json.load(open(next(Path(root, "solutions").rglob("*.json"))))
    extra = unknown_keys(Solution, raw, "")
    check(not extra, "every key of the Solution is a field of Solution (unknown: %s)" % (extra or "none"))
    own = [t for t in traces if t.solution == s.name]
    check(own and all(t.evaluation.status.value == "PASSED" for t in own) and ts.get_solution(own[0].solution) is s,
          "the Solution '%s' is the one its candidate's %d Traces name (TraceSet.get_solution), all PASSED"
          % (s.name, len(own)))
    for t in own:
        p = t.evaluation.performance
        print("      %s: %.4g ms, baseline %.4g ms, speedup %.3g" % (
            t.workload.axes, p.latency_ms, p.reference_latency_ms, p.speedup_factor))
    best = ts.get_best_trace(name)  # its default bounds: max errors of at most 1e-2
    worst = [max((getattr(t.evaluation.correctness, k) for t in traces if t.evaluation.correctness),
                 default=float("nan")) for k in ("max_absolute_error", "max_relative_error")]
    print("      TraceSet.get_best_trace (max errors <= 1e-2): %s; the traces' worst "
          "max_absolute_error %.3g, max_relative_error %.3g" % (
              "solution %s at %s, speedup %.3g" % (best.solution, best.workload.axes,
                                                   best.evaluation.performance.speedup_factor)
              if best else "none", worst[0], worst[1]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
    print("%d check(s) failed" % len(failed) if failed else "all checks passed")
    sys.exit(1 if failed else 0)
