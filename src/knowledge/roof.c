/* The roofs' provenance: which probe measured a spec figure, when and under what load; how
 * it reads as text, YAML and JSON; and what a "% of roofline" above 100 says. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "knowledge/spec_schema.h"
#include "ksearch/knowledge.h"
#include "util/json.h"

const struct ks_spec_measure *ks_spec_measure_of(const struct ks_spec *s, const char *field)
{
	for (int i = 0; s && i < s->nvalues; i++)
		if (!strcmp(s->values[i].name, field))
			return s->values[i].measure.probe[0] ? &s->values[i].measure : NULL;
	return NULL;
}

int ks_spec_measure_loaded(const struct ks_spec_measure *m)
{
	return m && m->probe[0] && m->cores > 0 && m->load > (double)m->cores;
}

/* "2026-12-08T14:03:11Z" */
static void iso_utc(double t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, n, "?");
}

/* "45 s", "12 min", "3.2 h", "4.0 days" */
static void age_text(double s, char *out, size_t n)
{
	if (s < 0)
		s = 0;
	if (s < 90)
		snprintf(out, n, "%.0f s", s);
	else if (s < 5400)
		snprintf(out, n, "%.0f min", s / 60);
	else if (s < 2 * 86400)
		snprintf(out, n, "%.1f h", s / 3600);
	else
		snprintf(out, n, "%.1f days", s / 86400);
}

void ks_spec_measure_text(const struct ks_spec_measure *m, double now, char *out, size_t n)
{
	if (!n)
		return;
	out[0] = 0;
	if (!m || !m->probe[0])
		return;
	char when[32] = "?", age[48] = "";
	time_t tt = (time_t)m->at;
	struct tm tm;
	if (m->at > 0 && gmtime_r(&tt, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
	if (now > 0 && m->at > 0) {
		char a[32];
		age_text(now - m->at, a, sizeof(a));
		snprintf(age, sizeof(age), " (age %s)", a);
	}
	int len = snprintf(out, n, "measured %s%s by the %s probe at load %.1f on %d cores "
			   "(1-minute load average %.1f)",
			   when, age, m->probe, m->load, m->cores, m->loadavg);
	if (len > 0 && (size_t)len < n && m->from_cache)
		len += snprintf(out + len, n - (size_t)len, "; kept from an earlier detection, "
			       "higher than the latest");
	if (len > 0 && (size_t)len < n && ks_spec_measure_loaded(m))
		snprintf(out + len, n - (size_t)len, "; the load was above the core count, so "
			 "the figure may be low");
}

void ks_roof_pct_text(double pct, int prose, char *out, size_t n)
{
	if (!n)
		return;
	if (!(pct > 0) || !isfinite(pct))
		out[0] = 0;
	else if (pct <= 100)
		snprintf(out, n, prose ? "%.0f%% of the roofline" : "%.0f%%", pct);
	else if (!prose)
		snprintf(out, n, "above the roof (%.1fx)", pct / 100);
	else
		snprintf(out, n, "%.1fx the roofline: faster than the roof allows, so the roof is "
			 "an underestimate (measured low, e.g. on a loaded machine) or the data "
			 "stayed in cache", pct / 100);
}

/* ---- in spec files ------------------------------------------------------------------- */

int ks_spec_measure_parse(const struct ks_yaml_doc *y, const struct ks_yaml_node *node,
			  struct ks_spec_measure *m, struct ks_error *e)
{
	static const char *const keys[] = {"at", "probe", "load", "loadavg", "cores", NULL};
	static const char *const need[] = {"at", "probe", "cores", NULL};
	int rc = ks_yaml_expect(y, node, KS_YAML_MAP, "'measured' as {at, probe, load, loadavg, "
				"cores}", e);
	if (rc || (rc = ks_yaml_check_keys(y, node, "'measured'", keys, need, e)))
		return rc;
	const struct ks_yaml_node *at = ks_yaml_get(node, "at"), *probe = ks_yaml_get(node, "probe");
	const struct ks_yaml_node *load = ks_yaml_get(node, "load");
	const struct ks_yaml_node *avg = ks_yaml_get(node, "loadavg");
	const char *t = ks_yaml_scalar(at), *p = ks_yaml_scalar(probe);
	struct tm tm = {0};
	char z = 0;
	if (!t || sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z) != 7 || z != 'Z')
		return ks_yaml_error_in(y, at, e, "'at' must be a UTC time as 2026-12-08T14:03:11Z");
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	m->at = (double)timegm(&tm);
	if (!p || !*p || strlen(p) >= sizeof(m->probe))
		return ks_yaml_error_in(y, probe, e, "'probe' must name the probe (memcpy, fma)");
	snprintf(m->probe, sizeof(m->probe), "%s", p);
	int64_t cores;
	m->load = m->loadavg = 0;
	if ((load && (rc = ks_yaml_number(y, load, "a load (tasks wanting a CPU)", &m->load, e))) ||
	    (avg && (rc = ks_yaml_number(y, avg, "a load average", &m->loadavg, e))) ||
	    (rc = ks_yaml_int(y, ks_yaml_get(node, "cores"), "a CPU count", 1, 1 << 20, &cores, e)))
		return rc;
	if (m->load < 0 || m->loadavg < 0)
		return ks_yaml_error_in(y, m->load < 0 ? load : avg, e, "a load is not negative");
	m->cores = (int)cores;
	return 0;
}

void ks_spec_measure_yaml(const struct ks_spec_measure *m, struct ks_buf *out)
{
	char at[32];
	if (!m->probe[0])
		return;
	iso_utc(m->at, at, sizeof(at));
	ks_buf_addf(out, ", measured: {at: \"%s\", probe: %s, load: %.2f, loadavg: %.2f, cores: %d}",
		    at, m->probe, m->load, m->loadavg, m->cores);
}

json_t *ks_spec_measure_jobj(const struct ks_spec_measure *m)
{
	char at[32];
	if (!m->probe[0])
		return NULL;
	iso_utc(m->at, at, sizeof(at));
	return json_pack("{s:s, s:f, s:s, s:f, s:f, s:i, s:b, s:b}", "at", at, "unix", m->at,
			 "probe", m->probe, "load", m->load, "loadavg", m->loadavg, "cores",
			 m->cores, "loaded", ks_spec_measure_loaded(m), "from_cache",
			 m->from_cache);
}

int ks_spec_measure_json(const struct ks_spec_measure *m, struct ks_buf *out)
{
	json_t *o = m ? ks_spec_measure_jobj(m) : NULL;
	if (!o)
		return 0;
	int rc = ks_json_to_buf(o, JSON_COMPACT, out);
	json_decref(o);
	return rc;
}

int ks_spec_measure_parse_json(const char *text, struct ks_spec_measure *m)
{
	memset(m, 0, sizeof(*m));
	json_t *o = text ? json_loads(text, 0, NULL) : NULL;
	json_t *probe = json_object_get(o, "probe"), *at = json_object_get(o, "unix");
	json_t *load = json_object_get(o, "load"), *avg = json_object_get(o, "loadavg");
	json_t *cores = json_object_get(o, "cores");
	int ok = json_is_string(probe) && json_is_number(at) && json_is_integer(cores);
	if (ok) {
		snprintf(m->probe, sizeof(m->probe), "%s", json_string_value(probe));
		m->at = json_number_value(at);
		m->load = json_is_number(load) ? json_number_value(load) : 0;
		m->loadavg = json_is_number(avg) ? json_number_value(avg) : 0;
		m->cores = (int)json_integer_value(cores);
		m->from_cache = json_is_true(json_object_get(o, "from_cache"));
	}
	json_decref(o);
	return ok ? 0 : KS_EPARSE;
}
