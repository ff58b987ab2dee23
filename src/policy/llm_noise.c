/* How far the measurements can be trusted, told to the model: the machine's load while
 * kernels were timed, the spreads of the timings, and which differences between two
 * kernels lie beyond the spreads (ks_run_faster_beyond_noise, the rule of `ksearch
 * compare` and of the per-workload picks; the final phase ranks by its own rule,
 * src/run/final_pick.c, and the prompt says so), so the model does not reason from noise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksearch/report.h"
#include "policy/llm_impl.h"
#include "policy/llm_text.h"

int ks_llm_compare(const struct ks_llm_times *a, const struct ks_llm_times *b, int *verdict)
{
	int common = 0;
	for (int i = 0; i < a->n; i++) {
		const struct ks_llm_time *x = &a->t[i], *y = NULL;
		for (int k = 0; k < b->n && !y; k++)
			if (b->t[k].wl == x->wl)
				y = &b->t[k];
		verdict[i] = !y ? 2
			     : ks_run_faster_beyond_noise(x->us, x->spread, y->us, y->spread)  ? 1
			     : ks_run_faster_beyond_noise(y->us, y->spread, x->us, x->spread) ? -1
												  : 0;
		common += y != NULL;
	}
	return common;
}

/* the labels of a's workloads whose verdict is v, comma-separated */
static void verdict_group(const struct ks_llm_times *a, const int *verdict, int v,
			  struct ks_buf *out)
{
	for (int i = 0, n = 0; i < a->n; i++)
		if (verdict[i] == v)
			ks_buf_addf(out, "%s%s", n++ ? ", " : "", a->t[i].label);
}

/* one group of a's workloads: "faster than B beyond the spreads on A1, A2", ... */
static void versus_group(const struct ks_llm_times *a, const int *verdict, int g, int all,
			 const char *bname, struct ks_buf *out)
{
	if (g == 0)
		ks_buf_adds(out, "no measured difference (inside the spreads) on ");
	else
		ks_buf_addf(out, "%s than %s beyond the spreads on ", g > 0 ? "faster" : "slower",
			    bname);
	if (all)
		ks_buf_adds(out, "every timed workload");
	else
		verdict_group(a, verdict, g, out);
}

void ks_llm_compare_text(const struct ks_llm_times *a, const char *aname,
			 const struct ks_llm_times *b, const char *bname, struct ks_buf *out)
{
	int v[KS_LLM_TIMES_MAX];
	int common = ks_llm_compare(a, b, v), count[3] = {0, 0, 0};
	if (!common) {
		ks_buf_addf(out, "%s and %s have no timed workload in common", aname, bname);
		return;
	}
	for (int i = 0; i < a->n; i++)
		if (v[i] != 2)
			count[v[i] + 1]++;
	if (count[1] == common) {
		ks_buf_addf(out, "no measured difference between %s and %s: inside the spreads on "
				 "every timed workload",
			    aname, bname);
		return;
	}
	/* faster, then slower, then the rest: a group beyond the spreads comes first, so the
	 * sentence reads "A is faster/slower than B ..." */
	static const int order[] = {1, -1, 0};
	ks_buf_addf(out, "%s is ", aname);
	for (int k = 0, shown = 0; k < 3; k++) {
		int g = order[k];
		if (!count[g + 1])
			continue;
		ks_buf_adds(out, shown++ ? "; " : "");
		versus_group(a, v, g, count[g + 1] == common, bname, out);
	}
}

void ks_llm_noise_text(const struct ks_llm_machine *m, struct ks_buf *out)
{
	int loaded = m->ncpu > 0 && m->load > m->ncpu;
	if (m->ntimed == 0) {
		ks_buf_addf(out, "No kernel has been timed in this run yet; the machine is %s now "
				 "(load average %.1f on %d CPUs).\n",
			    loaded ? "loaded" : "not loaded", m->load, m->ncpu);
	} else {
		ks_buf_addf(out, "The machine was %s while kernels were timed: load average %.1f on %d "
				 "CPUs at the last timing (%.1f to %.1f over the %d kernels timed in "
				 "this run). Timing spreads (interquartile range over the median) "
				 "reach ±%.0f%% (median ±%.0f%%).\n",
			    loaded ? "loaded" : "not loaded", m->load, m->ncpu, m->load_min, m->load_max,
			    m->ntimed, m->spread_max, m->spread_median);
		if (loaded)
			ks_buf_adds(out, "On a loaded machine a kernel's time depends on what else runs "
					 "while it is timed: one reading can be several times off.\n");
	}
	ks_buf_addf(out, "During the search, a kernel is faster than another on a workload only "
			 "when its median time plus half its spread, plus %.0f%%, is still below the "
			 "other's median minus half its spread (the rule of `ksearch compare` and of "
			 "the per-workload picks). A difference inside the spreads is noise, not "
			 "evidence: the attempts and kernels below say which differences are inside "
			 "them. Each verdict weighs one pair on that pair's own times, so verdicts do "
			 "not chain: A can show no measured difference from B, and B none from C, "
			 "while A is faster than C.\n",
		    KS_RUN_COMPARE_MIN_PCT);
	ks_buf_adds(out, "The run's best is not chosen by that rule: at the end, the final phase "
			 "times the top candidates again in alternating rounds and crowns another "
			 "kernel over the search's leader only when its speedup (the geometric mean "
			 "over the workloads) is higher with the whole 95% interval of the gap above "
			 "zero, so a verdict here can be reversed there.\n");
}

/* ---- the run's measurements ---------------------------------------------------------- */

int llm_times(struct lp *L, long id, struct ks_llm_times *t)
{
	struct ks_store_eval *ev = NULL;
	size_t n = 0;
	struct ks_error e = {0};
	t->n = 0;
	if (id < 0 || ks_store_list_evals(L->env.store, id, "search", &ev, &n, &e))
		return 0;
	const struct ks_task *task = L->env.task;
	for (size_t i = 0; i < n && t->n < KS_LLM_TIMES_MAX; i++) {
		const struct ks_store_eval *x = &ev[i];
		if (x->workload < 0 || x->workload >= task->nworkloads || !(x->median_us > 0) ||
		    !x->status || strcmp(x->status, "PASSED"))
			continue;
		struct ks_llm_time *y = &t->t[t->n++];
		struct ks_buf l = KS_BUF_INIT;
		ks_workload_label(task, &task->workloads[x->workload], &l);
		snprintf(y->label, sizeof(y->label), "%s", ks_buf_str(&l));
		ks_buf_release(&l);
		y->wl = x->workload;
		y->us = x->median_us;
		y->spread = isfinite(x->spread_pct) ? x->spread_pct : 0;
	}
	ks_store_free(ev);
	return t->n;
}

/* the load average now and the CPUs online */
static void load_now(double *load, int *ncpu)
{
	double l[1];
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	*load = getloadavg(l, 1) == 1 ? l[0] : 0;
	*ncpu = n > 0 ? (int)n : 1;
}

void llm_noise_observe(struct lp *L, long id)
{
	struct ks_llm_times t;
	double load;
	int ncpu;
	load_now(&load, &ncpu);
	if (!llm_times(L, id, &t))
		return;
	double *v = realloc(L->spreads, (size_t)(L->nspreads + t.n) * sizeof(double));
	if (!v)
		return;
	L->spreads = v;
	for (int i = 0; i < t.n; i++)
		L->spreads[L->nspreads++] = t.t[i].spread;
	struct ks_llm_machine *m = &L->machine;
	m->load_min = m->ntimed ? fmin(m->load_min, load) : load;
	m->load_max = m->ntimed ? fmax(m->load_max, load) : load;
	m->load = load;
	m->ncpu = ncpu;
	m->ntimed++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void llm_noise_text(struct lp *L, struct ks_buf *out)
{
	struct ks_llm_machine m = L->machine;
	if (!m.ntimed) {
		load_now(&m.load, &m.ncpu);
	} else if (L->nspreads) {
		double *s = malloc((size_t)L->nspreads * sizeof(double));
		if (s) {
			memcpy(s, L->spreads, (size_t)L->nspreads * sizeof(double));
			qsort(s, (size_t)L->nspreads, sizeof(double), cmp_double);
			m.spread_max = s[L->nspreads - 1];
			m.spread_median = s[L->nspreads / 2];
			free(s);
		}
	}
	ks_llm_noise_text(&m, out);
}

void llm_versus(struct lp *L, long id, long other, struct ks_buf *out)
{
	struct ks_llm_times a, b;
	char an[32], bn[32];
	if (id < 0 || other < 0 || !llm_times(L, id, &a) || !llm_times(L, other, &b))
		return;
	snprintf(an, sizeof(an), "candidate %ld", id);
	snprintf(bn, sizeof(bn), "candidate %ld", other);
	ks_llm_compare_text(&a, an, &b, bn, out);
}
