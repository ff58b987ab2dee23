/* selective scan with f32 activations: selective_scan's templates/cuda/state_scan.cu with SS_F32 1
 * (its shared-memory bound counts sizeof.B / sizeof.u, 4 bytes here) */
#define SS_GATE 1
#define SS_F32 1
#define SS_FN selective_scan_f32
// @ksearch include: ../../../selective_scan/templates/cuda/state_scan.cu
