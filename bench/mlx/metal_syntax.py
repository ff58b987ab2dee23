#!/usr/bin/env python3
"""A strict syntax check of MLX Metal kernel files (.metal.mlx) without Apple's compiler.

    python3 bench/mlx/metal_syntax.py [--ksearch BIN] [--clang CMD] [--task TASK] FILE...

Each file is turned into the source MLX's mx.fast.metal_kernel generates from it (the file's
header, a templated `[[kernel]]` function whose signature MLX writes from the task's tensors:
`const device T* name [[buffer(i)]]`, `constant` for arrays of fewer than 8 elements, the
`name_shape`, `name_strides` and `name_ndim` buffers the body names, the Metal attributes it
names such as `uint3 thread_position_in_grid`; the body), and compiled by clang as C++17 for
arm64-apple-macos against bench/mlx/metal_syntax.h, which declares Metal's types (vectors as
ext_vector_type, device/constant/threadgroup as distinct address spaces), its math, SIMD-group
and SIMD-group-matrix functions.  The template is instantiated for every workload and check
the task runs on the mlx backend (the task's params and the knobs' defaults, each workload's
tensor sizes deciding device or constant), and once more for every other value of each knob,
where the file's `require:` lines allow it.  Errors point at the kernel file's own lines.

The compiler: --clang CMD, else $KS_METAL_CLANG, else zig's clang (`python3 -m ziglang clang`,
`pip install ziglang`), else clang on PATH; the first that is strict enough, which a probe
decides: it must reject a non-const reference to a vector element by subscript and by name
(`thread float &x = v[i];`, `= v.x;`), as Apple's compiler does (clang 14 takes the first).
Exit status: 0 every file passed, 1 one failed, 2 a usage or setup error, 77 no clang here is
strict enough (nothing was checked).

What it does not check: what Apple's compiler adds beyond clang's C++ (its own diagnostics,
Metal-only keywords it would reject elsewhere), resource limits (threadgroup memory,
registers), vector constructor arguments (float4(a.xy, b, c): any are taken), [[attributes]],
and anything at run time (bench/mlx/metal_cpu.py runs the logic on the CPU).
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlx_file  # noqa: E402  (a file's knob defaults)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
HEADER = os.path.join(HERE, "metal_syntax.h")
SKIP = 77

# MLX's Metal type names for ksearch's dtypes (mlx/backend/metal/utils.h, get_type_string)
MTYPE = {"f32": "float", "f16": "half", "bf16": "bfloat16_t", "i32": "int32_t", "i64": "int64_t",
         "f64": "double"}
# the attributes MLX adds to the signature when the source names them, with Metal's types
ATTRS = {
    "dispatch_quadgroups_per_threadgroup": "uint", "dispatch_simdgroups_per_threadgroup": "uint",
    "dispatch_threads_per_threadgroup": "uint3", "grid_origin": "uint3", "grid_size": "uint3",
    "quadgroup_index_in_threadgroup": "uint", "quadgroups_per_threadgroup": "uint",
    "simdgroup_index_in_threadgroup": "uint", "simdgroups_per_threadgroup": "uint",
    "thread_execution_width": "uint", "thread_index_in_quadgroup": "uint",
    "thread_index_in_simdgroup": "uint", "thread_index_in_threadgroup": "uint",
    "thread_position_in_grid": "uint3", "thread_position_in_threadgroup": "uint3",
    "threadgroup_position_in_grid": "uint3", "threadgroups_per_grid": "uint3",
    "threads_per_grid": "uint3", "threads_per_simdgroup": "uint", "threads_per_threadgroup": "uint3",
}
VECTOR_CTOR = re.compile(r"\b((?:bool|char|uchar|short|ushort|int|uint|long|ulong|half|float|bfloat)[234])\s*\(")
PROBE_BAD = ("void p(float2 v, int i) { thread float &a = v[i]; (void)a; }",
             "void p(float2 v) { thread float &a = v.x; (void)a; }")
PROBE_GOOD = "void p(float2 v, int i) { const float &a = v[i]; float b = v.y; (void)a; (void)b; }"


def die(msg, code=2):
    print("metal_syntax: " + msg, file=sys.stderr)
    sys.exit(code)


def compile_text(clang, text):
    """(ok, clang's output) for text compiled as Metal-like C++ with the header"""
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        cmd = clang + ["-target", "arm64-apple-macos14", "-x", "c++", "-std=c++17",
                       "-fsyntax-only", "-nostdinc", "-nostdinc++", "-ffreestanding",
                       "-Wall", "-Werror", "-Wno-unknown-attributes", "-Wno-unused-variable",
                       "-Wno-unused-but-set-variable", "-ferror-limit=20", "-include", HEADER,
                       path]
        p = subprocess.run(cmd, capture_output=True, text=True)
        return p.returncode == 0, p.stdout + p.stderr
    except OSError as ex:
        return False, str(ex)
    finally:
        os.unlink(path)


def strict_clang(choice):
    """the first compiler command that passes the probe, and what was tried"""
    tried = []
    cands = [choice] if choice else []
    if not choice and os.environ.get("KS_METAL_CLANG"):
        cands.append(os.environ["KS_METAL_CLANG"])
    if not choice:
        cands += [sys.executable + " -m ziglang clang", "clang"]
    for c in cands:
        cmd = shlex.split(c)
        good, out = compile_text(cmd, PROBE_GOOD)
        if not good:
            tried.append("%s: does not run or rejects valid code (%s)" % (c, out.strip()[:200]))
            continue
        weak = [b for b in PROBE_BAD if compile_text(cmd, b)[0]]
        if weak:
            tried.append("%s: accepts %s" % (c, weak[0]))
            continue
        return cmd, tried
    return None, tried


def task_info(ksearch, task):
    p = subprocess.run([ksearch, "tasks", "show", task, "--backend", "mlx", "--json"],
                       capture_output=True, text=True)
    if p.returncode:
        die("ksearch tasks show %s: %s" % (task, p.stderr.strip()))
    return json.loads(p.stdout)


def py_expr(expr):
    """ksearch's expression syntax (&&, ||, !, ceil_div) as Python's"""
    e = expr.replace("&&", " and ").replace("||", " or ")
    return re.sub(r"!(?!=)", " not ", e)


def evaluate(expr, env):
    scope = dict(env, ceil_div=lambda a, b: -(-a // b), min=min, max=max)
    return eval(py_expr(expr), {"__builtins__": {}}, scope)


def parse_kernel(text):
    """(header lines with their numbers, body lines with theirs, template lines, defines)"""
    header, body, tmpl, defines, where = [], [], [], [], None
    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if s == "// @mlx header":
            where = header
        elif s == "// @mlx body":
            where = body
        elif s.startswith("// @mlx template:"):
            name, _, expr = s[len("// @mlx template:"):].partition("=")
            tmpl.append((name.strip(), expr.strip()))
        elif where is None and re.match(r"#define\s+\w+\s+\S", s):
            _, name, value = s.split(None, 2)
            defines.append((name, value))
        elif where is not None:
            where.append((n, line))
    return header, body, tmpl, defines


def knob_values(text):
    """{name: [values]} of the file's @ksearch knobs"""
    out = {}
    for name, vals in re.findall(r"^\s+(\w+):\s*\{values:\s*\[([^]]*)\]", text, re.M):
        out[name] = [v.strip() for v in vals.split(",") if v.strip()]
    return out


def requires(text):
    m = re.search(r"^require:\n((?:\s+-.*\n|\s+#.*\n)+)", text, re.M)
    return re.findall(r'^\s+-\s*"(.*)"', m.group(1), re.M) if m else []


def resolve_includes(lines, task_dir, knobs):
    """`// @mlx include: PATH` lines as the file between the knobs' #define and #undef"""
    out = []
    for n, line in lines:
        m = re.match(r"\s*// @mlx include:\s*(\S+)", line)
        if not m:
            out.append((n, line))
            continue
        path = os.path.join(task_dir, m.group(1))
        out += [(n, "#define %s %s" % kv) for kv in knobs]
        out.append((n, '#line 1 "%s"' % path))
        out += [(None, l) for l in open(path).read().split("\n")]
        out += [(n, "#undef %s" % k) for k, _ in knobs]
    return out


def with_lines(lines, path):
    """source text whose lines carry #line directives back to path"""
    out, expect = [], None
    for n, line in lines:
        if n is not None and n != expect:
            out.append('#line %d "%s"' % (n, path))
        out.append(VECTOR_CTOR.sub(r"ks_metal_make<\1>(", line))
        expect = n + 1 if n is not None else None
    return "\n".join(out)


def static_threadgroup(lines):
    """threadgroup arrays declared in the body are per-threadgroup storage, which C++ can
    only express as static locals (the header's threadgroup is an address space)"""
    return [(n, re.sub(r"^(\s*)threadgroup\s+(?=[\w:<>, ]+\s+\w+\s*[\[;=])", r"\1static threadgroup ",
                       line)) for n, line in lines]


def signature(info, sizes, source):
    """MLX's parameter list for one workload's tensor sizes"""
    params, index = [], 0
    for t in info["inputs"]:
        name, ty = t["name"], MTYPE[t["dtype"]]
        space = "constant" if sizes[name] < 8 else "device"
        ref = "&" if not t["shape"] else "*"
        params.append("const %s %s%s %s [[buffer(%d)]]" % (space, ty, ref, name, index))
        index += 1
        if t["shape"]:
            for suffix, decl in (("_shape", "const constant int*"), ("_strides", "const constant int64_t*"),
                                 ("_ndim", "const constant int&")):
                if name + suffix in source:
                    params.append("%s %s%s [[buffer(%d)]]" % (decl, name, suffix, index))
                    index += 1
    for t in info["outputs"]:
        params.append("device %s* %s [[buffer(%d)]]" % (MTYPE[t["dtype"]], t["name"], index))
        index += 1
    for attr, ty in ATTRS.items():
        if attr in source:
            params.append("%s %s [[%s]]" % (ty, attr, attr))
    return ",\n  ".join(params)


def targ(value):
    """(template parameter kind, argument) of a knob or template value, as MLX types it"""
    if value in ("true", "false"):
        return "bool", value
    if value in MTYPE:
        return "typename", MTYPE[value]
    return "int", value


def instances(info, text, knobs, tmpl):
    """[(sizes, [(name, kind, value)])]: every mlx workload and check at the knobs' defaults,
    then each other knob value at the first workload, where require allows"""
    rows = [w for w in info["workloads"] + info["checks"] if w.get("applies", True)]
    values, reqs, out = knob_values(text), requires(text), []
    settings = [dict(knobs)]
    for name, vals in values.items():
        for v in vals:
            if v != dict(knobs).get(name):
                settings.append(dict(knobs, **{name: v}))
    for i, s in enumerate(settings):
        for w in rows if i == 0 else rows[:1]:
            env = dict(w["params"])
            env.update({k: int(v) for k, v in s.items() if re.fullmatch(r"-?\d+", v)})
            try:
                if not all(evaluate(r, env) for r in reqs):
                    continue
            except Exception:  # an expression Python cannot read: assume it holds
                pass
            args = [(p["name"], "int", str(int(w["params"][p["name"]]))) for p in info["params"]]
            args += [(k,) + targ(v) for k, v in s.items()]
            args += [(k,) + targ(str(evaluate(e, env))) for k, e in tmpl]
            sizes = {}
            for t in info["inputs"]:
                n = 1
                for d in t["shape"]:
                    n *= int(evaluate(str(d), env))
                sizes[t["name"]] = n
            out.append((sizes, args))
    return out


def kernel_source(path, info, task_dir):
    text = open(path).read()
    header, body, tmpl, defines = parse_kernel(text)
    if not body:
        die("%s: no '// @mlx body' line" % path)
    knobs = defines or mlx_file.knob_defaults(text)
    header = resolve_includes(header, task_dir, knobs)
    src_text = "\n".join(l for _, l in header + body)
    insts = instances(info, text, knobs, tmpl)
    if not insts:
        die("%s: no workload of task '%s' runs on the mlx backend" % (path, info["name"]))
    out = [with_lines(header, path)]
    sigs, done = {}, set()
    for sizes, args in insts:
        sig = signature(info, sizes, src_text)
        if sig not in sigs:
            fn = "custom_kernel_%d" % len(sigs)
            sigs[sig] = fn
            tparams = ", ".join("%s %s" % (kind, name) for name, kind, _ in args)
            out.append('#line 1 "(MLX\'s signature)"')
            out.append("template <%s>\n[[kernel]] void %s(\n  %s) {" % (tparams, fn, sig))
            out.append(with_lines(static_threadgroup(body), path))
            out.append("}")
        fn = sigs[sig]
        targs = ", ".join(v for _, _, v in args)
        if (fn, targs) not in done:
            done.add((fn, targs))
            out.append('#line 1 "(MLX\'s instantiation at %s)"' % targs.replace('"', ""))
            out.append("template decltype(%s<%s>) %s<%s>;" % (fn, targs, fn, targs))
    return "\n".join(out) + "\n", len(done)


def task_of(path):
    d = os.path.dirname(os.path.abspath(path))
    if os.path.basename(d) == "mlx" and os.path.basename(os.path.dirname(d)) == "templates":
        d = os.path.dirname(os.path.dirname(d))
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--ksearch", default=os.path.join(os.environ.get("KS_BIN", os.path.join(ROOT, "build")), "ksearch"))
    ap.add_argument("--clang", help="the compiler command (default: the first strict one)")
    ap.add_argument("--task", help="the task of every file (default: the file's task folder)")
    ap.add_argument("--source", help="write the last file's generated source here")
    a = ap.parse_args()
    clang, tried = strict_clang(a.clang)
    if not clang:
        die("no clang strict enough for Metal here:\n  " + "\n  ".join(tried) +
            "\n(pip install ziglang gives one)", SKIP)
    print("metal_syntax: %s" % " ".join(clang))
    failed = 0
    for path in a.files:
        task = a.task or task_of(path)
        info = task_info(a.ksearch, task)
        src, n = kernel_source(path, info, info["dir"])
        if a.source:
            open(a.source, "w").write(src)
        good, out = compile_text(clang, src)
        print("%s: %s (%d instantiations)" % (path, "ok" if good else "FAILED", n))
        if not good:
            failed += 1
            sys.stdout.write(out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
