/* What a backend's kernels are, in words: the one description of a kernel file's ABI that
 * `ksearch tasks show` and the LLM prompts both print (they drifted apart when each wrote
 * its own), and the flavour of kernel the runtime here compiles. */
#include "ksearch/backend.h"

int ks_abi_describe(const char *name, const struct ks_task *t, const char *flavour,
		    struct ks_buf *out)
{
	const struct ks_abi *abi = ks_abi_find(name);
	if (!abi)
		return KS_EINVAL;
	/* a backend whose kernels are not one typed function (mlx) describes its own */
	const struct ks_backend_i *be = ks_backend_find(name);
	if (be && be->describe_abi)
		return be->describe_abi(t, flavour, out);
	return ks_abi_prototype(abi, t, out);
}

const char *ks_backend_flavour(const struct ks_backend_i *b)
{
	if (!b)
		return NULL;
	return b->flavour ? b->flavour() : ks_backend_abi(b)->lang;
}

int ks_backend_translates_cuda(const struct ks_backend_i *b)
{
	return b && b->translates_cuda;
}
