/* ksearch-runner: loads one compiled kernel and runs it on request, inside the sandbox.
 * It speaks the line protocol described in src/eval/runner_proto.h.  Everything the
 * evaluator trusts (comparison against the reference, the final status) happens in the
 * evaluator's process; the runner only generates inputs, calls and times. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/runner_proto.h"
#include "eval/sandbox.h"
#include "eval/stats.h"
#include "ksearch/task.h"
#include "runner/runner.h"
#include "task/input_cache.h"
#include "util/chunks.h"
#include "util/clock.h"
#include "util/os.h"

typedef void (*entry_fn)(void **tensors, const double *params, void *stream);

struct tensor {
	enum ks_dtype dtype;
	size_t numel, bytes, mapped;
	int is_out;           /* an output: its host memory is part of the shared file */
	struct ks_init init;
	uint64_t key;
	void *set[KS_RUNNER_MAX_SETS];    /* host memory */
	void *dev[KS_RUNNER_MAX_SETS];    /* what the kernel sees (host: the same) */
	uint64_t sum[KS_RUNNER_MAX_SETS]; /* checksum of an input set after fill */
};

static struct tensor tensors[KS_RUNNER_MAX_TENSORS];
static int ntensors;
static double params[KS_RUNNER_MAX_PARAMS];
static int nsets;
static unsigned long long set_seed[KS_RUNNER_MAX_SETS]; /* seed each set was filled with */
static int set_filled[KS_RUNNER_MAX_SETS];
static entry_fn entry;
/* The shared output file (KS_RUNNER_FD_OUT), sealed against shrinking and growing by the
 * evaluator: the host memory of the outputs of the first `shared` sets, set s at
 * s * out_stride, each output tensor page-aligned in it (ks_runner_out_layout); later sets'
 * outputs are the runner's own memory (a yardstick's: only set 0 is ever read).  On the
 * host device the kernel writes there itself, so the evaluator reads a timed call's outputs
 * with the runner stopped.  Mapped whole once and kept across workloads: a shared page's
 * first touch costs about four times an anonymous huge page's (measured, 256 MiB: 0.50 s
 * against 0.12 s), so each is touched once per runner. */
static unsigned char *outmap;
static size_t outmap_bytes, out_stride;
static int shared;
static FILE *cmd_in;
static const struct ks_runner_device *dev;
static char call_err[3072];
static char inputs_dir[4096]; /* the input cache, read-only; "" when none */
static uint64_t main_ns;      /* CLOCK_MONOTONIC when main began: the evaluator's spawn
				 to here is exec and the dynamic loader (hello says it) */

static void reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void reply(const char *fmt, ...)
{
	char text[1024], line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	size_t n = ks_runner_line(line, sizeof(line), text);
	for (size_t off = 0; off < n;) {
		ssize_t w = write(KS_RUNNER_FD_REPLY, line + off, n - off);
		if (w <= 0)
			_exit(KS_RUNNER_EXIT_PROTO);
		off += (size_t)w;
	}
}

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	ks_runner_report("violation", "blocked system call %d", ks_sandbox_trapped_syscall(si));
	_exit(KS_RUNNER_EXIT_VIOLATION);
}

/* one chunk's hash of 8-byte words (and the tail bytes of the last chunk) */
static uint64_t checksum_range(const unsigned char *p, size_t bytes)
{
	uint64_t a = 0x9e3779b97f4a7c15ull, b = 0, w;
	size_t n = bytes / 8;
	for (size_t i = 0; i < n; i++) {
		memcpy(&w, p + i * 8, 8);
		a ^= w + (a << 6) + (a >> 2);
		b += w;
	}
	for (size_t i = n * 8; i < bytes; i++)
		b = b * 131 + p[i];
	return a ^ (b * 0xff51afd7ed558ccdull);
}

/* bytes per checksum chunk: fixed, so the value never depends on the thread count */
#define CHECKSUM_CHUNK ((size_t)4 << 20)
/* inputs of more chunks (above 16 GiB) are hashed on one thread */
#define CHECKSUM_MAX_CHUNKS 4096

struct checksum_job {
	const unsigned char *p;
	uint64_t *part;
};

static void checksum_chunk(void *ctx, size_t c, size_t begin, size_t end)
{
	struct checksum_job *j = ctx;
	j->part[c] = checksum_range(j->p + begin, end - begin);
}

/* A hash of an input set, to tell whether a kernel wrote its inputs.  Big inputs (a 256 MB
 * softmax matrix) are hashed on every core in fixed chunks whose hashes are folded in
 * order; any changed byte changes its chunk's hash and so, but for a 2^-64 collision, the
 * result. */
static uint64_t checksum(const void *p, size_t bytes)
{
	size_t n = ks_chunks_count(bytes, CHECKSUM_CHUNK);
	static uint64_t part[CHECKSUM_MAX_CHUNKS];
	if (n == 1 || n > sizeof(part) / sizeof(part[0]))
		return checksum_range(p, bytes);
	struct checksum_job j = {p, part};
	ks_chunks_run(bytes, CHECKSUM_CHUNK, 0, checksum_chunk, &j);
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t c = 0; c < n; c++)
		h = (h ^ part[c]) * 0x100000001b3ull;
	return h;
}

/* the poison of t as a repeated element of *elem bytes (1, 2 or 4) for a device memset; 0
 * when it is not one (f64: an 8-byte pattern) */
static int poison_pattern(const struct tensor *t, unsigned *elem, uint32_t *pattern)
{
	switch (t->dtype) {
	case KS_DT_F32:
		*elem = 4, *pattern = 0x7fc00001u;
		return 1;
	case KS_DT_F16:
		*elem = 2, *pattern = 0x7e01;
		return 1;
	case KS_DT_BF16:
		*elem = 2, *pattern = 0x7fc1;
		return 1;
	case KS_DT_F64:
		return 0;
	default:
		*elem = 1, *pattern = 0xa5;
		return 1;
	}
}

/* NaN outputs (an unlikely pattern for integers): a kernel that skips an element fails */
static void poison(struct tensor *t, void *p)
{
	unsigned elem;
	uint32_t pattern;
	if (!poison_pattern(t, &elem, &pattern)) { /* f64 */
		uint64_t *w = p, nan = 0x7ff8000000000001ull;
		for (size_t i = 0; i < t->numel; i++)
			w[i] = nan;
	} else if (elem == 4) {
		uint32_t *w = p;
		for (size_t i = 0; i < t->numel; i++)
			w[i] = pattern;
	} else if (elem == 2) {
		uint16_t *w = p;
		for (size_t i = 0; i < t->numel; i++)
			w[i] = (uint16_t)pattern;
	} else {
		memset(p, (int)pattern, t->bytes);
	}
}

/* poison output t of set s where the kernel sees it: on the device when it can (no host
 * pass over the tensor, no upload), else on the host and uploaded */
static int poison_set(struct tensor *t, int s)
{
	unsigned elem;
	uint32_t pattern;
	if (dev->poison && poison_pattern(t, &elem, &pattern) &&
	    dev->poison(t->dev[s], t->bytes / elem, elem, pattern) == 0)
		return 0;
	poison(t, t->set[s]);
	return dev->upload(t->dev[s], t->set[s], t->bytes);
}

static int cmd_tensor(char *args)
{
	int i, is_out, kind;
	char dt[16];
	size_t numel;
	double a, b;
	unsigned long long key;
	if (sscanf(args, "%d %15s %zu %d %d %lf %lf %llu", &i, dt, &numel, &is_out, &kind, &a, &b,
		   &key) != 8 ||
	    i < 0 || i >= KS_RUNNER_MAX_TENSORS || i != ntensors) {
		reply("error bad tensor line");
		return -1;
	}
	struct tensor *t = &tensors[i];
	memset(t, 0, sizeof(*t));
	if (ks_dtype_parse(dt, &t->dtype)) {
		reply("error unknown dtype '%s'", dt);
		return -1;
	}
	t->numel = numel;
	t->bytes = numel * ks_dtype_size(t->dtype);
	t->is_out = is_out;
	t->init.kind = (enum ks_init_kind)kind;
	t->init.a = a;
	t->init.b = b;
	t->key = key;
	ntensors++;
	reply("ok");
	return 0;
}

#define HUGE_MIN ((size_t)4 << 20) /* sets this large get MADV_HUGEPAGE */

/* the shared output file mapped (once, whole) and the outputs of its first `shared` sets
 * placed in it; 0 or -1 after a reply */
static int map_outputs(int nshared)
{
	size_t sizes[KS_RUNNER_MAX_TENSORS], offs[KS_RUNNER_MAX_TENSORS];
	int outs[KS_RUNNER_MAX_TENSORS];
	for (int i = 0; i < ntensors; i++) {
		sizes[i] = tensors[i].bytes;
		outs[i] = tensors[i].is_out;
	}
	out_stride = ks_runner_out_layout(sizes, outs, ntensors, (size_t)sysconf(_SC_PAGESIZE), offs);
	shared = nshared;
	struct stat st;
	if (!outmap && !fstat(KS_RUNNER_FD_OUT, &st) && st.st_size > 0) {
		outmap_bytes = (size_t)st.st_size;
		outmap = mmap(NULL, outmap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			      KS_RUNNER_FD_OUT, 0);
		if (outmap == MAP_FAILED) {
			outmap = NULL;
			reply("error cannot map the output file: %s", strerror(errno));
			return -1;
		}
	}
	if (outmap_bytes < out_stride * (size_t)nshared) {
		reply("error the output file holds %zu bytes, %d sets of outputs need %zu",
		      outmap_bytes, nshared, out_stride * (size_t)nshared);
		return -1;
	}
	for (int i = 0; i < ntensors; i++)
		for (int s = 0; tensors[i].is_out && s < nshared; s++)
			tensors[i].set[s] = outmap + out_stride * (size_t)s + offs[i];
	return 0;
}

/* 1 when tensor t's set s lives in the shared output file */
static int in_file(const struct tensor *t, int s)
{
	return t->is_out && s < shared;
}

/* host memory of tensor t's set s: its place in the shared file (map_outputs), or a
 * mapping of its own; NULL after a reply */
static void *host_set(struct tensor *t, int i, int s)
{
	if (in_file(t, s))
		return t->set[s];
	void *p = mmap(NULL, t->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		reply("error cannot map %zu bytes for tensor %d: %s", t->mapped, i, strerror(errno));
		return NULL;
	}
	return p;
}

/* sets rotating sets, the outputs of the first nshared in the shared output file */
static int cmd_alloc(int sets, int nshared)
{
	if (sets < 1 || sets > KS_RUNNER_MAX_SETS || nsets || nshared < 1 || nshared > sets) {
		reply("error bad set count");
		return -1;
	}
	size_t total = 0;
	uint64_t host_ns = 0, dev_ns = 0, t0 = ks_clock_ns();
	long page = sysconf(_SC_PAGESIZE);
	if (map_outputs(nshared))
		return -1;
	host_ns += ks_clock_ns() - t0;
	int direct = 1; /* the kernel writes the shared file itself (host device) */
	for (int i = 0; i < ntensors; i++) {
		struct tensor *t = &tensors[i];
		t->mapped = (t->bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
		if (!t->mapped)
			t->mapped = (size_t)page;
		for (int s = 0; s < sets; s++) {
			t0 = ks_clock_ns();
			void *p = host_set(t, i, s);
			if (!p)
				return -1;
			/* large sets in 2 MB pages where the kernel's transparent huge pages allow
			 * it (a hint; refused quietly elsewhere): 512 times fewer page faults when
			 * they are first written.  Measured on the H200 before this: mapping and
			 * touching the host sets was 1.58 s of a cuda runner's 1.89 s start on
			 * softmax (2.2 GB of sets). */
			if (t->mapped >= HUGE_MIN && !in_file(t, s))
				ks_os_hugepages(p, t->mapped);
			t->set[s] = p;
			host_ns += ks_clock_ns() - t0;
			t0 = ks_clock_ns();
			t->dev[s] = dev->alloc_tensor ? dev->alloc_tensor(i, s, p, t->mapped)
						      : dev->alloc(p, t->mapped);
			dev_ns += ks_clock_ns() - t0;
			if (!t->dev[s]) {
				reply("error cannot allocate %zu bytes on the %s device", t->mapped,
				      dev->name);
				return -1;
			}
			/* a kernel that runs on these pages (the host device: dev == set) must take
			 * no first-touch fault inside a timed call: its outputs are poisoned now
			 * (timed calls rotate over sets no warm-up call has written), its inputs are
			 * written by the fill every set gets before its first call.  A device with
			 * its own memory only stages through them, outside any timed call (fills
			 * write them, downloads land in them, outputs are poisoned before every
			 * call by poison_set), so they are left for those writes to fault in */
			if (t->dev[s] == p && t->is_out) {
				t0 = ks_clock_ns();
				poison(t, p);
				host_ns += ks_clock_ns() - t0;
			}
			if (in_file(t, s) && t->dev[s] != p)
				direct = 0;
			total += t->mapped;
		}
	}
	nsets = sets;
	reply("ok %zu %llu %llu %zu %d", total, (unsigned long long)host_ns,
	      (unsigned long long)dev_ns, out_stride, direct);
	return 0;
}

/* Forget the workload (tensors, params, sets, outputs) so the next one can be set up in
 * this process: the kernel stays loaded and the device initialised. */
static int cmd_reset(void)
{
	if (!dev->release) {
		reply("error the %s device cannot reset", dev->name);
		return -1;
	}
	uint64_t t0 = ks_clock_ns();
	for (int i = 0; i < ntensors; i++) {
		struct tensor *t = &tensors[i];
		for (int s = 0; s < nsets; s++) {
			if (t->dev[s] && t->dev[s] != t->set[s])
				dev->release(t->dev[s], t->mapped);
			if (t->set[s] && !in_file(t, s)) /* those stay mapped for the next */
				munmap(t->set[s], t->mapped);
		}
		memset(t, 0, sizeof(*t));
	}
	out_stride = 0;
	ntensors = nsets = shared = 0;
	memset(set_filled, 0, sizeof(set_filled));
	memset(set_seed, 0, sizeof(set_seed));
	reply("ok %llu", (unsigned long long)(ks_clock_ns() - t0));
	return 0;
}

/* t's inputs of seed into dst from the input cache when it has them: 1, else 0 */
static int fill_cached(const struct tensor *t, void *dst, unsigned long long seed)
{
	if (!inputs_dir[0] || t->bytes < KS_INPUT_CACHE_MIN_BYTES)
		return 0;
	char name[KS_INPUT_CACHE_NAME];
	ks_input_cache_name(t->dtype, t->numel, &t->init, t->key, seed, name);
	return ks_input_cache_read(inputs_dir, name, dst, t->bytes) == 0;
}

static int cmd_fill(int s, unsigned long long seed)
{
	if (s < 0 || s >= nsets) {
		reply("error bad set");
		return -1;
	}
	/* a set with the same seed already holds these inputs: copying is much cheaper than
	 * generating again (timing rotates over many sets of a few seeds) */
	int same = -1;
	for (int o = 0; o < nsets && same < 0; o++)
		if (o != s && set_filled[o] && set_seed[o] == seed)
			same = o;
	set_filled[s] = 0;
	/* where the fill's time goes, for the evaluator's breakdown (issue 12) */
	uint64_t gen_ns = 0, up_ns = 0, sum_ns = 0, t0;
	unsigned long long cached = 0;
	for (int i = 0; i < ntensors; i++) {
		struct tensor *t = &tensors[i];
		if (t->is_out)
			continue;
		if (dev->protect_inputs)
			mprotect(t->set[s], t->mapped, PROT_READ | PROT_WRITE);
		t0 = ks_clock_ns();
		int copy = same >= 0 && t->sum[same] == checksum(t->set[same], t->bytes);
		sum_ns += ks_clock_ns() - t0;
		t0 = ks_clock_ns();
		if (copy)
			memcpy(t->set[s], t->set[same], t->bytes);
		else if (fill_cached(t, t->set[s], seed))
			cached += t->bytes;
		else
			ks_init_fill_parallel(&t->init, t->dtype, t->set[s], t->numel, t->key, seed);
		gen_ns += ks_clock_ns() - t0;
		t0 = ks_clock_ns();
		t->sum[s] = checksum(t->set[s], t->bytes);
		sum_ns += ks_clock_ns() - t0;
		t0 = ks_clock_ns();
		if (dev->upload(t->dev[s], t->set[s], t->bytes)) {
			reply("error upload to the %s device failed", dev->name);
			return -1;
		}
		up_ns += ks_clock_ns() - t0;
		/* inputs are read-only from here on: a kernel that writes them faults */
		if (dev->protect_inputs)
			mprotect(t->set[s], t->mapped, PROT_READ);
	}
	set_seed[s] = seed;
	set_filled[s] = 1;
	reply("ok %llu %llu %llu %llu", (unsigned long long)gen_ns, (unsigned long long)up_ns,
	      (unsigned long long)sum_ns, cached);
	return 0;
}

static void launch(int s, void *stream)
{
	void *args[KS_RUNNER_MAX_TENSORS];
	for (int i = 0; i < ntensors; i++)
		args[i] = tensors[i].dev[s];
	entry(args, params, stream);
}

/* one call; a launch or execution error ends the runner (the context may be broken) */
static uint64_t call_set(int s)
{
	uint64_t ns = 0;
	if (dev->call(launch, s, &ns, call_err, sizeof(call_err))) {
		ks_runner_report("launch_failed", "%s", call_err);
		_exit(KS_RUNNER_EXIT_LAUNCH);
	}
	return ns;
}

/* set s's outputs into its place in the shared file (on the host device they are there);
 * -1 for a set that has none there, or a failed download */
static int snap(int s)
{
	if (s >= shared)
		return -1;
	for (int i = 0; i < ntensors; i++)
		if (tensors[i].is_out && tensors[i].dev[s] != tensors[i].set[s] &&
		    dev->download(tensors[i].set[s], tensors[i].dev[s], tensors[i].bytes))
			return -1;
	return 0;
}

static int cmd_call(int s)
{
	if (s < 0 || s >= nsets || !entry) {
		reply("error bad call");
		return -1;
	}
	/* where the call's time goes, for the evaluator's breakdown (issue 12) */
	uint64_t t0 = ks_clock_ns(), poison_ns, call_ns, down_ns = 0, sum_ns = 0;
	for (int i = 0; i < ntensors; i++)
		if (tensors[i].is_out && poison_set(&tensors[i], s)) {
			reply("error poisoning an output on the %s device failed", dev->name);
			return -1;
		}
	poison_ns = ks_clock_ns() - t0;
	t0 = ks_clock_ns();
	uint64_t ns = call_set(s);
	call_ns = ks_clock_ns() - t0;
	t0 = ks_clock_ns();
	/* at once: work a kernel leaves running in the background is not a result */
	if (s < shared && snap(s)) {
		reply("error download from the %s device failed", dev->name);
		return -1;
	}
	down_ns += ks_clock_ns() - t0;
	/* every input is checked after every correctness call: a kernel that writes one is
	 * caught on the call that did it */
	int intact = 1;
	for (int i = 0; i < ntensors; i++) {
		struct tensor *t = &tensors[i];
		if (t->is_out)
			continue;
		t0 = ks_clock_ns();
		if (!dev->protect_inputs)
			dev->download(t->set[s], t->dev[s], t->bytes);
		down_ns += ks_clock_ns() - t0;
		t0 = ks_clock_ns();
		if (checksum(t->set[s], t->bytes) != t->sum[s])
			intact = 0;
		sum_ns += ks_clock_ns() - t0;
	}
	reply("done %llu %d %llu %llu %llu %llu", (unsigned long long)ns, intact,
	      (unsigned long long)poison_ns, (unsigned long long)call_ns,
	      (unsigned long long)down_ns, (unsigned long long)sum_ns);
	return 0;
}

/* the interval stop: the median of the n samples so far is known to +-ci_rel (95%) */
static int median_known(const uint64_t *t, int n, double ci_rel)
{
	static double d[KS_RUNNER_MAX_REPS];
	for (int i = 0; i < n; i++)
		d[i] = (double)t[i];
	return ks_stats_median_rel_ci(d, (size_t)n) <= ci_rel;
}

/* span_from: when the command was read; the reply's span runs from there to the reply */
static int cmd_time(int warmup, int min_reps, uint64_t min_ns, int max_reps, uint64_t max_ns,
		    double ci_rel, int ci_min_reps, uint64_t span_from)
{
	if (!entry || nsets < 1 || max_reps < 1 || max_reps > KS_RUNNER_MAX_REPS) {
		reply("error bad time request");
		return -1;
	}
	static uint64_t t[KS_RUNNER_MAX_REPS];
	uint64_t w0 = ks_clock_ns();
	for (int i = 0; i < warmup; i++)
		call_set(i % nsets);
	/* block = wall time of the calls themselves (not of cache flushes between them);
	 * t[i] = the device's own measure of call i */
	uint64_t warm = ks_clock_ns() - w0, block = 0, total = 0;
	/* the involuntary context switches of the timed calls (-1: not counted here), taken
	 * around each call: what a flush between calls suffers is not the figure's */
	long long preempted = ks_os_preemptions();
	int counted = preempted >= 0;
	preempted = 0;
	/* a device that chains calls reports the time of one: so is the block */
	uint64_t chain = dev->chain && dev->chain() > 1 ? (uint64_t)dev->chain() : 1;
	int n = 0;
	/* until the count floor and the time floor are met; with an interval target, the time
	 * floor also ends once ci_min_reps samples put the median within +-ci_rel (checked
	 * every 8 reps, between calls: outside what the block measures) */
	int ci_floor = ci_min_reps > min_reps ? ci_min_reps : min_reps;
	while (n < max_reps && (n < min_reps || total < min_ns) && total < max_ns) {
		if (ci_rel > 0 && n >= ci_floor && n % 8 == 0 && median_known(t, n, ci_rel))
			break;
		int s = n % nsets;
		if (dev->between_reps)
			dev->between_reps();
		long long p0 = counted ? ks_os_preemptions() : 0;
		uint64_t a = ks_clock_ns();
		t[n] = call_set(s);
		block += (ks_clock_ns() - a) / chain;
		preempted += counted ? ks_os_preemptions() - p0 : 0;
		total += t[n++];
	}
	/* one long line: "times n warm block span t0 t1 ... preempted", the count last: an
	 * evaluator that does not know it reads the n samples and stops there */
	char *line = malloc((size_t)n * 24 + 160);
	if (!line) {
		reply("error out of memory");
		return -1;
	}
	int len = sprintf(line, "times %d %llu %llu %020d", n, (unsigned long long)warm,
			  (unsigned long long)block, 0);
	int span_at = len - 20; /* filled in last, as close to the write as it gets */
	for (int i = 0; i < n; i++)
		len += sprintf(line + len, " %llu", (unsigned long long)t[i]);
	len += sprintf(line + len, " %lld", counted ? preempted : -1LL);
	char span[24];
	snprintf(span, sizeof(span), "%020llu", (unsigned long long)(ks_clock_ns() - span_from));
	memcpy(line + span_at, span, 20);
	line[len++] = '\n';
	for (int off = 0; off < len;) {
		ssize_t w = write(KS_RUNNER_FD_REPLY, line + off, (size_t)(len - off));
		if (w <= 0)
			_exit(KS_RUNNER_EXIT_PROTO);
		off += (int)w;
	}
	free(line);
	return 0;
}

static int cmd_sandbox(char *args)
{
	char scratch[4096];
	if (sscanf(args, "%4095s", scratch) != 1) {
		reply("error bad sandbox line");
		return -1;
	}
	snprintf(ks_runner_scratch, sizeof(ks_runner_scratch), "%s", scratch);
	if (chdir(scratch)) {
		reply("error chdir '%s': %s", scratch, strerror(errno));
		return -1;
	}
	reply("ok");
	return 0;
}

static int cmd_load(char *path)
{
	char why[1024];
	uint64_t t0 = ks_clock_ns(), sandbox_ns, load_ns;
	/* enter the sandbox before dlopen: the kernel's constructors run inside it */
	if (ks_runner_scratch[0]) {
		if (ks_sandbox_enter(ks_runner_scratch, path, inputs_dir[0] ? inputs_dir : NULL,
				     dev->sandbox, ks_runner_open_check, why, sizeof(why))) {
			reply("error sandbox: %s", why);
			return -1;
		}
		ks_runner_watch = 1;
	}
	sandbox_ns = ks_clock_ns() - t0;
	t0 = ks_clock_ns();
	if (dev->load) {
		if (dev->load(path, &entry, why, sizeof(why))) {
			reply("error %s", why);
			return -1;
		}
	} else {
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			reply("error dlopen: %s", dlerror());
			return -1;
		}
		entry = (entry_fn)dlsym(h, "ks__entry_v1");
		if (!entry) {
			reply("error the library has no ks__entry_v1 (shim missing)");
			return -1;
		}
	}
	load_ns = ks_clock_ns() - t0;
	t0 = ks_clock_ns();
	if (dev->init(why, sizeof(why))) {
		reply("error %s device: %s", dev->name, why);
		return -1;
	}
	reply("ok %llu %llu %llu", (unsigned long long)sandbox_ns, (unsigned long long)load_ns,
	      (unsigned long long)(ks_clock_ns() - t0));
	return 0;
}

int main(int argc, char **argv)
{
	main_ns = ks_clock_ns();
	if (argc > 1 && !strcmp(argv[1], "--probe")) {
		const struct ks_runner_device *d = ks_runner_device_get();
		if (!d->probe) {
			fprintf(stderr, "ksearch-runner: the %s device has no --probe\n", d->name);
			return 2;
		}
		return d->probe();
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSYS, &sa, NULL);
	dev = ks_runner_device_get();
	cmd_in = fdopen(KS_RUNNER_FD_CMD, "r");
	if (!cmd_in)
		return KS_RUNNER_EXIT_PROTO;
	char line[65536];
	while (fgets(line, sizeof(line), cmd_in)) {
		uint64_t read_ns = ks_clock_ns();
		line[strcspn(line, "\n")] = '\0';
		char *sp = strchr(line, ' ');
		char *args = sp ? sp + 1 : line + strlen(line);
		if (sp)
			*sp = '\0';
		int s, a, b, c;
		unsigned long long x, y;
		if (!strcmp(line, "hello")) {
			reply("ok ksearch-runner %d %llu", KS_RUNNER_PROTO_VERSION,
			      (unsigned long long)main_ns);
		} else if (!strcmp(line, "inputs")) {
			/* only before the sandbox: its file rules are fixed when it is entered */
			if (ks_runner_scratch[0] || !*args ||
			    strlen(args) >= sizeof(inputs_dir))
				reply("error bad inputs line");
			else
				snprintf(inputs_dir, sizeof(inputs_dir), "%s", args), reply("ok");
		} else if (!strcmp(line, "sandbox")) {
			cmd_sandbox(args);
		} else if (!strcmp(line, "load")) {
			cmd_load(args);
		} else if (!strcmp(line, "tensor")) {
			cmd_tensor(args);
		} else if (!strcmp(line, "params")) {
			char *p = args, *end;
			long n = strtol(p, &end, 10);
			if (n < 0 || n > KS_RUNNER_MAX_PARAMS) {
				reply("error bad params");
				continue;
			}
			for (long i = 0; i < n; i++) {
				p = end;
				params[i] = strtod(p, &end);
			}
			char why[1024];
			if (dev->set_params && dev->set_params(params, (int)n, why, sizeof(why)))
				reply("error %s", why);
			else
				reply("ok");
		} else if (!strcmp(line, "alloc") && sscanf(args, "%d", &s) == 1) {
			int nshared = s;
			sscanf(args, "%*d %d", &nshared);
			cmd_alloc(s, nshared);
		} else if (!strcmp(line, "fill") && sscanf(args, "%d %llu", &s, &x) == 2) {
			cmd_fill(s, x);
		} else if (!strcmp(line, "call") && sscanf(args, "%d", &s) == 1) {
			cmd_call(s);
		} else if (!strcmp(line, "snap") && sscanf(args, "%d", &s) == 1) {
			if (s < 0 || s >= nsets)
				reply("error bad set");
			else if (snap(s))
				reply("error download from the %s device failed", dev->name);
			else
				reply("ok");
		} else if (!strcmp(line, "time") &&
			   sscanf(args, "%d %d %llu %d %llu", &a, &b, &x, &c, &y) == 5) {
			unsigned ci_ppm = 0;
			int ci_min = 0;
			sscanf(args, "%*d %*d %*u %*d %*u %u %d", &ci_ppm, &ci_min);
			cmd_time(a, b, x, c, y, ci_ppm * 1e-6, ci_min, read_ns);
		} else if (!strcmp(line, "reset")) {
			cmd_reset();
		} else if (!strcmp(line, "quit")) {
			break;
		} else {
			reply("error unknown command '%.64s'", line);
		}
	}
	fflush(stdout);
	_exit(0);
}
