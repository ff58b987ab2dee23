/* Loading recorded exchanges for a replay: from a run's store, or from a replay fixture's
 * exchanges.jsonl (tests/fixtures/llm_runs/NAME/, one exchange per line with the store's
 * field names), so a recorded run can be kept in the repository as text. */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/llm.h"
#include "util/fs.h"

/* the purpose a recorded row was asked for: a "repair" row names its correction round in
 * the last "PURPOSE: x" marker of its prompt */
static char *row_purpose(const struct ks_store_llm *row)
{
	if (strcmp(row->purpose, "repair"))
		return strdup(row->purpose);
	const char *last = NULL, *s = row->prompt ? row->prompt : "";
	for (const char *h = s; (h = strstr(h, "PURPOSE:")); h += 8)
		last = h + 8;
	if (!last)
		return strdup("repair");
	while (*last == ' ' || *last == '\t')
		last++;
	size_t n = strspn(last, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	return strndup(last, n);
}

/* the failure a recorded row replays; stores written before cmd's empty reply became a
 * parse error hold it as "replay_mismatch", which would replay as a divergence */
static int row_status(const struct ks_store_llm *row)
{
	int st = ks_llm_status_parse(row->status);
	if (st == KS_EPROTO && row->error && strstr(row->error, "wrote no reply on stdout"))
		return KS_EPARSE;
	return st;
}

/* the recorded exchanges rows[0..n) into a replay transport and p->purposes */
static int replay_rows(struct ks_llm_policy *p, const struct ks_store_llm *rows, size_t n,
		       struct ks_error *e)
{
	struct ks_llm_replay_entry *v = calloc(n + 1, sizeof(*v));
	p->purposes = calloc(n + 1, sizeof(char *));
	if (!v || !p->purposes) {
		free(v);
		return ks_error_set(e, KS_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		p->purposes[i] = row_purpose(&rows[i]);
		v[i] = (struct ks_llm_replay_entry){
			.purpose = p->purposes[i] ? p->purposes[i] : "",
			.content = rows[i].reply ? rows[i].reply : "",
			.len = rows[i].reply ? strlen(rows[i].reply) : 0,
			.model = rows[i].model,
			.prompt_tokens = (long)rows[i].prompt_tokens,
			.completion_tokens = (long)rows[i].completion_tokens,
			.status = row_status(&rows[i]),
			.error = rows[i].error,
		};
	}
	p->npurposes = (int)n;
	int rc = ks_llm_replay_open(v, (int)n, &p->replay, e);
	free(v);
	return rc;
}

int ks_llm_replay_load(struct ks_llm_policy *p, struct ks_store *src, int *count,
		       struct ks_error *e)
{
	struct ks_store_llm *rows = NULL;
	size_t n = 0;
	int rc = ks_store_list_llm(src, &rows, &n, e);
	if (!rc)
		rc = replay_rows(p, rows, n, e);
	ks_store_free(rows);
	*count = rc ? 0 : (int)n;
	return rc;
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* one line of exchanges.jsonl as a store row (strings borrowed from o) */
static int jsonl_row(json_t *o, struct ks_store_llm *r, const char *path, int line,
		     struct ks_error *e)
{
	memset(r, 0, sizeof(*r));
	r->purpose = jstr(o, "purpose");
	r->status = jstr(o, "status");
	if (!json_is_object(o) || !r->purpose || !r->status)
		return ks_error_set(e, KS_EPARSE, "%s:%d: an exchange needs \"purpose\" and "
						  "\"status\" strings",
				    path, line);
	r->model = jstr(o, "model");
	r->prompt = jstr(o, "prompt");
	r->reply = jstr(o, "reply");
	r->error = jstr(o, "error");
	json_t *t = json_object_get(o, "prompt_tokens");
	r->prompt_tokens = json_is_integer(t) ? json_integer_value(t) : -1;
	t = json_object_get(o, "completion_tokens");
	r->completion_tokens = json_is_integer(t) ? json_integer_value(t) : -1;
	return 0;
}

static int replay_load_jsonl(struct ks_llm_policy *p, const char *path, int *count,
			     struct ks_error *e)
{
	struct ks_buf text = KS_BUF_INIT;
	int rc = ks_file_read(path, (size_t)256 << 20, &text, e);
	size_t cap = 64, n = 0;
	json_t **lines = calloc(cap, sizeof(*lines));
	struct ks_store_llm *rows = NULL;
	if (!rc && !lines)
		rc = ks_error_set(e, KS_ENOMEM, "out of memory");
	int line = 0;
	const char *next = ks_buf_str(&text);
	while (!rc && *next) {
		const char *s = next;
		size_t len = strcspn(s, "\n");
		next = s + len + (s[len] == '\n');
		line++;
		if (len == strspn(s, " \t\r"))
			continue;
		json_error_t je;
		json_t *o = json_loadb(s, len, 0, &je);
		if (!o) {
			rc = ks_error_set(e, KS_EPARSE, "%s:%d:%d: %s", path, line, je.column, je.text);
			break;
		}
		if (n == cap && !(lines = realloc(lines, (cap *= 2) * sizeof(*lines))))
			rc = ks_error_set(e, KS_ENOMEM, "out of memory");
		else
			lines[n++] = o;
	}
	if (!rc && !(rows = calloc(n + 1, sizeof(*rows))))
		rc = ks_error_set(e, KS_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < n; i++)
		rc = jsonl_row(lines[i], &rows[i], path, (int)i + 1, e);
	if (!rc)
		rc = replay_rows(p, rows, n, e);
	*count = rc ? 0 : (int)n;
	for (size_t i = 0; lines && i < n; i++)
		json_decref(lines[i]);
	free(lines);
	free(rows);
	ks_buf_release(&text);
	return rc;
}

int ks_llm_replay_load_dir(struct ks_llm_policy *p, const char *dir, int *count,
			   struct ks_error *e)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/exchanges.jsonl", dir);
	int rc;
	if (ks_path_exists(path)) {
		rc = replay_load_jsonl(p, path, count, e);
	} else {
		struct ks_store *src;
		if ((rc = ks_store_open(dir, 0, &src, e)))
			return ks_error_wrap(e, "--llm-replay '%s'", dir);
		rc = ks_llm_replay_load(p, src, count, e);
		ks_store_close(src);
	}
	return rc ? ks_error_wrap(e, "--llm-replay '%s'", dir) : 0;
}
