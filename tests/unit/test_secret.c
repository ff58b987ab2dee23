/* One secret registry: a key registered through the LLM client is hidden by the store and
 * the other way round; short values are ignored; names; in-place scrub. */
#include <stdio.h>
#include <string.h>

#include "ksearch/llm.h"
#include "ksearch/secret.h"
#include "ksearch/store.h"
#include "tap.h"

static void redacts(const char *in, const char *want, const char *name)
{
	struct ks_buf b;
	ks_buf_init(&b, 0);
	is_int(ks_secret_redact(in, strlen(in), &b), 0, "redact returns 0");
	is_str(ks_buf_str(&b), want, name);
	ks_buf_release(&b);
}

int main(void)
{
	ks_secret_clear();
	/* one registry, one name to register with: what the LLM client's side registers is
	 * hidden by the store's redaction, and the other way round */
	struct ks_llm c;
	ks_llm_init(&c, NULL);
	ks_secret_add("llm-key-0123456789");
	struct ks_buf b;
	ks_buf_init(&b, 0);
	is_int(ks_redact("key llm-key-0123456789 here", &b), 0, "store redaction runs");
	is_str(ks_buf_str(&b), "key [REDACTED] here",
	       "a key registered beside the LLM client is hidden by the store");
	ks_buf_release(&b);
	ks_llm_release(&c);

	is_int(ks_secret_add("store-key-abcdefgh"), 0, "register another");
	ks_buf_init(&b, 0);
	const char s[] = "a store-key-abcdefgh b";
	is_int(ks_secret_redact(s, sizeof(s) - 1, &b), 0, "the registry's redaction runs");
	is_str(ks_buf_str(&b), "a [REDACTED] b", "and hides it in what the LLM client records");
	ks_buf_release(&b);

	redacts("short1 short1", "short1 short1", "values under KS_SECRET_MIN are ignored");
	ks_secret_add("short1");
	redacts("short1", "short1", "even when added");
	redacts("llm-key-0123456789llm-key-0123456789", "[REDACTED][REDACTED]", "back to back");

	char msg[32];
	snprintf(msg, sizeof(msg), "bad key store-key-abcdefgh!");
	ks_secret_scrub(msg, sizeof(msg));
	const char *m = msg;
	is_str(m, "bad key [REDACTED]!", "scrub in place");
	snprintf(msg, sizeof(msg), "%s", "x store-key-abcdefgh y z w v u");
	ks_secret_scrub(msg, 16);
	ok(strlen(msg) < 16 && !strstr(msg, "store-key"), "scrub cuts to the buffer ('%s')", msg);

	ok(ks_secret_name("OPENAI_API_KEY=x") && ks_secret_name("hf_token") &&
		   ks_secret_name("DB_PASSWORD") && ks_secret_name("GOOGLE_APPLICATION_CREDENTIALS"),
	   "secret-looking names");
	ok(!ks_secret_name("PATH=/usr/bin") && !ks_secret_name("OMP_NUM_THREADS") &&
		   !ks_secret_name("HOME"),
	   "ordinary names");
	char *envp[] = {"MY_TOKEN=envtoken-7777", "LANG=C.UTF-8", NULL};
	is_int(ks_secret_add_env(envp), 0, "register from an environment");
	redacts("envtoken-7777 C.UTF-8", "[REDACTED] C.UTF-8", "its secret values only");

	ks_secret_clear();
	redacts("store-key-abcdefgh", "store-key-abcdefgh", "clear forgets them");
	return tap_done();
}
