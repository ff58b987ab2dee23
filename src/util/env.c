#include "util/env.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const struct ks_env_var vars[] = {
#define KS_ENV_ROW(field, name, what, dflt) {name, what, dflt},
	KS_ENV_VARS(KS_ENV_ROW)
#undef KS_ENV_ROW
};

static struct ks_env env;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* copies: a later setenv of the same variable must not change or free what callers hold */
static void read_env(void)
{
#define KS_ENV_READ(field, name, what, dflt)                                                 \
	free((char *)env.field);                                                             \
	env.field = getenv(name) ? strdup(getenv(name)) : NULL;
	KS_ENV_VARS(KS_ENV_READ)
#undef KS_ENV_READ
}

const struct ks_env *ks_env_get(void)
{
	pthread_once(&once, read_env);
	return &env;
}

void ks_env_reload(void)
{
	pthread_once(&once, read_env);
	read_env();
}

const struct ks_env_var *ks_env_vars(int *n)
{
	*n = (int)(sizeof(vars) / sizeof(vars[0]));
	return vars;
}
