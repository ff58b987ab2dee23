/* Kernel languages that have no backend yet: `ksearch tasks show --backend metal` prints
 * their prototype (docs/abi.md).  A backend that adopts one points its abi slot here. */
#include "backend/backends.h"

/* Metal Shading Language: tensors and params bound to buffers in task order, the thread
 * position supplied by the dispatch; no shim (the backend binds the buffers itself) */
const struct ks_abi ks_abi_metal = {
	.lang = "metal",
	.ctype = {[KS_DT_F32] = "float", [KS_DT_F64] = "double", [KS_DT_F16] = "half",
		  [KS_DT_BF16] = "bfloat", [KS_DT_I32] = "int", [KS_DT_I64] = "long"},
	.ret = "kernel void",
	.tensor_space = "device ",
	.param_space = "constant ",
	.slot_attr = " [[buffer(%d)]]",
	.trailing = "uint3 tid [[thread_position_in_grid]]",
	.no_shim = 1,
};
