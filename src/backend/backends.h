/* The backends compiled into this build (registered in registry.c). */
#ifndef KS_BACKEND_BACKENDS_H
#define KS_BACKEND_BACKENDS_H

#include "ksearch/backend.h"

extern const struct ks_backend_i ks_backend_cpu;
extern const struct ks_backend_i ks_backend_cuda;
extern const struct ks_backend_i ks_backend_mlx;

/* shared by the C-compiling backends: compile source + shim into a cached shared library
 * with compiler argv built from cc, flags, defines and the include directory */
int ks_compile_shared(const char *backend, const char *compiler, const char *lang,
		      const char *ext, const char *flags, const struct ks_compile_req *req,
		      struct ks_artifact *a, struct ks_error *e);

#endif
