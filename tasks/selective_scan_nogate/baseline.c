// selective scan without the z gate: baseline.c of selective_scan with SS_GATE 0
#define SS_GATE 0
#define SS_FN selective_scan_nogate
// @ksearch include: ../selective_scan/baseline.c
