#!/usr/bin/env python3
"""Run the selective scan's Metal body (tasks/selective_scan/templates/mlx/state_scan.metal.mlx)
on the CPU, as written, against a float64 reference: a check of its logic where no Apple GPU
is at hand.

  python3 bench/mlx/metal_scan_cpu.py [--define ITEMS=4,CPB=2 ...] [--shapes checks|all]

The file's header and body are compiled by g++ (C++20) inside a shim that gives them
Metal's names: half is _Float16, device/constant are empty, metal::exp and friends are the
<cmath> ones, and each SIMD group is 32 coroutines (ucontext) whose simd_shuffle_up and
simd_shuffle exchange values in rounds: every lane reaches the exchange before any reads,
so the 32 lanes run the body in lock step at each exchange, as a SIMD group does (a
divergent exchange, one only some lanes reach, is not modelled).  Each --define is one knob
setting (default: the file's defaults); every setting runs every shape: the task's checks
(tasks/selective_scan/task.yaml, with their inits), dstate 20 (the body's fallback past 16
states) and, with --shapes all, the b1 d256 L512 workload.  Inputs follow the task's distributions (f16
activations rounded as the task rounds them); a shape passes when every output meets
|y - ref| <= atol + rtol |ref| with the task's atol 3e-3, rtol 2e-2.  Prints a line per
setting and shape and exits 1 when any fails or the body does not compile.

What it does not check: that Metal's compiler takes the text (no Metal compiler runs on
Linux), Metal's rounding of exp/log (here <cmath>'s), and speed.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TEMPLATE = os.path.join(ROOT, "tasks/selective_scan/templates/mlx/state_scan.metal.mlx")

# name, batch, dim, seqlen, dstate, delta_bias override (None: uniform(-4, -1)), A's mean
CHECKS = [
    ("single-step", 2, 8, 1, 16, None, 0.0),
    ("long-decaying", 1, 4, 4096, 16, None, 0.0),
    ("ragged", 2, 24, 77, 16, None, 0.0),
    ("odd-dstate", 1, 19, 100, 5, None, 0.0),
    ("slow-decay", 1, 16, 2000, 16, -7.0, 0.0),
    ("softplus-linear", 1, 16, 64, 16, 25.0, 0.0),
    ("long-32k", 1, 40, 32768, 16, -6.0, 0.0),
    ("exp-underflow", 2, 72, 1500, 16, 3.0, 3.0),
    ("ragged-long", 3, 37, 4099, 16, None, 0.0),
    ("dstate-20", 1, 6, 300, 20, None, 0.0),
]
WORKLOADS = [("b1-d256-L512", 1, 256, 512, 16, None, 0.0)]

SHIM = r"""
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <ucontext.h>
#include <vector>
typedef _Float16 half;
typedef unsigned int uint;
typedef unsigned short ushort;
#define device
#define constant
namespace metal {
using std::exp; using std::exp2; using std::log; using std::log2; using std::max; using std::min;
namespace fast { using std::exp; using std::exp2; using std::log; }
namespace precise { using std::exp; using std::exp2; using std::log; }
}
using namespace metal;
struct ks_uint3 { uint x, y, z; };
/* the running lane's builtins: one lane runs at a time */
static uint thread_index_in_simdgroup, simdgroup_index_in_threadgroup;
static ks_uint3 threadgroup_position_in_grid;
/* A SIMD group: 32 lanes as coroutines (ucontext) on one thread.  At an exchange a lane
 * writes its value and yields; once all 32 have, each resumes and reads.  Exchange k uses
 * buffer k % 2, so a lane that runs on to exchange k + 1 never overwrites a value another
 * lane has still to read. */
static ucontext_t ks_sched, ks_lane[32];
static float ks_slot[2][32];
static unsigned ks_round;
static float ks_exchange(float v, int from)
{
	const int l = (int)thread_index_in_simdgroup;
	float *buf = ks_slot[ks_round & 1];
	buf[l] = v;
	swapcontext(&ks_lane[l], &ks_sched);
	return ks_slot[(ks_round - 1) & 1][from];
}
static float simd_shuffle_up(float v, ushort o)
{
	const int l = (int)thread_index_in_simdgroup;
	return ks_exchange(v, l >= o ? l - o : l);
}
static float simd_shuffle(float v, ushort lane) { return ks_exchange(v, lane); }
"""

KERNEL = r"""
template <int batch, int dim, int seqlen, int dstate>
static void ks_body(const half *u, const half *delta, const float *A, const half *B,
                    const half *C, const float *D, const half *z, const float *delta_bias,
                    half *y)
{
%(body)s
}

struct ks_args { const half *u, *delta; const float *A; const half *B, *C; const float *D;
		 const half *z; const float *db; half *y; };
static ks_args ks_a;
static bool ks_done[32];

template <int batch, int dim, int seqlen, int dstate>
static void ks_lane_main(int l)
{
	ks_body<batch, dim, seqlen, dstate>(ks_a.u, ks_a.delta, ks_a.A, ks_a.B, ks_a.C, ks_a.D,
					    ks_a.z, ks_a.db, ks_a.y);
	ks_done[l] = true; /* back to ks_sched through uc_link */
}

template <int batch, int dim, int seqlen, int dstate>
static void ks_launch(const half *u, const half *delta, const float *A, const half *B,
		      const half *C, const float *D, const half *z, const float *db, half *y)
{
	ks_a = {u, delta, A, B, C, D, z, db, y};
	static std::vector<char> stacks(32 * (1 << 18));
	const long ch = (long)batch * dim;
	for (long c = 0; c < ch; c++) { /* the grid's SIMD groups, one after another */
		for (int l = 0; l < 32; l++) {
			getcontext(&ks_lane[l]);
			ks_lane[l].uc_stack.ss_sp = stacks.data() + (long)l * (1 << 18);
			ks_lane[l].uc_stack.ss_size = 1 << 18;
			ks_lane[l].uc_link = &ks_sched;
			makecontext(&ks_lane[l], (void (*)())ks_lane_main<batch, dim, seqlen, dstate>, 1, l);
			ks_done[l] = false;
		}
		ks_round = 0;
		for (bool alive = true; alive;) { /* one round: every live lane to its next exchange */
			alive = false;
			for (int l = 0; l < 32; l++) {
				if (ks_done[l])
					continue;
				thread_index_in_simdgroup = l;
				simdgroup_index_in_threadgroup = (uint)(c %% CPB);
				threadgroup_position_in_grid = {(uint)(c / CPB), 0, 0};
				swapcontext(&ks_sched, &ks_lane[l]);
				alive |= !ks_done[l];
			}
			ks_round++;
		}
	}
}

template <int batch, int dim, int seqlen, int dstate>
static int ks_check(const char *name, double bias, double amean, unsigned seed)
{
	const long n1 = (long)batch * dim * seqlen, nbc = (long)batch * dstate * seqlen;
	std::mt19937 rng(seed);
	std::normal_distribution<float> nrm(0.0f, 1.0f);
	std::uniform_real_distribution<float> uni(0.0f, 1.0f);
	std::vector<half> u(n1), dl(n1), z(n1), B(nbc), C(nbc), y(n1, (half)NAN);
	std::vector<float> A((long)dim * dstate), D(dim), db(dim);
	for (auto &v : u) v = (half)nrm(rng);
	for (auto &v : dl) v = (half)nrm(rng);
	for (auto &v : z) v = (half)nrm(rng);
	for (auto &v : A) v = -std::exp(nrm(rng) + (float)amean);
	for (auto &v : B) v = (half)nrm(rng);
	for (auto &v : C) v = (half)nrm(rng);
	for (auto &v : D) v = 0.5f + uni(rng);
	for (auto &v : db) v = std::isnan(bias) ? -4.0f + 3.0f * uni(rng) : (float)bias;
	ks_launch<batch, dim, seqlen, dstate>(u.data(), dl.data(), A.data(), B.data(), C.data(),
					      D.data(), z.data(), db.data(), y.data());
	long bad = 0;
	double worst = 0.0;
	for (long bd = 0; bd < (long)batch * dim; bd++) {
		const long b = bd / dim, d = bd %% dim;
		std::vector<double> h(dstate, 0.0);
		for (long t = 0; t < seqlen; t++) {
			const double x = (double)dl[bd * seqlen + t] + db[d];
			const double dt = x > 20.0 ? x : std::log1p(std::exp(x)), ut = (double)u[bd * seqlen + t];
			double acc = 0.0;
			for (int n = 0; n < dstate; n++) {
				const long o = (b * dstate + n) * seqlen + t;
				h[n] = std::exp(dt * A[d * dstate + n]) * h[n] + dt * ut * (double)B[o];
				acc += (double)C[o] * h[n];
			}
			const double zt = (double)z[bd * seqlen + t];
			const double ref = (acc + D[d] * ut) * zt / (1.0 + std::exp(-zt));
			const double got = (double)y[bd * seqlen + t], err = std::fabs(got - ref);
			if (!(err <= 3e-3 + 2e-2 * std::fabs(ref)))
				bad++;
			if (!(err <= worst))
				worst = err;
		}
	}
	printf("%%-16s b%%d d%%d L%%d n%%d: %%s (largest |error| %%.3g, %%ld outside the tolerance)\n",
	       name, batch, dim, seqlen, dstate, bad ? "FAIL" : "ok", worst, bad);
	return bad != 0;
}

int main()
{
	int bad = 0;
%(calls)s
	return bad;
}
"""


def split_template(text):
    header = re.search(r"//\s*@mlx header\n(.*?)//\s*@mlx body\n", text, re.S)
    body = re.search(r"//\s*@mlx body\n(.*)$", text, re.S)
    return (header.group(1) if header else ""), body.group(1)


def knob_defaults(text):
    return dict(re.findall(r"^\s+(\w+):\s*\{values:\s*\[[^]]*\],\s*default:\s*(\w+)", text, re.M))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--template", default=TEMPLATE)
    ap.add_argument("--define", action="append", default=[], help="K=V,K=V: one knob setting")
    ap.add_argument("--shapes", choices=["checks", "all"], default="checks")
    a = ap.parse_args()
    text = open(a.template).read()
    header, body = split_template(text)
    shapes = CHECKS + (WORKLOADS if a.shapes == "all" else [])
    settings = a.define or [""]
    failed = 0
    for setting in settings:
        knobs = knob_defaults(text)
        knobs.update(kv.split("=", 1) for kv in setting.split(",") if kv)
        calls = "\n".join(
            '\tbad |= ks_check<%d, %d, %d, %d>("%s", %s, %r, %d);' %
            (b, d, l, n, name, "NAN" if bias is None else repr(bias), amean, 1000 + i)
            for i, (name, b, d, l, n, bias, amean) in enumerate(shapes))
        src = SHIM + "".join("constexpr int %s = %s;\n" % kv for kv in knobs.items())
        src += header + KERNEL % {"body": body, "calls": calls}
        label = ",".join("%s=%s" % kv for kv in knobs.items())
        with tempfile.TemporaryDirectory() as tmp:
            cc, exe = os.path.join(tmp, "scan.cc"), os.path.join(tmp, "scan")
            open(cc, "w").write(src)
            r = subprocess.run(["g++", "-std=c++20", "-O2", "-w", "-o", exe, cc],
                               capture_output=True, text=True)
            if r.returncode:
                print("%s: the body does not compile in the shim:\n%s" % (label, r.stderr[-3000:]))
                failed = 1
                continue
            r = subprocess.run([exe], capture_output=True, text=True)
            for line in r.stdout.splitlines():
                print("%s  %s" % (label, line))
            if r.returncode:
                failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
