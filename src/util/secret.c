#include "ksearch/secret.h"
#include "ksearch/error.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REDACTED "[REDACTED]"

static pthread_mutex_t secrets_mu = PTHREAD_MUTEX_INITIALIZER;
static char *secrets[KS_SECRET_MAX];
static size_t secret_len[KS_SECRET_MAX];
static size_t nsecrets;

int ks_secret_add(const char *value)
{
	if (!value || strlen(value) < KS_SECRET_MIN)
		return 0;
	int rc = 0;
	pthread_mutex_lock(&secrets_mu);
	for (size_t i = 0; i < nsecrets; i++)
		if (!strcmp(secrets[i], value))
			goto out;
	if (nsecrets == KS_SECRET_MAX) {
		rc = KS_ELIMIT;
		goto out;
	}
	secrets[nsecrets] = strdup(value);
	if (!secrets[nsecrets]) {
		rc = KS_ENOMEM;
	} else {
		secret_len[nsecrets] = strlen(value);
		nsecrets++;
	}
out:
	pthread_mutex_unlock(&secrets_mu);
	return rc;
}

int ks_secret_name(const char *name)
{
	static const char *const needles[] = {"KEY",	    "TOKEN", "SECRET", "PASSWORD", "PASSWD",
					      "CREDENTIAL", "AUTH",  "COOKIE", "SESSION"};
	char up[256];
	size_t n = 0;
	for (; name[n] && name[n] != '=' && n < sizeof(up) - 1; n++)
		up[n] = (char)toupper((unsigned char)name[n]);
	up[n] = '\0';
	for (size_t i = 0; i < sizeof(needles) / sizeof(needles[0]); i++)
		if (strstr(up, needles[i]))
			return 1;
	return 0;
}

int ks_secret_add_env(char *const *envp)
{
	for (; envp && *envp; envp++) {
		const char *eq = strchr(*envp, '=');
		if (!eq || !ks_secret_name(*envp))
			continue;
		int rc = ks_secret_add(eq + 1);
		if (rc)
			return rc;
	}
	return 0;
}

void ks_secret_clear(void)
{
	pthread_mutex_lock(&secrets_mu);
	for (size_t i = 0; i < nsecrets; i++)
		free(secrets[i]);
	nsecrets = 0;
	pthread_mutex_unlock(&secrets_mu);
}

/* length of the registered value at text[i], 0 when none; called under the lock */
static size_t secret_at(const char *text, size_t len, size_t i)
{
	for (size_t k = 0; k < nsecrets; k++) {
		size_t sl = secret_len[k];
		if (text[i] == secrets[k][0] && sl <= len - i && !memcmp(text + i, secrets[k], sl))
			return sl;
	}
	return 0;
}

int ks_secret_redact(const char *text, size_t len, struct ks_buf *out)
{
	size_t start = 0;
	if (!text)
		return ks_buf_add(out, "", 0);
	pthread_mutex_lock(&secrets_mu);
	for (size_t i = 0; i < len;) {
		size_t hit = secret_at(text, len, i);
		if (!hit) {
			i++;
			continue;
		}
		ks_buf_add(out, text + start, i - start);
		ks_buf_adds(out, REDACTED);
		i += hit;
		start = i;
	}
	pthread_mutex_unlock(&secrets_mu);
	ks_buf_add(out, text + start, len - start);
	return ks_buf_failed(out);
}

void ks_secret_scrub(char *s, size_t size)
{
	if (!s || !size)
		return;
	struct ks_buf b;
	ks_buf_init(&b, 0);
	if (ks_secret_redact(s, strlen(s), &b) == 0)
		snprintf(s, size, "%s", ks_buf_str(&b));
	else
		snprintf(s, size, "%s", "[message dropped: it could not be redacted]");
	ks_buf_release(&b);
}
