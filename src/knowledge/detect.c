/* Host CPU detection for `ksearch spec detect`: /proc/cpuinfo, sysfs caches, core count,
 * and a bounded (about 1.5 s) measurement of copy bandwidth and FMA throughput. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "knowledge/spec_schema.h"
#include "ksearch/knowledge.h"
#include "ksearch/log.h"
#include "util/clock.h"


static const char *src_proc = "Linux /proc/cpuinfo, /proc/meminfo and sysconf";
static const char *src_sysfs = "Linux sysfs /sys/devices/system/cpu";
static const char *src_bench = "ksearch spec detect micro-benchmark";

/* value of "key : value" in /proc/cpuinfo (first processor) */
static int cpuinfo_get(const char *key, char *out, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return -1;
	char line[4096];
	int rc = -1;
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) || (line[kl] != ' ' && line[kl] != '\t' && line[kl] != ':'))
			continue;
		char *c = strchr(line, ':');
		if (!c)
			continue;
		c++;
		while (*c == ' ' || *c == '\t')
			c++;
		c[strcspn(c, "\n")] = 0;
		snprintf(out, n, "%s", c);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

static int has_flag(const char *flags, const char *flag)
{
	size_t n = strlen(flag);
	for (const char *p = flags; (p = strstr(p, flag)); p += n)
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return 1;
	return 0;
}

static double read_cache_size(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NAN;
	char buf[64] = {0};
	double v = NAN;
	if (fgets(buf, sizeof(buf), f)) {
		char *end;
		v = strtod(buf, &end);
		if (*end == 'K')
			v *= 1024;
		else if (*end == 'M')
			v *= 1048576.0;
		else if (*end == 'G')
			v *= 1073741824.0;
	}
	fclose(f);
	return v;
}

static void read_caches(double *l1d, double *l2, double *l3)
{
	*l1d = *l2 = *l3 = NAN;
	for (int i = 0; i < 8; i++) {
		char p[256], lvl[16] = {0}, type[32] = {0};
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		FILE *f = fopen(p, "r");
		if (!f)
			break;
		if (!fgets(lvl, sizeof(lvl), f))
			lvl[0] = 0;
		fclose(f);
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		if ((f = fopen(p, "r"))) {
			if (!fgets(type, sizeof(type), f))
				type[0] = 0;
			fclose(f);
		}
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		double sz = read_cache_size(p);
		int level = atoi(lvl);
		if (level == 1 && !strncmp(type, "Data", 4))
			*l1d = sz;
		else if (level == 2)
			*l2 = sz;
		else if (level == 3)
			*l3 = sz;
	}
}

/* ---- micro-benchmarks ------------------------------------------------------------------ */

/* The FMA peak.  Each accumulator must stay in a register: an array of vectors wider than
 * the ISA (the old 16-float vectors on AVX2) was split and kept on the stack, and the
 * "peak" measured the store-forwarding latency, a tenth of what a real GEMM reaches.  So
 * one function per ISA on its native width, twelve named accumulators (more than FMA
 * latency x FMA ports on current cores), and a multiply-add the compiler contracts. */
#define FMA_ACC 12

#define FMA_BODY(V, LANES)                                                                   \
	V m, a, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11;                                \
	for (int j = 0; j < (LANES); j++) {                                                      \
		m[j] = 0.999999f;                                                                \
		a[j] = 1e-7f * seed;                                                             \
	}                                                                                        \
	/* distinct starting values, or the compiler merges identical chains into one */       \
	c0 = a + seed, c1 = a + seed + 1, c2 = a + seed + 2, c3 = a + seed + 3;                  \
	c4 = a + seed + 4, c5 = a + seed + 5, c6 = a + seed + 6, c7 = a + seed + 7;              \
	c8 = a + seed + 8, c9 = a + seed + 9, c10 = a + seed + 10, c11 = a + seed + 11;          \
	for (long it = 0; it < iters; it++) {                                                    \
		c0 = c0 * m + a;                                                                 \
		c1 = c1 * m + a;                                                                 \
		c2 = c2 * m + a;                                                                 \
		c3 = c3 * m + a;                                                                 \
		c4 = c4 * m + a;                                                                 \
		c5 = c5 * m + a;                                                                 \
		c6 = c6 * m + a;                                                                 \
		c7 = c7 * m + a;                                                                 \
		c8 = c8 * m + a;                                                                 \
		c9 = c9 * m + a;                                                                 \
		c10 = c10 * m + a;                                                               \
		c11 = c11 * m + a;                                                               \
	}                                                                                        \
	V t = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11;                      \
	float s = 0;                                                                             \
	for (int j = 0; j < (LANES); j++)                                                        \
		s += t[j];                                                                       \
	return s;

typedef float ks_v4f __attribute__((vector_size(16)));

__attribute__((optimize("fp-contract=fast"))) static float fma_loop_4(long iters, float seed)
{
	FMA_BODY(ks_v4f, 4)
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
typedef float ks_v8f __attribute__((vector_size(32)));
typedef float ks_v16f __attribute__((vector_size(64)));

__attribute__((target("avx2,fma"), optimize("fp-contract=fast"))) static float
fma_loop_8(long iters, float seed)
{
	FMA_BODY(ks_v8f, 8)
}

__attribute__((target("avx512f"), optimize("fp-contract=fast"))) static float
fma_loop_16(long iters, float seed)
{
	FMA_BODY(ks_v16f, 16)
}

/* the widest the CPU runs; lanes per vector in *lanes */
static float (*fma_pick(int *lanes))(long, float)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		*lanes = 16;
		return fma_loop_16;
	}
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		*lanes = 8;
		return fma_loop_8;
	}
	*lanes = 4;
	return fma_loop_4;
}
#else
static float (*fma_pick(int *lanes))(long, float)
{
	*lanes = 4;
	return fma_loop_4;
}
#endif

/* How busy the machine is while a probe runs.  The 1-minute load average trails by a
 * minute; what lowers a figure is other work during the probe, so the runnable count of
 * /proc/loadavg is sampled between bursts, when only the sampling thread of the probe runs. */
struct load_probe {
	double sum;  /* runnable tasks besides the probe, summed over samples */
	int n;
	double avg1; /* the 1-minute load average at the first sample */
};

static void load_sample(struct load_probe *lp)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double a1;
	int running, total;
	if (f && fscanf(f, "%lf %*f %*f %d/%d", &a1, &running, &total) == 3) {
		if (!lp->n)
			lp->avg1 = a1;
		lp->sum += running > 1 ? running - 1 : 0;
		lp->n++;
	} else if (!lp->n && getloadavg(&a1, 1) == 1) {
		lp->avg1 = a1; /* no runnable count here: the average stands for the load */
	}
	if (f)
		fclose(f);
}

/* the provenance of a figure measured by probe on cores CPUs, load sampled in lp */
static void load_measure(const struct load_probe *lp, const char *probe, int cores, double at,
			 struct ks_spec_measure *m)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->probe, sizeof(m->probe), "%s", probe);
	m->at = at;
	m->loadavg = lp->avg1;
	m->load = lp->n ? lp->sum / lp->n : lp->avg1;
	m->cores = cores;
}

struct bench_job {
	long iters;
	float (*fma)(long, float);
	double cpu_s; /* thread CPU time of the FMA burst */
	char *src, *dst;
	size_t bytes;
	int reps;
	float sink;
};

static void *fma_thread(void *arg)
{
	struct bench_job *j = arg;
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	j->sink = j->fma(j->iters, 1.0f + (float)(j->iters & 7));
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	j->cpu_s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	return NULL;
}

static void *copy_thread(void *arg)
{
	struct bench_job *j = arg;
	for (int r = 0; r < j->reps; r++)
		memcpy(j->dst, j->src, j->bytes);
	return NULL;
}

static void *touch_thread(void *arg)
{
	struct bench_job *j = arg;
	memset(j->src, 1, j->bytes);
	memset(j->dst, 0, j->bytes);
	return NULL;
}

/* run fn on nt threads; returns wall seconds or -1 */
static double run_threads(int nt, struct bench_job *jobs, void *(*fn)(void *))
{
	pthread_t th[256];
	double t0 = ks_clock_s();
	int started = 0;
	for (int i = 1; i < nt; i++) {
		if (pthread_create(&th[i], NULL, fn, &jobs[i]))
			break;
		started = i;
	}
	fn(&jobs[0]);
	for (int i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	return started == nt - 1 ? ks_clock_s() - t0 : -1;
}

/* Short bursts on every thread at once, each rated by its own thread CPU time: on a loaded
 * machine the wall clock counts the time other processes held the core, and a peak taken
 * from it came out below what a GEMM reaches in a quiet moment.  The best burst wins. */
static double measure_fma(int nt, int *lanes_out, struct load_probe *lp)
{
	struct bench_job jobs[256];
	memset(jobs, 0, sizeof(jobs));
	int lanes;
	float (*fma)(long, float) = fma_pick(&lanes);
	*lanes_out = lanes;
	/* calibrate on one thread, then bursts of ~40 ms */
	long iters = 20000;
	double t;
	for (;;) {
		double t0 = ks_clock_s();
		volatile float s = fma(iters, 1.0f);
		(void)s;
		t = ks_clock_s() - t0;
		if (t > 0.01 || iters > (1L << 34))
			break;
		iters *= 4;
	}
	iters = (long)((double)iters * 0.04 / (t > 1e-6 ? t : 1e-6));
	if (iters < 1000)
		iters = 1000;
	for (int i = 0; i < nt; i++) {
		jobs[i].iters = iters;
		jobs[i].fma = fma;
	}
	double best = 0, spent = 0;
	for (int rep = 0; rep < 40 && spent < 0.6; rep++) {
		load_sample(lp);
		double wall = run_threads(nt, jobs, fma_thread);
		if (wall <= 0)
			break;
		spent += wall;
		double gf = 0;
		for (int i = 0; i < nt; i++)
			gf += jobs[i].cpu_s > 0 ? 2.0 * lanes * FMA_ACC * (double)iters / jobs[i].cpu_s / 1e9
						: 0;
		if (gf > best)
			best = gf;
	}
	return best > 0 ? best : NAN;
}

static double measure_copy(int nt, double llc, struct load_probe *lp)
{
	size_t total = 64u << 20;
	if (isfinite(llc) && llc * 4 > (double)total)
		total = (size_t)(llc * 4);
	if (total > (256u << 20))
		total = 256u << 20;
	size_t per = total / (size_t)nt / 4096 * 4096;
	if (per < 4096)
		return NAN;
	char *src = aligned_alloc(4096, per * (size_t)nt), *dst = aligned_alloc(4096, per * (size_t)nt);
	if (!src || !dst) {
		free(src);
		free(dst);
		return NAN;
	}
	struct bench_job jobs[256];
	memset(jobs, 0, sizeof(jobs));
	for (int i = 0; i < nt; i++) {
		jobs[i].src = src + per * (size_t)i;
		jobs[i].dst = dst + per * (size_t)i;
		jobs[i].bytes = per;
		jobs[i].reps = 1;
	}
	run_threads(nt, jobs, touch_thread); /* first touch on the threads that copy */
	double best = 0, spent = 0;
	for (int rep = 0; rep < 20 && spent < 0.35; rep++) {
		load_sample(lp);
		double t = run_threads(nt, jobs, copy_thread);
		if (t <= 0)
			break;
		spent += t;
		double gbps = 2.0 * (double)per * nt / t / 1e9; /* read + write */
		if (gbps > best)
			best = gbps;
	}
	free(src);
	free(dst);
	return best > 0 ? best : NAN;
}

/* ---- assembly ------------------------------------------------------------------------------ */

static int set_list(struct ks_spec *s, const char *field, char **list, const char *source,
		    const char *basis)
{
	struct ks_buf j = KS_BUF_INIT;
	for (char **p = list; *p; p++)
		ks_buf_addf(&j, "%s%s", p == list ? "" : ", ", *p);
	const struct ks_spec_field_def *d = ks_spec_field_def(field);
	*(char ***)((char *)s + d->off) = list;
	int rc = ks_spec_value_add(s, field, NAN, ks_buf_str(&j), NULL, source, basis, NULL, 0);
	ks_buf_release(&j);
	return rc;
}

/* name, model, caches, memory, cores, clock: what the host says of itself.  *nt: the
 * threads the probes use; *llc: the last-level cache size (NAN when unknown) */
static int detect_static(struct ks_spec *s, const char *flags, int *nt, double *llc)
{
	char model[256] = "unknown CPU", vendor[64] = "", mhz[64] = "";
	cpuinfo_get("model name", model, sizeof(model));
	cpuinfo_get("vendor_id", vendor, sizeof(vendor));
	cpuinfo_get("cpu MHz", mhz, sizeof(mhz));
	struct utsname u;
	if (uname(&u))
		snprintf(u.machine, sizeof(u.machine), "unknown");
	s->name = strdup("host");
	s->title = strdup(model);
	s->kind = strdup("cpu");
	s->vendor = strdup(!strcmp(vendor, "GenuineIntel")   ? "intel"
			   : !strcmp(vendor, "AuthenticAMD") ? "amd"
							     : "generic");
	s->arch = strdup(u.machine);
	if (!s->name || !s->title || !s->kind || !s->vendor || !s->arch)
		return KS_ENOMEM;

	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	*nt = ncpu > 256 ? 256 : (int)ncpu;
	double simd = has_flag(flags, "avx512f") ? 16 : has_flag(flags, "avx2") ? 8 : 4;
	double l1, l2, l3;
	read_caches(&l1, &l2, &l3);
	*llc = isfinite(l3) ? l3 : l2;
	double mem = NAN;
	FILE *f = fopen("/proc/meminfo", "r");
	if (f) {
		char line[256];
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "MemTotal:", 9)) {
				mem = strtod(line + 9, NULL) * 1024;
				break;
			}
		fclose(f);
	}
	double clock = read_cache_size("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
	clock = isfinite(clock) ? clock / 1000 : (mhz[0] ? strtod(mhz, NULL) : NAN);

	int rc = 0;
	rc |= ks_spec_set_number(s, "simd_width", simd, src_proc, "detected",
				 "f32 lanes of the widest vector ISA in the cpu flags");
	rc |= ks_spec_set_number(s, "max_threads_per_group", (double)ncpu, src_proc, "detected",
				 "online logical CPUs (one OpenMP team)");
	if (isfinite(l1))
		rc |= ks_spec_set_number(s, "smem_per_block", l1, src_sysfs, "detected",
					 "no programmer-managed shared memory on a CPU: the L1d "
					 "size, the analogue for cache blocking");
	if (isfinite(l1))
		rc |= ks_spec_set_number(s, "l1_bytes", l1, src_sysfs, "detected", NULL);
	if (isfinite(l2))
		rc |= ks_spec_set_number(s, "l2_bytes", l2, src_sysfs, "detected", "per core");
	if (isfinite(*llc))
		rc |= ks_spec_set_number(s, "llc_bytes", *llc, src_sysfs, "detected", NULL);
	if (isfinite(mem))
		rc |= ks_spec_set_number(s, "mem_bytes", mem, src_proc, "detected", NULL);
	rc |= ks_spec_set_number(s, "cores", (double)ncpu, src_proc, "detected",
				 "online logical CPUs");
	if (isfinite(clock) && clock > 0)
		rc |= ks_spec_set_number(s, "clock_mhz", clock, src_sysfs, "detected", NULL);
	return rc ? KS_ENOMEM : 0;
}

/* the copy bandwidth and FMA rate, each with when and under what load it was measured */
static int detect_measure(struct ks_spec *s, int nt, double llc, struct ks_detect_opts *o,
			  struct ks_error *e)
{
	struct load_probe copy_load = {0}, fma_load = {0};
	double t0 = ks_clock_s(), at = (double)time(NULL);
	double bw = measure_copy(nt, llc, &copy_load);
	int lanes = 0;
	double gf = measure_fma(nt, &lanes, &fma_load);
	ks_debug("spec detect: micro-benchmarks took %.2f s", ks_clock_s() - t0);
	if (!isfinite(bw) || !isfinite(gf))
		return ks_error_set(e, KS_ESYS, "detect host: micro-benchmark failed (threads or "
						"memory unavailable)");
	load_measure(&copy_load, "memcpy", nt, at, &o->bw);
	load_measure(&fma_load, "fma", nt, at, &o->fma);
	o->bw_gbps = bw;
	o->fma_gflops = gf;
	char note[256];
	snprintf(note, sizeof(note), "%d-thread memcpy of %s buffers, read+write bytes, best of "
		 "several repetitions", nt, "LLC-exceeding");
	int rc = ks_spec_set_number(s, "mem_bandwidth_gbps", bw, src_bench, "measured", note);
	snprintf(note, sizeof(note), "%d threads of %d independent FMA chains on %d-float "
		 "vectors (the widest ISA the CPU has), each rated by its thread CPU time, best of 40 ms bursts",
		 nt, FMA_ACC, lanes);
	rc |= ks_spec_set_number(s, "peak_gflops_f32", gf, src_bench, "measured", note);
	if (rc)
		return ks_error_set(e, KS_ENOMEM, "detect host spec");
	for (int i = 0; i < s->nvalues; i++)
		if (!strcmp(s->values[i].name, "mem_bandwidth_gbps"))
			s->values[i].measure = o->bw;
		else if (!strcmp(s->values[i].name, "peak_gflops_f32"))
			s->values[i].measure = o->fma;
	return 0;
}

static int detect_features(struct ks_spec *s, const char *flags)
{
	static const struct {
		const char *flag, *feature;
	} fmap[] = {{"sse4_2", "sse4"}, {"avx2", "avx2"},	     {"fma", "fma"},
		    {"avx512f", "avx512"}, {"avx512_bf16", "avx512_bf16"},
		    {"avx512_fp16", "avx512_fp16"}, {"amx_tile", "amx"}, {"asimd", "neon"},
		    {"sve", "sve"}};
	char **feats = calloc(sizeof(fmap) / sizeof(fmap[0]) + 2, sizeof(char *));
	if (!feats)
		return KS_ENOMEM;
	int nf = 0;
	feats[nf++] = strdup("fp64");
	for (size_t i = 0; i < sizeof(fmap) / sizeof(fmap[0]); i++)
		if (has_flag(flags, fmap[i].flag))
			feats[nf++] = strdup(fmap[i].feature);
	for (int i = 0; i < nf; i++)
		if (!feats[i]) {
			for (int k = 0; k < nf; k++)
				free(feats[k]);
			free(feats);
			return KS_ENOMEM;
		}
	return set_list(s, "features", feats, src_proc, "detected");
}

/* A figure this detection measured under load and that stands (no higher cached one):
 * say so once, with what it means and what to do. */
static void warn_loaded(const struct ks_spec *s, const struct ks_detect_opts *o)
{
	char what[256] = "";
	size_t len = 0;
	static const struct {
		const char *field, *text, *unit;
	} figs[] = {{"mem_bandwidth_gbps", "copy bandwidth", "GB/s"},
		    {"peak_gflops_f32", "FMA rate", "GFLOP/s"}};
	double load = 0;
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		const struct ks_spec_measure *m = ks_spec_measure_of(s, figs[i].field);
		double v;
		if (!m || m->from_cache || !ks_spec_measure_loaded(m) ||
		    ks_spec_field(s, figs[i].field, &v))
			continue;
		load = m->load > load ? m->load : load;
		len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s %.4g %s",
					len ? " and " : "", figs[i].text, v, figs[i].unit);
		if (len >= sizeof(what))
			break;
	}
	if (!what[0])
		return;
	ks_warn("spec detect: the machine was loaded while measuring (load %.1f on %d cores): %s "
		"may be low, so %% of roofline may read high; measure again when the machine is "
		"quiet (uptime's load below %d) with 'ksearch spec detect'%s%s",
		load, o->bw.cores, what, o->bw.cores, o->cache_path[0] ? ", which keeps the best "
		"figure in " : "", o->cache_path);
}

int ks_spec_detect_host_ex(struct ks_spec *s, struct ks_detect_opts *o, struct ks_error *e)
{
	char flags[8192] = "";
	int nt = 1, rc;
	double llc = NAN;
	ks_spec_init(s);
	if (cpuinfo_get("flags", flags, sizeof(flags)))
		cpuinfo_get("Features", flags, sizeof(flags)); /* aarch64 */
	if (detect_static(s, flags, &nt, &llc))
		rc = ks_error_set(e, KS_ENOMEM, "detect host spec");
	else if (!(rc = detect_measure(s, nt, llc, o, e)) && detect_features(s, flags))
		rc = ks_error_set(e, KS_ENOMEM, "detect host spec");
	if (rc) {
		ks_spec_release(s);
		return rc;
	}
	ks_spec_cache_apply(s, o);
	if (o->cache_error[0])
		ks_warn("spec detect: the cached spec '%s': %s", o->cache_path, o->cache_error);
	warn_loaded(s, o);
	return 0;
}

int ks_spec_detect_host(struct ks_spec *s, struct ks_error *e)
{
	struct ks_detect_opts o = {0};
	return ks_spec_detect_host_ex(s, &o, e);
}
