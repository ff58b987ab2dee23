/* task.yaml's `library` map: a vendor library's version of the task per backend (docs/tasks.md,
 * "The library yardstick").
 *
 * Everything here reaches a command line or an environment: `pkg-config` and `libs` the
 * compiler's (inside its jail), `describe` a probe program's, `cores` the runners'.  So each
 * value is what a task may ask for and nothing more: a package name (never a path or an
 * option), -lNAME and -L<a folder inside the task's own>, C identifiers, and a variable that
 * holds no secret.  Task data never widens the jail the library is built and run in. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksearch/buf.h"
#include "ksearch/secret.h"
#include "task/task_priv.h"
#include "util/fs.h"
#include "util/yaml.h"

#define LIB_MAX 16
#define LIB_NAME_MAX 40 /* it labels every speedup over the library */
#define LIB_LIST_MAX 8

struct lib_ctx {
	const struct ks_yaml_doc *doc;
	const struct ks_task *t;
	struct ks_error *e;
};

static int oom(struct lib_ctx *c)
{
	return ks_error_set(c->e, KS_ENOMEM, "out of memory loading '%s'", c->doc->path);
}

/* s[0..n) is made of letters, digits and the characters of extra, and starts with a
 * letter, a digit or '_' */
static int word_ok(const char *s, size_t n, const char *extra)
{
	if (!n || !(isalnum((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && !strchr(extra, s[i]))
			return 0;
	return 1;
}

/* the display name: one short line of printable text */
static int lib_name(struct lib_ctx *c, const struct ks_yaml_node *v, char **out)
{
	const char *s;
	int rc = ks_yaml_str(c->doc, v, "the library's name (\"OpenBLAS\")", &s, c->e);
	if (rc)
		return rc;
	for (const char *p = s; *p; p++)
		if (iscntrl((unsigned char)*p))
			return ks_yaml_error(c->doc, v, KS_EPARSE, c->e,
					     "expected the library's name on one line of text");
	if (strlen(s) > LIB_NAME_MAX)
		return ks_yaml_error(c->doc, v, KS_EPARSE, c->e,
				     "expected a library name of at most %d bytes (it labels every "
				     "speedup), got %zu", LIB_NAME_MAX, strlen(s));
	return (*out = strdup(s)) ? 0 : oom(c);
}

/* pkg-config takes an argument ending in .pc, or holding '/', as a file to read, and one
 * starting with '-' as an option: a package name is neither */
static int pkg_name(struct lib_ctx *c, const struct ks_yaml_node *v, char **out)
{
	const char *s;
	int rc = ks_yaml_str(c->doc, v, "a pkg-config package name", &s, c->e);
	if (rc)
		return rc;
	size_t n = strlen(s);
	if (!word_ok(s, n, ".+-") || (n >= 3 && !strcmp(s + n - 3, ".pc")))
		return ks_yaml_error(c->doc, v, KS_EPARSE, c->e,
				     "expected a pkg-config package name (letters, digits, '_', '.', "
				     "'+', '-'; not a path, not a .pc file, not an option), got '%s'",
				     s);
	return (*out = strdup(s)) ? 0 : oom(c);
}

/* one -L word (p, n bytes; off its column in v) as -L<absolute folder inside the task's> */
static int lib_dir(struct lib_ctx *c, const struct ks_yaml_node *v, const char *p, size_t n,
		   int off, struct ks_buf *b)
{
	char rel[PATH_MAX], full[PATH_MAX], real[PATH_MAX];
	snprintf(rel, sizeof(rel), "%.*s", (int)(n - 2), p + 2);
	if (ks_path_join(full, sizeof(full), c->t->dir, rel) ||
	    !ks_path_within(full, c->t->dir, real, sizeof(real)) || !ks_is_dir(real))
		return ks_yaml_error_at(c->doc, v, off, KS_EPARSE, c->e,
					"'%.*s' is not a folder inside the task's: a task's link "
					"flags may add its own folders (-Llib), never one elsewhere",
					(int)n, p);
	return ks_buf_addf(b, "%s-L%s", b->len ? " " : "", real);
}

/* link flags: -lNAME and -LDIR only; anything else (-wrapper, -B, -fplugin, -Wl,...)
 * would run or read what the task chooses */
static int lib_flags(struct lib_ctx *c, const struct ks_yaml_node *v, char **out)
{
	const char *s;
	int rc = ks_yaml_str(c->doc, v, "link flags (\"-lcublas\")", &s, c->e);
	if (rc)
		return rc;
	struct ks_buf b = KS_BUF_INIT;
	for (const char *p = s + strspn(s, " \t"); *p && !rc; p += strspn(p, " \t")) {
		size_t n = strcspn(p, " \t");
		int off = (int)(p - s);
		if (n > 2 && !strncmp(p, "-l", 2) && word_ok(p + 2, n - 2, ".+-"))
			ks_buf_addf(&b, "%s%.*s", b.len ? " " : "", (int)n, p);
		else if (n > 2 && !strncmp(p, "-L", 2))
			rc = lib_dir(c, v, p, n, off, &b);
		else
			rc = ks_yaml_error_at(c->doc, v, off, KS_EPARSE, c->e,
					      "expected link flags -lNAME or -LDIR (a folder inside "
					      "the task's), got '%.*s': a task's flags never add "
					      "options to the compiler",
					      (int)n, p);
		p += n;
	}
	if (!rc && ks_buf_failed(&b))
		rc = oom(c);
	if (!rc && !(*out = ks_buf_detach(&b, NULL)))
		rc = oom(c);
	ks_buf_release(&b);
	return rc;
}

/* a sequence of 1..LIB_LIST_MAX words (letters, digits, '_') into a NULL-terminated list */
static int word_list(struct lib_ctx *c, const struct ks_yaml_node *v, const char *what,
		     int c_ident, char ***out)
{
	if (!v || v->kind != KS_YAML_SEQ || v->n < 1 || v->n > LIB_LIST_MAX)
		return ks_yaml_error(c->doc, v, KS_EPARSE, c->e,
				     "expected a list of 1 to %d %s", LIB_LIST_MAX, what);
	if (!(*out = calloc((size_t)v->n + 1, sizeof(char *))))
		return oom(c);
	for (int i = 0; i < v->n; i++) {
		const struct ks_yaml_node *w = v->items[i];
		const char *s = ks_yaml_scalar(w);
		if (!s || (c_ident ? !ks_task_ident_ok(s) : !word_ok(s, strlen(s), "")))
			return ks_yaml_error(c->doc, w, KS_EPARSE, c->e, "expected %s, got '%s'",
					     what, s ? s : ks_yaml_kind_name(w->kind));
		if (!((*out)[i] = strdup(s)))
			return oom(c);
	}
	return 0;
}

/* the variable that picks the core: it reaches every runner with the user's value, so it
 * must not be one that holds a secret or changes how programs load */
static int core_var(struct lib_ctx *c, const struct ks_yaml_node *v, char **out)
{
	const char *s = ks_yaml_scalar(v);
	if (!s || !isupper((unsigned char)s[0]) || !word_ok(s, strlen(s), "") ||
	    ks_secret_name(s) || !strncmp(s, "LD_", 3) || !strcmp(s, "PATH"))
		return ks_yaml_error(c->doc, v, KS_EPARSE, c->e,
				     "expected the variable that picks the library's core, in capitals "
				     "(OPENBLAS_CORETYPE; not one that looks like a secret, LD_* or "
				     "PATH), got '%s'",
				     s ? s : "a collection");
	return (*out = strdup(s)) ? 0 : oom(c);
}

/* cores: {variable: OPENBLAS_CORETYPE, avx512f: [SkylakeX, ...], avx2: [Haswell, ...]} */
static int core_fit(struct lib_ctx *c, const struct ks_yaml_node *v, struct ks_task_library *l)
{
	int rc = ks_yaml_expect(c->doc, v, KS_YAML_MAP,
				"{variable: NAME, <cpu flag>: [cores that use it], ...}", c->e);
	if (rc)
		return rc;
	if (!ks_yaml_get(v, "variable"))
		return ks_yaml_error_in(c->doc, v, c->e, "cores lacks the key 'variable'");
	if (v->n > LIB_LIST_MAX + 1)
		return ks_yaml_error(c->doc, v, KS_EPARSE, c->e, "expected at most %d cpu flags",
				     LIB_LIST_MAX);
	if (!(l->fit = calloc((size_t)v->n, sizeof(*l->fit))))
		return oom(c);
	for (int i = 0; i < v->n && !rc; i++) {
		const struct ks_yaml_node *k = v->keys[i];
		if (!strcmp(k->str, "variable")) {
			rc = core_var(c, v->items[i], &l->core_var);
			continue;
		}
		if (!word_ok(k->str, strlen(k->str), ""))
			return ks_yaml_error(c->doc, k, KS_EPARSE, c->e,
					     "expected a cpu flag as /proc/cpuinfo names it (avx2), got "
					     "'%s'", k->str);
		struct ks_task_core_fit *f = &l->fit[l->nfit++];
		if (!(f->flag = strdup(k->str)))
			return oom(c);
		rc = word_list(c, v->items[i], "core names (SkylakeX)", 0, &f->cores);
	}
	return rc;
}

static int parse_one(struct lib_ctx *c, const struct ks_yaml_node *v, struct ks_task_library *l)
{
	static const char *const keys[] = {"name", "pkg-config", "libs", "describe", "cores", NULL};
	static const char *const req[] = {"name", NULL};
	const struct ks_yaml_node *x;
	int rc = ks_yaml_check_keys(c->doc, v, "library", keys, req, c->e);
	if (!rc)
		rc = lib_name(c, ks_yaml_get(v, "name"), &l->name);
	if (!rc && (x = ks_yaml_get(v, "pkg-config")))
		rc = pkg_name(c, x, &l->pkg);
	if (!rc && (x = ks_yaml_get(v, "libs")))
		rc = lib_flags(c, x, &l->libs);
	if (!rc && (x = ks_yaml_get(v, "describe")))
		rc = word_list(c, x, "C function names (openblas_get_corename)", 1, &l->describe);
	if (!rc && (x = ks_yaml_get(v, "cores")) && !l->describe)
		rc = ks_yaml_error(c->doc, x, KS_EPARSE, c->e,
				   "'cores' needs 'describe': the first function it names says "
				   "which core the library runs");
	if (!rc && (x = ks_yaml_get(v, "cores")))
		rc = core_fit(c, x, l);
	return rc;
}

int ks_task_parse_libraries(const struct ks_yaml_doc *doc, struct ks_task *t,
			    const struct ks_yaml_node *n, const char *const *backends,
			    struct ks_error *e)
{
	struct lib_ctx c = {doc, t, e};
	int rc = ks_yaml_expect(doc, n, KS_YAML_MAP,
				"a mapping of backend names to {name, pkg-config, libs, describe, "
				"cores}", e);
	if (rc)
		return rc;
	if (n->n > LIB_MAX)
		return ks_yaml_error(doc, n, KS_ELIMIT, e, "too many libraries");
	if (!(t->libraries = calloc((size_t)n->n + 1, sizeof(*t->libraries))))
		return oom(&c);
	for (int i = 0; i < n->n && !rc; i++) {
		const struct ks_yaml_node *k = n->keys[i];
		int known = 0;
		for (int b = 0; backends[b]; b++)
			known |= !strcmp(k->str, backends[b]);
		if (!known)
			return ks_yaml_error(doc, k, KS_EPARSE, e,
					     "expected a backend name (cpu, cuda, mlx, ...), got '%s'",
					     k->str);
		struct ks_task_library *l = &t->libraries[t->nlibraries++];
		if (!(l->backend = strdup(k->str)))
			return oom(&c);
		rc = parse_one(&c, n->items[i], l);
	}
	return rc;
}

static void strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

void ks_task_libraries_free(struct ks_task *t)
{
	for (int i = 0; i < t->nlibraries; i++) {
		struct ks_task_library *l = &t->libraries[i];
		free(l->backend);
		free(l->name);
		free(l->pkg);
		free(l->libs);
		strv_free(l->describe);
		free(l->core_var);
		for (int j = 0; j < l->nfit; j++) {
			free(l->fit[j].flag);
			strv_free(l->fit[j].cores);
		}
		free(l->fit);
	}
	free(t->libraries);
}

const struct ks_task_library *ks_task_library_for(const struct ks_task *t, const char *backend)
{
	for (int i = 0; t && backend && i < t->nlibraries; i++)
		if (!strcmp(t->libraries[i].backend, backend))
			return &t->libraries[i];
	return NULL;
}
