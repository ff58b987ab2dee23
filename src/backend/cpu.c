/* The cpu backend: kernels are C, compiled with the system compiler into a shared
 * library and run by ksearch-runner in the sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backends.h"
#include "util/env.h"
#include "util/os.h"

static const char *cpu_compiler(void)
{
	const char *cc = ks_env_get()->cc;
	if (!cc || !cc[0])
		cc = ks_env_get()->cc_env;
	return cc && cc[0] ? cc : "cc";
}

static int cpu_probe(char *why, size_t n)
{
	return 0;
}

static int cpu_compile(const struct ks_compile_req *req, struct ks_artifact *a,
		       struct ks_error *e)
{
	char flags[2048];
	/* -z defs: a missing entry point or symbol is a compile error, not a load failure */
	snprintf(flags, sizeof(flags), "%s " KS_OS_CC_SHARED,
		 req->flags ? req->flags : ks_backend_cpu.default_flags);
	return ks_compile_shared(&ks_backend_cpu, cpu_compiler(), flags, req, a, e);
}

static int cpu_describe(struct ks_buf *out)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return ks_buf_addf(out, "host CPU, %ld cores", cores);
}

/* C11: bf16 is its bit pattern (convert with ksearch/kernel.h), f16 is _Float16 */
const struct ks_abi ks_abi_c = {
	.lang = "c",
	.ctype = {[KS_DT_F32] = "float", [KS_DT_F64] = "double", [KS_DT_F16] = "_Float16",
		  [KS_DT_BF16] = "uint16_t", [KS_DT_I32] = "int32_t", [KS_DT_I64] = "int64_t"},
};

const struct ks_backend_i ks_backend_cpu = {
	.version = KS_BACKEND_VERSION,
	.name = "cpu",
	.lang = "c",
	.ext = "c",
	.default_flags = KS_OS_CC_FLAGS,
	.probe = cpu_probe,
	.compile = cpu_compile,
	.runner = "ksearch-runner",
	.describe_target = cpu_describe,
	.abi = &ks_abi_c,
	.sandbox = NULL,          /* the base rules, address space limited */
	.detect_spec = NULL,      /* the host's spec comes from 'ksearch spec detect' */
	.device_reference = NULL, /* reference.c is the reference */
	.on_host = 1,
};
