// selective scan without the z gate: selective_scan's templates/cuda/sequential.cu with SS_GATE 0
#define SS_GATE 0
#define SS_FN selective_scan_nogate
// @ksearch include: ../../../selective_scan/templates/cuda/sequential.cu
