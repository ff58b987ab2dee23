/* Hints (knowledge/hints/TARGET.md): "## " sections, each with an "Applies to:" line that
 * lists concept ids of the concept map (or "always"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/conceptmap.h"
#include "ksearch/knowledge.h"
#include "util/fs.h"

static int section_applies(const char *b, const char *e, const char *const *concepts)
{
	const char *key = "Applies to:";
	const char *p = b;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *le = nl ? nl : e;
		if ((size_t)(le - p) > strlen(key) && !strncmp(p, key, strlen(key))) {
			char list[512];
			size_t n = (size_t)(le - p) - strlen(key);
			if (n >= sizeof(list))
				n = sizeof(list) - 1;
			memcpy(list, p + strlen(key), n);
			list[n] = 0;
			char *save = NULL;
			for (char *tok = strtok_r(list, ", \t", &save); tok;
			     tok = strtok_r(NULL, ", \t", &save)) {
				if (!strcmp(tok, "always"))
					return 1;
				for (const char *const *c = concepts; *c; c++)
					if (!strcmp(*c, tok))
						return 1;
			}
			return 0;
		}
		p = le + 1;
	}
	return 0;
}

int ks_hints_text(const char *target, const char *const *concepts, struct ks_buf *out,
		  struct ks_error *e)
{
	const char *canon = ks_target_canonical(target);
	if (!canon)
		return ks_error_set(e, KS_ENOTFOUND, "no hints for target '%s'",
				    target ? target : "");
	char path[4096];
	snprintf(path, sizeof(path), "%s/knowledge/hints/%s.md", ks_data_root(), canon);
	struct ks_buf b = KS_BUF_INIT;
	int rc = ks_file_read(path, 1u << 20, &b, e);
	if (rc) {
		ks_buf_release(&b);
		return rc;
	}
	const char *t = ks_buf_str(&b), *end = t + b.len;
	if (!concepts) {
		rc = ks_buf_add(out, t, b.len);
		ks_buf_release(&b);
		return rc ? ks_error_set(e, rc, "read hints '%s'", path) : 0;
	}
	const char *sec = strstr(t, "\n## ");
	while (sec) {
		sec++;
		const char *next = strstr(sec, "\n## ");
		const char *se = next ? next + 1 : end;
		if (section_applies(sec, se, concepts))
			ks_buf_add(out, sec, (size_t)(se - sec));
		sec = next;
	}
	ks_buf_release(&b);
	return 0;
}
