/* ks_redact: credentials go, kernel code and prose stay byte for byte. */
#include <stdio.h>
#include <string.h>

#include "ksearch/secret.h"
#include "ksearch/store.h"
#include "tap.h"

/* tap.h's is_int evaluates its arguments twice: calls go through here */
#define is_rc(call, want, name)                                                          \
	do {                                                                             \
		long long rc_ = (call);                                                  \
		is_int(rc_, want, name);                                                 \
	} while (0)

static void check(const char *in, const char *want, const char *name)
{
	struct ks_buf b = KS_BUF_INIT;
	int rc = ks_redact(in, &b);
	is_int(rc, 0, "ks_redact returns 0");
	is_str(ks_buf_str(&b), want, name);
	ks_buf_release(&b);
}

int main(void)
{
	check("key sk-abcdefghijklmnop1234 end", "key [REDACTED] end", "sk- key");
	check("sk-proj-AbCdEf0123456789_xyz-QQ", "[REDACTED]", "sk-proj key");
	check("Authorization: Bearer abc123def456ghi789", "Authorization: Bearer [REDACTED]",
	      "bearer token");
	check("{\"api_key\": \"A1b2C3d4E5f6\", \"n\": 3}", "{\"api_key\": \"[REDACTED]\", \"n\": 3}",
	      "json api_key value");
	check("curl -H 'x-api-key: Zz9Zz9Zz9Zz9'", "curl -H 'x-api-key: [REDACTED]'",
	      "x-api-key header");
	check("key=zz9zz9zz9zz9&x=1", "key=[REDACTED]&x=1", "key=value");
	check("OPENAI_API_KEY=sk-abcdefghijklmnopqrstu", "OPENAI_API_KEY=[REDACTED]",
	      "env assignment");
	check("token ghp_abcdefghijklmnopqrstuvwxyz0123 x", "token [REDACTED] x", "github token");
	check("AIzaSyA1234567890abcdefghijklmnopqrstu", "[REDACTED]", "google key");

	const char *code = "float key = k_tile0[i];\n"
			   "int token = idx + 1;\n"
			   "const char *secret = get_secret2(2);\n"
			   "for (int k = 0; k < 16; k++) acc += key * 0.5f;\n"
			   "\"max_tokens\": 4096, \"prompt_tokens\": 1234567890\n"
			   "The bearer of bad news; basic algorithm 2x faster.\n"
			   "task-sk-1 and risk-free sk-short\n";
	check(code, code, "kernel code and prose are kept");

	is_rc(ks_secret_add("s3cr3t-value-xyz"), 0, "register secret");
	check("a s3cr3t-value-xyz b xs3cr3t-value-xyzx", "a [REDACTED] b x[REDACTED]x",
	      "registered secret anywhere");
	ks_secret_add("abc");
	check("abc abc", "abc abc", "short secrets are ignored");

	char *envp[] = {"HF_TOKEN=tokenvalue-0001", "MY_API_KEY=plainvalueAAA", "PATH=/usr/local/bin",
			"DB_PASSWORD=correcthorse", NULL};
	is_rc(ks_secret_add_env(envp), 0, "register env secrets");
	check("t=tokenvalue-0001 k=plainvalueAAA p=/usr/local/bin w=correcthorse",
	      "t=[REDACTED] k=[REDACTED] p=/usr/local/bin w=[REDACTED]",
	      "env secrets redacted, other variables kept");

	ks_secret_clear();
	check("s3cr3t-value-xyz", "s3cr3t-value-xyz", "cleared secrets are kept");

	struct ks_buf small;
	ks_buf_init(&small, 4);
	ok(ks_redact("sk-abcdefghijklmnop1234 long text", &small) == KS_ELIMIT,
	   "output cap is honoured");
	ks_buf_release(&small);
	return tap_done();
}
