// selective scan with f32 activations: selective_scan's reference.c with SS_F32 1
#define SS_GATE 1
#define SS_F32 1
#define SS_FN selective_scan_f32
// @ksearch include: ../selective_scan/reference.c
