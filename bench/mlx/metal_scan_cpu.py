#!/usr/bin/env python3
"""Run the selective scan's Metal body (tasks/selective_scan/templates/mlx/state_scan.metal.mlx)
on the CPU, as written, against a float64 reference: a check of its logic where no Apple GPU
is at hand.

  python3 bench/mlx/metal_scan_cpu.py [--define ITEMS=4,CPB=2 ...] [--shapes checks|all]

The kernel is bench/mlx/metal_cpu.py's C++ rendering of the file (its shim gives the body
Metal's names and runs each threadgroup's threads as coroutines that meet at SIMD-group
functions and barriers), compiled by g++ with a driver of its own: unlike `ksearch eval
--backend cpu` on metal_cpu.py's output, which runs the checks the task gives the cpu
backend, this one also runs the task's GPU-only checks (a 32k sequence, exp underflow, a
ragged long one).  Each --define is one knob setting (default: the file's defaults); every
setting runs every shape: those checks, dstate 20 (the body's fallback past 16 states) and,
with --shapes all, the b1 d256 L512 workload.  Inputs follow the task's distributions (f16
activations rounded as the task rounds them); a shape passes when every output meets
|y - ref| <= atol + rtol |ref| with the task's atol 3e-3, rtol 2e-2.  Prints a line per
setting and shape and exits 1 when any fails or the body does not compile.

What it does not check: metal_cpu.py's list (Metal's compiler, its rounding, speed).
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metal_cpu  # noqa: E402  (the shim that runs a Metal body on the CPU)

ROOT = metal_cpu.ROOT
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

HARNESS = r"""
#include <random>
#include <vector>

static int ks_check(const char *name, int batch, int dim, int seqlen, int dstate, double bias,
		    double amean, unsigned seed)
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
	selective_scan(u.data(), dl.data(), A.data(), B.data(), C.data(), D.data(), z.data(),
		       db.data(), y.data(), batch, dim, seqlen, dstate);
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--template", default=TEMPLATE)
    ap.add_argument("--define", action="append", default=[], help="K=V,K=V: one knob setting")
    ap.add_argument("--shapes", choices=["checks", "all"], default="checks")
    a = ap.parse_args()
    shapes = CHECKS + (WORKLOADS if a.shapes == "all" else [])
    settings = a.define or [""]
    failed = 0
    for setting in settings:
        knobs, kernel = metal_cpu.source(a.template, "selective_scan", [setting])
        calls = "\n".join(
            '\tbad |= ks_check("%s", %d, %d, %d, %d, %s, %r, %d);' %
            (name, b, d, l, n, "NAN" if bias is None else repr(bias), amean, 1000 + i)
            for i, (name, b, d, l, n, bias, amean) in enumerate(shapes))
        src = kernel + HARNESS % {"calls": calls}
        label = ",".join("%s=%s" % kv for kv in knobs.items())
        with tempfile.TemporaryDirectory() as tmp:
            cc, exe = os.path.join(tmp, "scan.cc"), os.path.join(tmp, "scan")
            open(cc, "w").write(src)
            r = subprocess.run(["g++"] + metal_cpu.CXXFLAGS.split()[2:] + ["-o", exe, cc],
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
