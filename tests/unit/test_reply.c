/* Reply parsing: fenced code, JSON from fences or bare text, errors, correction prompts,
 * and random garbage that must never crash. */
#include "ksearch/llm.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int code(const char *reply, const char *lang, struct ks_buf *out, char *lo,
		struct ks_error *e)
{
	ks_buf_reset(out);
	return ks_reply_code(reply, strlen(reply), lang, out, lo, e);
}

static int js(const char *reply, int want, struct ks_buf *out, struct ks_error *e)
{
	ks_buf_reset(out);
	return ks_reply_json(reply, strlen(reply), want, out, e);
}

static void test_code(void)
{
	struct ks_buf b;
	struct ks_error e = {0};
	char langbuf[16], *lang = langbuf;
	int rc;
	ks_buf_init(&b, 1 << 20);

	rc = code("Here it is:\n```c\nvoid f(void) {}\n```\nDone.", "c", &b, lang, &e);
	is_int(rc, 0, "c block");
	is_str(ks_buf_str(&b), "void f(void) {}\n", "c block content");
	is_str(lang, "c", "lang reported");

	rc = code("```\nint bare;\n```", NULL, &b, lang, &e);
	is_int(rc, 0, "bare block");
	is_str(ks_buf_str(&b), "int bare;\n", "bare content");
	is_str(lang, "", "bare lang");

	rc = code("```cuda\n__global__ void k() {}\n```\n```cpp\nhost();\n```", "cuda", &b, lang,
		  &e);
	is_int(rc, 0, "cuda preferred");
	is_str(lang, "cuda", "cuda block chosen over cpp");

	rc = code("```c\nshort\n```\ntext\n```c\nmuch longer block\nline two\n```", "c", &b, lang,
		  &e);
	is_int(rc, 0, "two c blocks");
	is_str(ks_buf_str(&b), "much longer block\nline two\n", "longest wins");

	rc = code("```json\n{\"a\": 1}\n```\n```metal\nkernel void k() {}\n```", "metal", &b, lang,
		  &e);
	is_int(rc, 0, "metal among json");
	is_str(lang, "metal", "json block skipped");

	rc = code("```cpp\nint x;\n```", "c", &b, lang, &e);
	is_int(rc, 0, "other code language still accepted");
	is_str(ks_buf_str(&b), "int x;\n", "cpp when c asked");

	rc = code("```cuda:softmax.cu\n__global__ void k() {}\n```", "cuda", &b, lang, &e);
	is_int(rc, 0, "fence with a file name");
	is_str(lang, "cuda", "language before the colon");

	rc = code("~~~c\nint t;\n~~~\n", "c", &b, lang, &e);
	is_int(rc, 0, "tilde fence");

	rc = code("````c\nint q;\n```\nstill code\n````\n", "c", &b, lang, &e);
	is_int(rc, 0, "longer fence contains a shorter one");
	is_str(ks_buf_str(&b), "int q;\n```\nstill code\n", "nested fence kept");

	rc = code("```c\nint x;\n```\n```\n", "c", &b, lang, &e);
	is_int(rc, 0, "stray empty trailing fence tolerated");

	rc = code("No code here, sorry.", "c", &b, lang, &e);
	is_int(rc, KS_EPARSE, "no block");
	is_str(e.msg, "reply has no code block", "no block message");

	rc = code("```json\n{}\n```", "c", &b, lang, &e);
	is_int(rc, KS_EPARSE, "only json");
	ok(strstr(e.msg, "no code block") != NULL, "only-json message: %s", e.msg);

	rc = code("text\n```c\nvoid f() {\n  int cut", "c", &b, lang, &e);
	is_int(rc, KS_EPARSE, "unterminated fence");
	ok(strstr(e.msg, "unterminated code fence at line 2") != NULL, "message: %s", e.msg);

	rc = code("```c\n\n  \n```", "c", &b, lang, &e);
	is_int(rc, KS_EPARSE, "empty block");

	const char nul[] = "```c\nint a;\0int b;\n```";
	ks_buf_reset(&b);
	rc = ks_reply_code(nul, sizeof(nul) - 1, "c", &b, lang, &e);
	is_int(rc, KS_EPARSE, "NUL inside code rejected");

	struct ks_buf small;
	ks_buf_init(&small, 4);
	rc = ks_reply_code("```c\nint long_enough;\n```", 25, "c", &small, lang, &e);
	is_int(rc, KS_ELIMIT, "code larger than the buffer cap");
	ks_buf_release(&small);
	ks_buf_release(&b);
}

static void test_json(void)
{
	struct ks_buf b;
	struct ks_error e = {0};
	int rc;
	ks_buf_init(&b, 1 << 20);

	rc = js("Plan:\n```json\n{\"a\": [1, 2]}\n```\n", '{', &b, &e);
	is_int(rc, 0, "fenced object");
	is_str(ks_buf_str(&b), "{\"a\": [1, 2]}", "fenced text");

	rc = js("Sure! The ops are [ {\"op\": \"insert_node\"} ] as requested.", '[', &b, &e);
	is_int(rc, 0, "bare array");
	is_str(ks_buf_str(&b), "[ {\"op\": \"insert_node\"} ]", "bare array text");

	rc = js("Set {x} first; then {\"s\": \"brace } in \\\" string {\"}", '{', &b, &e);
	is_int(rc, 0, "strings and escapes respected, invalid prefix skipped");
	is_str(ks_buf_str(&b), "{\"s\": \"brace } in \\\" string {\"}", "object with braces in string");

	rc = js("```json\n{\"draft\": 1,}\n```\n```json\n{\"final\": 2}\n```", '{', &b, &e);
	is_int(rc, 0, "last valid fenced block");
	is_str(ks_buf_str(&b), "{\"final\": 2}", "final version wins");

	rc = js("intro\n\n```json\n{\n  \"a\": 1,\n  \"b\": tru\n}\n```", '{', &b, &e);
	is_int(rc, KS_EPARSE, "invalid fenced JSON");
	ok(strstr(e.msg, "reply JSON invalid at line 6 col") != NULL, "line of the reply: %s",
	   e.msg);

	rc = js("x = {\"a\": 1, \"a\": 2}", '{', &b, &e);
	is_int(rc, KS_EPARSE, "duplicate keys rejected");
	ok(strstr(e.msg, "line 1 col") != NULL, "bare error position: %s", e.msg);

	rc = js("no json at all", '{', &b, &e);
	is_int(rc, KS_EPARSE, "no JSON");
	is_str(e.msg, "reply has no JSON object", "no JSON message");

	rc = js("[1, 2]", '{', &b, &e);
	is_int(rc, KS_EPARSE, "array when object wanted");

	rc = js("here {\"a\": [1, 2", '{', &b, &e);
	is_int(rc, KS_EPARSE, "unclosed object");
	ok(strstr(e.msg, "never closed") != NULL, "unclosed message: %s", e.msg);

	rc = js("{\"a\": 1}", 0, &b, &e);
	is_int(rc, 0, "either kind");

	rc = js("```json\n{\"a\": 1", '{', &b, &e);
	is_int(rc, KS_EPARSE, "unterminated json fence");

	/* a kernel where JSON was wanted: its braces are not read as broken JSON */
	rc = js("Here it is:\n```c\n#include <math.h>\nvoid k(const float *x, float *y, int n)\n"
		"{\n\tfor (int i = 0; i < n; i++) { y[i] = expf(x[i]); }\n}\n```\n",
		'{', &b, &e);
	is_int(rc, KS_EPARSE, "only a ```c block");
	is_str(e.msg,
	       "reply has no JSON object (it has a ```c block: the JSON was expected in a ```json "
	       "block)",
	       "only-code message");
	rc = js("```cuda\n__global__ void k(float *y) { y[0] = 1; }\n```", 0, &b, &e);
	ok(rc == KS_EPARSE && strstr(e.msg, "it has a ```cuda block"), "cuda block: %s", e.msg);

	rc = js("```c\nint a[2] = {1, 2};\n```\nops: [{\"op\": \"x\"}]", '[', &b, &e);
	is_int(rc, 0, "bare JSON beside a ```c block");
	is_str(ks_buf_str(&b), "[{\"op\": \"x\"}]", "... the JSON, not the C array's [2]");

	rc = js("```\n{\"a\": 1}\n```", '{', &b, &e);
	is_int(rc, 0, "JSON in a bare fence");
	is_str(ks_buf_str(&b), "{\"a\": 1}", "bare fence text");

	const char nul[] = "{\"a\": \"x\0y\"}";
	ks_buf_reset(&b);
	rc = ks_reply_json(nul, sizeof(nul) - 1, '{', &b, &e);
	is_int(rc, KS_EPARSE, "raw NUL inside JSON rejected");
	ks_buf_release(&b);
}

static void test_correction(void)
{
	struct ks_buf b;
	ks_buf_init(&b, 4096);
	int rc = ks_reply_correction("reply has no code block", "one fenced ```c code block", &b);
	is_int(rc, 0, "correction built");
	ok(strstr(ks_buf_str(&b), "could not be used: reply has no code block.") &&
		   strstr(ks_buf_str(&b), "Reply again with one fenced ```c code block"),
	   "correction text: %s", ks_buf_str(&b));
	ks_buf_release(&b);
}

static uint64_t rng = 0x1234567887654321ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* random replies built from the characters that matter, plus raw bytes */
static void test_fuzz(void)
{
	static const char *atoms[] = {"```", "```c\n", "```json\n", "\n", "{", "}", "[", "]",
				      "\"", "\\", "~~~", "````", " ", "int x;", ":", ",", "\0",
				      "\xff", "\"a\":", "1", "```cuda\n", "\n```\n"};
	struct ks_buf b, r;
	struct ks_error e;
	int crashes = 0, codes = 0, jsons = 0;
	ks_buf_init(&b, 1 << 20);
	ks_buf_init(&r, 1 << 20);
	for (int iter = 0; iter < 3000; iter++) {
		ks_buf_reset(&r);
		int n = (int)(next() % 60);
		for (int k = 0; k < n; k++) {
			uint64_t v = next();
			if (v % 7 == 0) {
				char c = (char)(v >> 8);
				ks_buf_add(&r, &c, 1);
			} else {
				const char *a = atoms[(v >> 3) % (sizeof(atoms) / sizeof(atoms[0]))];
				ks_buf_add(&r, a, a[0] ? strlen(a) : 1);
			}
		}
		ks_buf_reset(&b);
		int rc = ks_reply_code(r.data ? r.data : "", r.len, "c", &b, NULL, &e);
		if (rc == 0) {
			codes++;
			if (b.len > r.len)
				crashes++;
		} else if (rc != KS_EPARSE) {
			crashes++;
		}
		ks_buf_reset(&b);
		rc = ks_reply_json(r.data ? r.data : "", r.len, (int)(iter % 3 == 0 ? 0 : '{'), &b,
				   &e);
		if (rc == 0)
			jsons++;
		else if (rc != KS_EPARSE)
			crashes++;
	}
	is_int(crashes, 0, "random replies give only parse errors or sane results");
	ok(codes > 0 && jsons > 0, "fuzz reached both success paths (%d code, %d json)", codes,
	   jsons);

	/* huge replies: 4 MiB of open braces, quotes and fences */
	size_t big = 4 << 20;
	char *h = malloc(big);
	memset(h, '{', big);
	ks_buf_reset(&b);
	int rc = ks_reply_json(h, big, '{', &b, &e);
	is_int(rc, KS_EPARSE, "4 MiB of '{'");
	for (size_t i = 0; i < big; i++)
		h[i] = "`\n\"{x"[i % 5];
	rc = ks_reply_code(h, big, "c", &b, NULL, &e);
	ok(rc == KS_EPARSE || rc == 0, "4 MiB of fences (rc %d)", rc);
	rc = ks_reply_json(h, big, 0, &b, &e);
	is_int(rc, KS_EPARSE, "4 MiB of mixed junk");
	free(h);
	ks_buf_release(&b);
	ks_buf_release(&r);
}

int main(void)
{
	test_code();
	test_json();
	test_correction();
	test_fuzz();
	return tap_done();
}
