#!/usr/bin/env python3
"""An MLX Metal kernel file (.metal.mlx) as a C++ kernel for ksearch's cpu backend: a check of
a Metal body's logic, with the task's own inputs, checks and tolerance, where no Apple GPU is
at hand.

  python3 bench/mlx/metal_cpu.py TEMPLATE.metal.mlx --task TASK [--define K=V,...] --out K.c \
      [--eval [-- EVAL_OPTIONS]]
  build/ksearch eval TASK K.c --backend cpu --cflags "-x c++ -std=gnu++20 -O2 -fno-exceptions \
      -fno-rtti -w" --workloads 0 --quick

or, both at once, `--eval` (prints ksearch's table; exit status ksearch's).  The file's header
and body are wrapped in a C++ shim that gives them Metal's names and runs MLX's launch on the
CPU: half is _Float16, device/constant/thread are empty, threadgroup declarations are
statics (one threadgroup runs at a time, so its threads share them), metal::exp and friends
are <cmath>'s, and every thread of a threadgroup is a coroutine (ucontext) that runs until
it reaches threadgroup_barrier or a SIMD-group function (simd_shuffle, _up, _down, _xor,
simd_broadcast, simd_sum, simd_max, simd_min, simd_prefix_exclusive_sum, simdgroup_barrier):
a SIMD group's exchange completes once all of its live threads have reached one, a barrier
once all of the threadgroup's have, so threads meet where a GPU's would.  SIMD-group
matrices (simdgroup_float8x8, simdgroup_half8x8; simdgroup_load, _store,
_multiply_accumulate, make_filled_simdgroup_matrix, thread_elements) are whole in every
lane; a lane's thread_elements() are its two elements in the layout MLX's steel kernels use,
gathered from all lanes before the next whole-matrix operation.  One-dimensional threadgroup
arrays may be sized by params (constants on a GPU, variables here).  The grid and threadgroup are the
file's `// @mlx grid:` and `// @mlx threadgroup:` expressions (threads, as MLX dispatches
them; threadgroups at the grid's edge are partial), the params and knobs are the values the
entry point gets and the knob values (params at run time: an array sized by one becomes a
variable-length array).  Threads that wait at different barriers stop the run with a
message (a GPU would hang or misbehave there too).

`--all-checks` also runs the checks a task keeps for GPUs (a copy of the task without the
checks' `backends:` lists).

What it does not check: that Metal's compiler takes the text (it must also be valid C++
here), Metal's rounding of exp/log and fast math, how a GPU rounds inside a SIMD-group
matrix product (here float products summed in k order), that Apple's GPUs place a lane's
thread_elements() as MLX's kernels assume, memory-model subtleties (threads run one at a
time), reads of threadgroup memory before any write (here they see the previous
threadgroup's values, on a GPU garbage), threadgroup pointer variables (not supported), and
speed (the times ksearch prints are the emulation's).
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlx_file  # noqa: E402  (the task's params and tensors, the file's knobs)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# the cpu backend compiles with cc: these make it compile the kernel (and the entry shim) as
# C++ without needing the C++ runtime
CXXFLAGS = "-x c++ -std=gnu++20 -O2 -fno-exceptions -fno-rtti -w"
CTYPE = {"f32": "float", "f16": "half", "i32": "int32_t", "f64": "double", "i64": "int64_t"}

SHIM = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <ucontext.h>
/* no C++ runtime (the cpu backend links with cc): no std containers, no exceptions */
typedef _Float16 half;
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
struct uint3 { uint x, y, z; };
#define device
#define constant
#define thread
#define threadgroup static /* multi-dimensional arrays; 1-D ones: ks::tg_array */
#ifndef M_LOG2E_F
#define M_LOG2E_F 1.4426950408889634f
#endif
namespace metal {
using std::abs; using std::ceil; using std::exp; using std::exp2; using std::floor; using std::fma;
using std::log; using std::log2; using std::max; using std::min; using std::pow; using std::sqrt;
using std::tanh;
namespace fast { using std::exp; using std::exp2; using std::log; using std::log2; using std::tanh; }
namespace precise { using std::exp; using std::exp2; using std::log; using std::log2; }
enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
inline mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(int(a) | int(b)); }
}
using namespace metal;
static inline long ceil_div(long a, long b) { return (a + b - 1) / b; }

/* the running thread's builtins */
static uint3 thread_position_in_grid, thread_position_in_threadgroup, threadgroup_position_in_grid,
	threads_per_threadgroup, threadgroups_per_grid;
static uint thread_index_in_threadgroup, simdgroup_index_in_threadgroup, thread_index_in_simdgroup,
	simdgroups_per_threadgroup, threads_per_simdgroup = 32;

namespace ks {
enum state { RUN, SIMD, BAR, DONE };
struct thr { ucontext_t ctx; state s; uint3 pos; uint idx; int par; };
static thr *T;
static uint nthr;
static double *slots; /* [SIMD group][parity][lane] */
static unsigned *joined; /* [SIMD group][parity]: the lanes that took part in the exchange */
static unsigned last_joined; /* of the exchange the running thread has just left */
static ucontext_t sched;
static int cur;
static char *stacks;
static const size_t STACK = 1 << 18; /* SIMD-group matrices live here: 260 bytes each */
static void (*body)();
static void entry()
{
	body();
	T[cur].s = DONE; /* uc_link returns to sched */
}
/* publish v for this thread's SIMD group, wait until the group's live threads all have, and
 * return the group's 32 values (lanes that have left keep their last value) */
static const double *exchange(double v)
{
	thr &t = T[cur];
	const uint k = (t.idx / 32) * 2 + t.par;
	slots[k * 32 + t.idx % 32] = v;
	joined[k] |= 1u << (t.idx % 32);
	t.s = SIMD;
	swapcontext(&t.ctx, &sched);
	T[cur].par ^= 1;
	last_joined = joined[k];
	return slots + k * 32;
}
static void run_group(uint3 gpos, uint3 size)
{
	const uint n = size.x * size.y * size.z;
	if (!stacks) { /* for the largest threadgroup, 1024 threads */
		stacks = (char *)malloc(1024 * STACK);
		T = (thr *)malloc(1024 * sizeof(thr));
		slots = (double *)malloc(32 * 64 * sizeof(double));
		joined = (unsigned *)malloc(32 * 2 * sizeof(unsigned));
		if (!stacks || !T || !slots || !joined)
			abort();
	}
	nthr = n;
	memset(T, 0, n * sizeof(thr));
	memset(slots, 0, 32 * 64 * sizeof(double));
	memset(joined, 0, 32 * 2 * sizeof(unsigned));
	for (uint i = 0; i < n; i++) {
		getcontext(&T[i].ctx);
		T[i].ctx.uc_stack.ss_sp = stacks + i * STACK;
		T[i].ctx.uc_stack.ss_size = STACK;
		T[i].ctx.uc_link = &sched;
		makecontext(&T[i].ctx, entry, 0);
		T[i].s = RUN;
		T[i].idx = i;
		T[i].pos = {i % size.x, i / size.x % size.y, i / (size.x * size.y)};
	}
	for (;;) {
		bool ran = false;
		for (uint i = 0; i < n; i++) {
			if (T[i].s != RUN)
				continue;
			cur = (int)i;
			thread_position_in_threadgroup = T[i].pos;
			thread_index_in_threadgroup = i;
			simdgroup_index_in_threadgroup = i / 32;
			thread_index_in_simdgroup = i % 32;
			thread_position_in_grid = {gpos.x * threads_per_threadgroup.x + T[i].pos.x,
						   gpos.y * threads_per_threadgroup.y + T[i].pos.y,
						   gpos.z * threads_per_threadgroup.z + T[i].pos.z};
			swapcontext(&sched, &T[i].ctx);
			ran = true;
		}
		bool released = false, live = false, all_bar = true;
		for (uint g = 0; g * 32 < n; g++) {
			bool any = false, all_simd = true;
			for (uint i = g * 32; i < std::min(n, g * 32 + 32); i++)
				if (T[i].s != DONE)
					any = true, all_simd &= T[i].s == SIMD;
			if (any && all_simd) {
				uint par = 0;
				for (uint i = g * 32; i < std::min(n, g * 32 + 32); i++)
					if (T[i].s == SIMD)
						T[i].s = RUN, par = T[i].par;
				/* every lane has read the exchange before this one: its parity is
				 * the next exchange's */
				joined[g * 2 + (par ^ 1)] = 0;
				released = true;
			}
		}
		for (uint i = 0; i < n; i++)
			if (T[i].s != DONE)
				live = true, all_bar &= T[i].s == BAR;
		if (!live)
			return;
		if (!released && all_bar) {
			for (uint i = 0; i < n; i++)
				if (T[i].s == BAR)
					T[i].s = RUN;
			released = true;
		}
		if (!ran && !released) {
			fprintf(stderr, "metal_cpu: threadgroup (%u,%u,%u): threads wait at different "
					"barriers or SIMD-group functions\n", gpos.x, gpos.y, gpos.z);
			abort();
		}
	}
}
/* MLX's dispatch of grid threads in threadgroups of tg: edge threadgroups are partial */
static void launch(void (*b)(), uint3 grid, uint3 tg)
{
	body = b;
	if (tg.x * tg.y * tg.z > 1024) {
		fprintf(stderr, "metal_cpu: threadgroup of %u threads (at most 1024)\n", tg.x * tg.y * tg.z);
		abort();
	}
	threadgroups_per_grid = {(grid.x + tg.x - 1) / tg.x, (grid.y + tg.y - 1) / tg.y,
				 (grid.z + tg.z - 1) / tg.z};
	for (uint z = 0; z < threadgroups_per_grid.z; z++)
		for (uint y = 0; y < threadgroups_per_grid.y; y++)
			for (uint x = 0; x < threadgroups_per_grid.x; x++) {
				threadgroup_position_in_grid = {x, y, z};
				threads_per_threadgroup = tg;
				const uint3 size = {std::min(tg.x, grid.x - x * tg.x), std::min(tg.y, grid.y - y * tg.y),
						    std::min(tg.z, grid.z - z * tg.z)};
				simdgroups_per_threadgroup = (size.x * size.y * size.z + 31) / 32;
				run_group({x, y, z}, size);
			}
}
}

static void threadgroup_barrier(mem_flags)
{
	ks::T[ks::cur].s = ks::BAR;
	swapcontext(&ks::T[ks::cur].ctx, &ks::sched);
}
template <class V> static V simd_shuffle(V v, ushort lane) { return (V)ks::exchange((double)v)[lane % 32]; }
template <class V> static V simd_broadcast(V v, ushort lane) { return simd_shuffle(v, lane); }
template <class V> static V simd_shuffle_up(V v, ushort d)
{
	const uint l = thread_index_in_simdgroup;
	return (V)ks::exchange((double)v)[l >= d ? l - d : l];
}
template <class V> static V simd_shuffle_down(V v, ushort d)
{
	const uint l = thread_index_in_simdgroup;
	return (V)ks::exchange((double)v)[l + d < 32 ? l + d : l];
}
template <class V> static V simd_shuffle_xor(V v, ushort m)
{
	return (V)ks::exchange((double)v)[(thread_index_in_simdgroup ^ m) % 32];
}
/* reductions over the lanes that took part, in lane order, in V's precision */
template <class V, class F> static V ks_reduce(V v, F f, bool prefix)
{
	const uint l = thread_index_in_simdgroup;
	const double *x = ks::exchange((double)v);
	V acc = (V)0;
	bool first = true;
	for (uint i = 0; i < (prefix ? l : 32u); i++) {
		if (!(ks::last_joined >> i & 1))
			continue;
		acc = first ? (V)x[i] : f(acc, (V)x[i]);
		first = false;
	}
	return acc;
}
template <class V> static V simd_sum(V v) { return ks_reduce(v, [](V a, V b) { return V(a + b); }, false); }
template <class V> static V simd_max(V v) { return ks_reduce(v, [](V a, V b) { return a > b ? a : b; }, false); }
template <class V> static V simd_min(V v) { return ks_reduce(v, [](V a, V b) { return a < b ? a : b; }, false); }
template <class V> static V simd_prefix_exclusive_sum(V v)
{
	return ks_reduce(v, [](V a, V b) { return V(a + b); }, true);
}
static void simdgroup_barrier(mem_flags) { ks::exchange(0); }

/* threadgroup arrays of one dimension (the sizes may be params, constants only on a GPU
 * but variables here): storage per declaration, shared by the threadgroup's threads */
namespace ks {
static void *tg_buf[64];
static size_t tg_len[64];
static void *tg_array(int id, size_t bytes)
{
	if (id >= 64) {
		fprintf(stderr, "metal_cpu: more than 64 threadgroup arrays\n");
		abort();
	}
	if (tg_len[id] < bytes && !(tg_buf[id] = realloc(tg_buf[id], tg_len[id] = bytes)))
		abort();
	return tg_buf[id];
}
}

/* SIMD-group matrices, 8x8.  Every lane keeps the whole matrix: simdgroup_load, _store,
 * make_filled_simdgroup_matrix and simdgroup_multiply_accumulate are uniform across the SIMD
 * group, so each lane computes the same copy.  thread_elements() is the lane's two elements
 * where Apple's GPUs keep them (the layout MLX's steel kernels rely on, mma.h: qid = lane / 4,
 * row (qid & 4) + (lane / 2) % 4, columns (qid & 2) * 2 + (lane % 2) * 2 and the next); taking
 * them marks the lane's copy stale, and the next whole-matrix operation on it first gathers
 * each lane's two elements from the other lanes' copies (the same variable sits at the same
 * offset of every coroutine's stack), between two SIMD-group meetings so that no lane has
 * moved on or still has to write. */
typedef unsigned long ulong;
struct ulong2 {
	ulong x, y;
	ulong2(ulong a = 0) : x(a), y(a) {}
	ulong2(ulong a, ulong b) : x(a), y(b) {}
};
template <class T, int N> struct vec {
	T v[N];
	T &operator[](int i) { return v[i]; }
	const T &operator[](int i) const { return v[i]; }
};
static inline int ks_own(uint lane)
{
	const uint qid = lane / 4;
	return int(((qid & 4) + (lane / 2) % 4) * 8 + (qid & 2) * 2 + (lane % 2) * 2);
}
template <class T, int R, int C> struct simdgroup_matrix {
	static_assert(R == 8 && C == 8, "metal_cpu: 8x8 SIMD-group matrices only");
	T e[64];
	bool stale = false;
	simdgroup_matrix() {}
	explicit simdgroup_matrix(T diagonal)
	{
		for (int i = 0; i < 64; i++)
			e[i] = i / 8 == i % 8 ? diagonal : T(0);
	}
	vec<T, 2> &thread_elements()
	{
		stale = true;
		return *reinterpret_cast<vec<T, 2> *>(e + ks_own(thread_index_in_simdgroup));
	}
};
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
template <class T, int R, int C> static simdgroup_matrix<T, R, C> make_filled_simdgroup_matrix(T v)
{
	simdgroup_matrix<T, R, C> m;
	for (int i = 0; i < 64; i++)
		m.e[i] = v;
	return m;
}
template <class M> static void ks_take(M &m)
{
	const uint me = ks::T[ks::cur].idx, base = me - me % 32;
	for (uint l = 0; l < 32; l++) {
		if (!(ks::last_joined >> l & 1) || base + l == me)
			continue;
		const M *o = reinterpret_cast<const M *>(reinterpret_cast<const char *>(&m) +
							  (long(base + l) - long(me)) * long(ks::STACK));
		const int k = ks_own(l);
		m.e[k] = o->e[k];
		m.e[k + 1] = o->e[k + 1];
	}
	m.stale = false;
}
/* the stale ones of a whole-matrix operation's operands, gathered (uniform: every lane has
 * the same stale ones) */
template <class... M> static void ks_gather(M &...m)
{
	if (!(m.stale || ...))
		return;
	ks::exchange(0);
	((m.stale ? (ks_take(m), 0) : 0), ...);
	ks::exchange(0);
}
template <class T> static void simdgroup_load(simdgroup_matrix<T, 8, 8> &d, const T *src, ulong epr = 8,
					      ulong2 org = ulong2(0), bool transpose = false)
{
	for (int r = 0; r < 8; r++)
		for (int c = 0; c < 8; c++)
			d.e[transpose ? c * 8 + r : r * 8 + c] = src[(org.y + r) * epr + org.x + c];
	d.stale = false;
}
template <class T> static void simdgroup_store(simdgroup_matrix<T, 8, 8> &a, T *dst, ulong epr = 8,
					       ulong2 org = ulong2(0), bool transpose = false)
{
	ks_gather(a);
	for (int r = 0; r < 8; r++)
		for (int c = 0; c < 8; c++)
			dst[(org.y + r) * epr + org.x + c] = a.e[transpose ? c * 8 + r : r * 8 + c];
}
template <class D, class A, class B, class C>
static void simdgroup_multiply_accumulate(D &d, A &a, B &b, C &c)
{
	ks_gather(a, b, c);
	/* float products and sums in k order (a GPU may fuse them; the emulation is slow enough
	 * without a libm fma call per term) */
	float t[64], bf[64];
	for (int i = 0; i < 64; i++)
		t[i] = float(c.e[i]), bf[i] = float(b.e[i]);
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 8; k++) {
			const float aik = float(a.e[i * 8 + k]);
			for (int j = 0; j < 8; j++)
				t[i * 8 + j] += aik * bf[k * 8 + j];
		}
	using E = std::remove_reference_t<decltype(d.e[0])>;
	for (int i = 0; i < 64; i++)
		d.e[i] = E(t[i]);
	d.stale = false;
}
template <class D, class A, class B> static void simdgroup_multiply(D &d, A &a, B &b)
{
	D zero = make_filled_simdgroup_matrix<std::remove_reference_t<decltype(d.e[0])>, 8, 8>(0);
	simdgroup_multiply_accumulate(d, a, b, zero);
}
"""


def split3(expr):
    """X, Y, Z of a grid or threadgroup line: its commas outside parentheses"""
    parts, depth, cur = [], 0, ""
    for ch in expr:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    if len(parts) != 3:
        sys.exit("metal_cpu: '%s' is not X, Y, Z" % expr)
    return parts


def directive(text, key):
    m = re.search(r"^\s*//\s*@mlx\s+%s:\s*(.+?)\s*$" % key, text, re.M)
    return m.group(1) if m else None


def knob_values(text, defines):
    knobs = dict(mlx_file.knob_defaults(text))
    for kv in (d for arg in defines for d in arg.split(",") if d):
        k, v = kv.split("=", 1)
        if k not in knobs:
            sys.exit("metal_cpu: no knob %s (knobs: %s)" % (k, ", ".join(knobs) or "none"))
        knobs[k] = v
    return knobs


def source(template, task, defines):
    """(knob values, the C++ kernel for ksearch's cpu backend: the shim, the knobs, the file's
    header and body, and the task's entry point launching the body on MLX's grid)"""
    text = open(template).read()
    if directive(text, "flavour") != "metal":
        sys.exit("metal_cpu: %s is not a metal kernel ('// @mlx flavour: metal')" % template)
    task_dir = task if os.path.isdir(task) else os.path.join(ROOT, "tasks", task)
    if not os.path.isfile(os.path.join(task_dir, "task.yaml")):
        sys.exit("metal_cpu: no task '%s' (a name under tasks/ or a folder with a task.yaml)" % task)
    name = re.search(r"^name:\s*(\w+)", open(os.path.join(task_dir, "task.yaml")).read(), re.M).group(1)
    params, tensors = mlx_file.task_decl(task_dir)
    params = [(n, CTYPE[t]) for n, t in params]
    tensors = [(n, CTYPE[t], o) for n, t, o in tensors]
    grid, tg = directive(text, "grid"), directive(text, "threadgroup")
    if not grid or not tg:
        sys.exit("metal_cpu: %s has no '// @mlx grid:' or '// @mlx threadgroup:' line" % template)
    header = re.search(r"//\s*@mlx header\n(.*?)(?=//\s*@mlx body)", text, re.S)
    body = re.search(r"//\s*@mlx body\n(.*)$", text, re.S).group(1)
    # a one-dimensional threadgroup array in the body: shared storage of the run's size
    body = re.sub(r"\bthreadgroup\s+((?:const\s+)?[A-Za-z_][\w:]*)\s+([A-Za-z_]\w*)\s*\[([^\[\];]+)\]\s*;",
                  r"\1 *\2 = (\1 *)ks::tg_array(__COUNTER__, sizeof(\1) * (\3));", body)
    knobs = knob_values(text, defines)
    out = [SHIM]
    out += ["constexpr int %s = %s;" % kv for kv in knobs.items()]
    out += ["static %s%s *%s;" % ("" if o else "const ", t, n) for n, t, o in tensors]
    out += ["static %s %s;" % (t, n) for n, t in params]
    out.append(header.group(1) if header else "")
    out.append("static void ks_body()\n{\n%s\n}\n" % body)
    args = ["%s%s *ks_t%d" % ("" if o else "const ", t, i) for i, (n, t, o) in enumerate(tensors)]
    args += ["%s ks_p%d" % (t, i) for i, (n, t) in enumerate(params)]
    out.append('extern "C" void %s(%s)\n{' % (name, ", ".join(args)))
    out += ["\t%s = ks_t%d;" % (n, i) for i, (n, t, o) in enumerate(tensors)]
    out += ["\t%s = ks_p%d;" % (n, i) for i, (n, t) in enumerate(params)]
    out.append("\tks::launch(ks_body, uint3{uint(%s), uint(%s), uint(%s)}, uint3{uint(%s), uint(%s), uint(%s)});\n}"
               % tuple(split3(grid) + split3(tg)))
    return knobs, "\n".join(out) + "\n"


def all_checks_task(task):
    """a copy of the task (in a temporary folder) whose checks run on every backend: the
    `backends:` lists of its checks removed, so that the cpu backend also runs the checks a
    task keeps for GPUs (long ragged shapes); the reference and everything else unchanged"""
    import shutil
    import tempfile
    src = task if os.path.isdir(task) else os.path.join(ROOT, "tasks", task)
    dst = os.path.join(tempfile.mkdtemp(prefix="metal_cpu_"), os.path.basename(os.path.normpath(src)))
    shutil.copytree(src, dst)
    out, in_checks = [], False
    for line in open(os.path.join(dst, "task.yaml")).read().split("\n"):
        if re.match(r"^[A-Za-z_]", line):
            in_checks = line.startswith("checks:")
        if in_checks:
            line = re.sub(r",\s*backends:\s*\[[^\]]*\]", "", line)
        out.append(line)
    open(os.path.join(dst, "task.yaml"), "w").write("\n".join(out))
    return dst


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        epilog="With --eval, the options after -- go to ksearch eval (e.g. -- --workloads 0 "
               "--quick --no-baseline); without --out the kernel is printed.")
    ap.add_argument("template")
    ap.add_argument("--task", required=True, help="a shipped task's name or a task folder")
    ap.add_argument("--define", action="append", default=[], help="K=V,...: knob values")
    ap.add_argument("--out", help="write the C++ kernel here (default: stdout)")
    ap.add_argument("--eval", action="store_true",
                    help="and run `ksearch eval TASK OUT --backend cpu --cflags CXXFLAGS` on it")
    ap.add_argument("--all-checks", action="store_true",
                    help="with --eval: also the checks the task keeps for GPUs (a copy of the "
                         "task without the checks' backends: lists)")
    ap.add_argument("--ksearch", default=os.path.join(ROOT, "build", "ksearch"))
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    a.eval_args = argv[cut + 1:]  # after --: more options for ksearch eval
    _, src = source(a.template, a.task, a.define)
    if a.eval and not a.out:
        sys.exit("metal_cpu: --eval needs --out FILE.c")
    if a.out:
        open(a.out, "w").write(src)
    else:
        sys.stdout.write(src)
    if not a.eval:
        return 0
    if not os.access(a.ksearch, os.X_OK):
        sys.exit("metal_cpu: no ksearch at %s (make build, or --ksearch PATH)" % a.ksearch)
    task = all_checks_task(a.task) if a.all_checks else a.task
    cmd = [a.ksearch, "eval", task, a.out, "--backend", "cpu", "--cflags", CXXFLAGS] + a.eval_args
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
