/* `// @ksearch include: PATH` in kernel files: expansion relative to the including file,
 * the template parser and the task hash seeing the expanded text, and the errors (with
 * file:line:col) for absolute paths, missing files and nested includes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksearch/task.h"
#include "ksearch/template.h"
#include "tap.h"
#include "util/fs.h"

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	ks_mkdir_p(dir, NULL);
	ks_file_write_atomic(path, text, strlen(text), NULL);
}

static int read_rel(const char *rel, struct ks_buf *b, struct ks_error *e)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ks_buf_reset(b);
	return ks_kernel_source_read(path, 1 << 20, b, e);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/ks-include-XXXXXX");
	if (!mkdtemp(root))
		return tap_skip_all("mkdtemp");
	struct ks_buf b = KS_BUF_INIT;
	struct ks_error e = {0};

	put("base/templates/cuda/k.cu", "/* @ksearch\nfamily: k\nknobs:\n  T: {values: [1, 2]}\n"
					"@end */\nint k(void) { return ELEM; }");
	put("variant/templates/cuda/k.cu", "// the f32 form\n#define ELEM 4\n"
					   "  //   @ksearch include:  ../../../base/templates/cuda/k.cu  \n"
					   "int after;\n");
	int rc = read_rel("variant/templates/cuda/k.cu", &b, &e);
	ok(rc == 0, "a wrapper reads (%s)", e.msg);
	is_str(ks_buf_str(&b),
	       "// the f32 form\n#define ELEM 4\n/* @ksearch\nfamily: k\nknobs:\n  T: {values: [1, "
	       "2]}\n@end */\nint k(void) { return ELEM; }\nint after;\n",
	       "the include line becomes the file's text, a newline added where it had none");

	put("plain.c", "int x; // @ksearch include: is only a directive on a line of its own\n");
	rc = read_rel("plain.c", &b, &e);
	ok(rc == 0 && !strcmp(ks_buf_str(&b), "int x; // @ksearch include: is only a directive on "
					       "a line of its own\n"),
	   "a file without include lines reads as it is");

	/* the template parser sees the included knobs */
	char path[512];
	snprintf(path, sizeof(path), "%s/variant/templates/cuda/k.cu", root);
	struct ks_template *t = NULL;
	rc = ks_template_load(path, &t, &e);
	ok(rc == 0 && t && t->nknobs == 1 && !strcmp(t->family, "k") &&
		   strstr(t->source, "#define ELEM 4"),
	   "a wrapper is a template with the included file's knobs (%s)", e.msg);
	ks_template_free(t);
	struct ks_template **list = NULL;
	int n = 0;
	snprintf(path, sizeof(path), "%s/variant/templates/cuda", root);
	rc = ks_template_load_dir(path, &list, &n, &e);
	ok(rc == 0 && n == 1, "a template folder lists the wrapper (%d, %s)", n, e.msg);
	ks_template_list_free(list, n);

	put("bad/abs.c", "int a;\n  // @ksearch include: /etc/hostname\n");
	rc = read_rel("bad/abs.c", &b, &e);
	ok(rc == KS_EPARSE && strstr(e.msg, "abs.c:2:24:") && strstr(e.msg, "not an absolute path"),
	   "an absolute path is refused with file:line:col (%s)", e.msg);
	put("bad/empty.c", "// @ksearch include:\n");
	rc = read_rel("bad/empty.c", &b, &e);
	ok(rc == KS_EPARSE && strstr(e.msg, "empty.c:1:") && strstr(e.msg, "names none"),
	   "an include without a path is refused (%s)", e.msg);
	put("bad/missing.c", "\n\n// @ksearch include: nope.cu\n");
	rc = read_rel("bad/missing.c", &b, &e);
	ok(rc == KS_ENOTFOUND && strstr(e.msg, "missing.c:3:22") && strstr(e.msg, "nope.cu"),
	   "a missing include names the line and the file (%s)", e.msg);
	put("bad/nest.c", "// @ksearch include: ../variant/templates/cuda/k.cu\n");
	rc = read_rel("bad/nest.c", &b, &e);
	ok(rc == KS_EPARSE && strstr(e.msg, "one level"), "nested includes are refused (%s)",
	   e.msg);
	put("bad/dir.c", "// @ksearch include: ../base\n");
	rc = read_rel("bad/dir.c", &b, &e);
	ok(rc == KS_EINVAL && strstr(e.msg, "a directory"), "a folder is not a source (%s)", e.msg);

	ks_buf_release(&b);
	ks_rm_rf(root);
	return tap_done();
}
