#include "util/json.h"
#include "ksearch/error.h"

static int to_buf(const char *text, size_t n, void *ctx)
{
	return ks_buf_add(ctx, text, n) ? -1 : 0;
}

int ks_json_to_buf(const json_t *j, size_t flags, struct ks_buf *out)
{
	if (!j)
		return KS_ENOMEM; /* a constructor that failed upstream */
	if (json_dump_callback(j, to_buf, out, flags))
		return ks_buf_failed(out) ? ks_buf_failed(out) : KS_ENOMEM;
	return ks_buf_add(out, "", 0); /* terminated, also when j dumps to nothing */
}
