/* ks_mlx_compact (src/backend/mlx_compact.c): what it removes, what it must keep, and the
 * proof that matters: real files compile to the same object code before and after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/mlx_kernel.h"
#include "ksearch/buf.h"
#include "tap.h"
#include "util/fs.h"
#include "util/proc.h"

static char *compacted(const char *in)
{
	char *s = strdup(in);
	ks_mlx_compact(s);
	return s;
}

static void check(const char *in, const char *want, const char *name)
{
	char *got = compacted(in);
	is_str(got, want, name);
	free(got);
}

static int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void cases(void)
{
	check("  int x;   // the x\n\tint  y ; /* y */\n", "int x;\nint y ;\n", "comments, indentation, blank runs");
	check("a/**/b\n", "a b\n", "a comment is one blank (no token pasting)");
	check("/* one\n two\n three */ x\ny\n", "x\n\n\ny\n", "a multi-line comment gives its newlines back at the line's end");
	check("#define A 1 /* two\n lines */ + 2\nA\n", "#define A 1 + 2\n\nA\n",
	      "a multi-line comment inside a directive keeps the directive whole");
	check("#define F(x) \\\n    (x + \\\n  1)\n", "#define F(x) \\\n (x + \\\n 1)\n",
	      "a spliced line keeps one blank before its tokens");
	check("#define G a\\\nb\n", "#define G a\\\nb\n", "a splice without blanks does not gain one");
	check("// a comment \\\n still the comment\nz\n", "\n\nz\n", "a backslash-newline continues a // comment");
	check("s = \"// not /* a comment\";\n", "s = \"// not /* a comment\";\n", "strings are copied");
	check("s = \"a \\\" // b\"; // c\n", "s = \"a \\\" // b\";\n", "escaped quotes inside strings");
	check("c = '\"'; d = '/'; // e\n", "c = '\"'; d = '/';\n", "character literals");
	check("n = 1'000'000; // m\nk = 'x';\n", "n = 1'000'000;\nk = 'x';\n", "digit separators are not literals");
	check("auto r = R\"x(a // b /* c\n  d)x\"; // e\n", "auto r = R\"x(a // b /* c\n  d)x\";\n",
	      "raw strings are copied whole, newlines and indentation too");
	check("w = u8R\"(//)\" L'a';\n", "w = u8R\"(//)\" L'a';\n", "prefixed raw strings and characters");
	check("x = 1;\r\n  y = 2; \r\n", "x = 1;\ny = 2;\n", "CRLF becomes LF, blanks before it go");
	check("a \\ \nb\n", "a \\ \nb\n", "a blank after a backslash stays (no new splice)");
	check("tail  /* open", "tail", "an unterminated comment and a last line without newline");
	check("\n\n  \n", "\n\n\n", "blank lines stay lines");
	check("", "", "empty text");
	ks_mlx_compact(NULL);
	ok(1, "NULL is ignored");
}

static void diag_log(const char *s)
{
	fprintf(stderr, "# %.2000s\n", s ? s : "");
}

/* compile text with the compiler named by argv (source on stdin); the object's bytes */
static int compile(char *const *argv, const char *text, const char *obj, struct ks_buf *o)
{
	struct ks_buf log = KS_BUF_INIT;
	struct ks_proc_io io = {.input = text, .input_len = strlen(text), .out = &log,
				.timeout_s = 120};
	struct ks_proc_result res;
	struct ks_error e = {0};
	int rc = ks_proc_exec(argv, &io, &res, &e) || !res.exited || res.code;
	if (rc)
		diag_log(ks_buf_str(&log));
	ks_buf_release(&log);
	o->len = 0;
	return rc || ks_file_read(obj, 64 << 20, o, &e);
}

/* the same object code from the file and its compacted text (same line numbers, so
 * __LINE__ and assert's messages match too) */
static void same_object(const char *cc, const char *lang, const char *name, const char *text)
{
	struct ks_buf a = KS_BUF_INIT, b = KS_BUF_INIT;
	char obj[64];
	snprintf(obj, sizeof(obj), "/tmp/ks_compact_%d.o", (int)getpid());
	char *argv[] = {(char *)cc,   "-x",	   (char *)lang, "-O1",	     "-g0",	    "-w",
			"-Iinclude",  "-Isrc",	   "-D_GNU_SOURCE", "-DKS_SOURCE_DIR=\"s\"",
			"-DKS_VERSION=\"v\"", "-c", "-",	     "-o",	     obj,	    NULL};
	char *small = compacted(text);
	int fa = compile(argv, text, obj, &a);
	int fb = compile(argv, small, obj, &b);
	ok(!fa && !fb && a.len == b.len && !memcmp(a.data, b.data, a.len),
	   "%s: the same object code (%zu bytes) from %zu bytes of text as from %zu, %d lines each",
	   name, a.len, strlen(small), strlen(text), lines(small));
	ok(lines(small) == lines(text), "%s: every line kept", name);
	unlink(obj);
	free(small);
	ks_buf_release(&a);
	ks_buf_release(&b);
}

static int have(const char *cc)
{
	char *argv[] = {(char *)cc, "--version", NULL};
	struct ks_buf out = KS_BUF_INIT;
	struct ks_proc_io io = {.out = &out, .timeout_s = 30};
	struct ks_proc_result res;
	struct ks_error e = {0};
	int rc = !ks_proc_exec(argv, &io, &res, &e) && res.exited && res.code == 0;
	ks_buf_release(&out);
	return rc;
}

/* what C does not have: raw strings (with comment markers and indentation inside), digit
 * separators, prefixed literals; __LINE__ after a multi-line comment */
static const char cxx[] =
	"#include <cstring>\n"
	"template <int N> struct T { /* a struct\n"
	"  over two lines */ static constexpr int v = N * 1'000'000; };\n"
	"extern \"C\" const char *raw() {\n"
	"    return R\"delim(one // two /* three\n"
	"        four */ \" )\" five)delim\"; // a comment\n"
	"}\n"
	"extern \"C\" int digits() { return T<0x1'0>::v + '\\'' + u8'a' + L'/' + __LINE__; }\n"
	"#define TWICE(x) \\\n"
	"    ((x) + \\\n"
	"     (x)) /* spliced */\n"
	"extern \"C\" int twice(int a) { return TWICE(a) + (int)std::strlen(u8R\"(/*)\"); }\n";

int main(void)
{
	cases();
	/* files with "//" and "/ *" inside strings, backslash-continued macros, prompts */
	static const char *const c_files[] = {
		"src/backend/mlx_compact.c", "src/backend/mlx_include.c", "src/export/mlx_py.c",
		"src/llm/http.c",	     "src/store/stmt.c",	  "src/util/error.c",
		"src/report/svg.c",	     "tasks/attention/templates/cpu/flash.c",
	};
	if (have("cc"))
		for (size_t i = 0; i < sizeof(c_files) / sizeof(c_files[0]); i++) {
			struct ks_buf src = KS_BUF_INIT;
			struct ks_error e = {0};
			if (ks_file_read(c_files[i], 4 << 20, &src, &e))
				ok(0, "%s: %s", c_files[i], e.msg);
			else
				same_object("cc", "c", c_files[i], ks_buf_str(&src));
			ks_buf_release(&src);
		}
	else
		tap_skip("no C compiler named cc");
	if (have("g++"))
		same_object("g++", "c++", "C++ with raw strings and digit separators", cxx);
	else
		tap_skip("no C++ compiler named g++");
	return tap_done();
}
