/* The cached spec of this machine: the best figure each probe of `spec detect` measured,
 * across detections (contract in knowledge.h).  A loaded machine measures low; a cache
 * that only ever takes the higher figure turns a run under load into a run that uses the
 * roof of a quieter moment. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "knowledge/spec_schema.h"
#include "ksearch/knowledge.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/machine.h"

int ks_spec_cache_path(char *out, size_t n)
{
	char hex[65];
	ks_sha256_str_hex(ks_machine_fingerprint(), hex);
	int w = snprintf(out, n, "%s/specs/host-%.16s.yaml", ks_cache_root(), hex);
	return w < 0 || (size_t)w >= n ? KS_ELIMIT : 0;
}

static struct ks_spec_value *value_of(struct ks_spec *s, const char *name)
{
	for (int i = 0; i < s->nvalues; i++)
		if (!strcmp(s->values[i].name, name))
			return &s->values[i];
	return NULL;
}

int ks_spec_keep_best(struct ks_spec *fresh, const struct ks_spec *cached)
{
	int kept = 0;
	for (int i = 0; i < cached->nvalues; i++) {
		const struct ks_spec_value *c = &cached->values[i];
		struct ks_spec_value *f = value_of(fresh, c->name);
		if (!c->measure.probe[0] || !isfinite(c->value) || !f || !f->measure.probe[0] ||
		    (isfinite(f->value) && f->value >= c->value))
			continue;
		int rc = ks_spec_set_number(fresh, c->name, c->value, c->source, "measured", c->note);
		if (rc)
			return rc;
		f = value_of(fresh, c->name);
		f->measure = c->measure;
		f->measure.from_cache = 1;
		kept++;
	}
	return kept;
}

/* s as the cache file: named after it, as the spec loader requires */
static int cache_write(const struct ks_spec *s, const char *path, struct ks_error *e)
{
	char dir[4096], name[64];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	snprintf(name, sizeof(name), "%.*s", (int)(strlen(base) - 5), base);
	struct ks_spec named = *s;
	named.name = name;
	struct ks_buf y = KS_BUF_INIT;
	int rc = ks_mkdir_p(dir, e);
	if (!rc)
		rc = ks_spec_to_yaml(&named, &y, e);
	if (!rc)
		rc = ks_file_write_buf(path, &y, e);
	ks_buf_release(&y);
	return rc;
}

/* the measured values of s that came from this detection (not from the cache) */
static int fresh_figures(const struct ks_spec *s)
{
	int n = 0;
	for (int i = 0; i < s->nvalues; i++)
		n += s->values[i].measure.probe[0] && !s->values[i].measure.from_cache;
	return n;
}

void ks_spec_cache_apply(struct ks_spec *s, struct ks_detect_opts *o)
{
	struct ks_error e = {0};
	struct ks_spec cached;
	o->kept = 0;
	o->cache_error[0] = 0;
	if (o->no_cache || ks_spec_cache_path(o->cache_path, sizeof(o->cache_path))) {
		o->cache_path[0] = 0;
		return;
	}
	if (!o->fresh && ks_path_exists(o->cache_path)) {
		if (ks_spec_load(o->cache_path, &cached, &e)) {
			/* a damaged cache is replaced by this detection, never trusted */
			snprintf(o->cache_error, sizeof(o->cache_error), "%s", e.msg);
		} else {
			int kept = ks_spec_keep_best(s, &cached);
			o->kept = kept > 0 ? kept : 0;
			ks_spec_release(&cached);
		}
	}
	if (!fresh_figures(s))
		return; /* the cache holds every figure already */
	if (cache_write(s, o->cache_path, &e) && !o->cache_error[0])
		snprintf(o->cache_error, sizeof(o->cache_error), "%s", e.msg);
}
