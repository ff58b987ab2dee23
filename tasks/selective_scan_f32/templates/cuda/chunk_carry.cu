/* @ksearch
family: chunk-carry
summary: "parallel over the sequence inside one launch: a tile of WPC * 32 * ITEMS steps of a channel is split across WPC warps (each lane owns ITEMS consecutive steps); per state the lane walks its steps once from h = 0 keeping exp(dt A) and dt u B in registers, a warp-shuffle scan and a shared-memory combine of the WPC warp totals (one barrier per group of UNR states) give every lane its true start state, and a second walk over the kept values accumulates C.h: one exp per (state, step), no rescan of the inputs; B and C tiles are staged by cp.async one tile ahead and shared by CPB channels, u, delta and z are prefetched into registers one tile ahead; POLY states per group take a polynomial exp2 on the FMA pipe instead of MUFU"
rating: 8
difficulty: 4
knobs:
  WPC: {values: [1, 2, 4], default: 2, summary: "warps per channel splitting each tile along the sequence; more warps in flight at batch 1, one block barrier per state group when > 1", impacts: {compute_hw_fit: 8, register_pressure: 2}}
  ITEMS: {values: [4, 8, 16], default: 8, summary: "consecutive steps per lane; fewer scan levels per step, more registers", impacts: {register_pressure: 8, compute_hw_fit: 6}}
  CPB: {values: [1, 2, 4, 8], default: 4, summary: "channels per block sharing the staged B and C tiles", impacts: {memory_bandwidth: 5, compute_hw_fit: 3}}
  UNR: {values: [1, 2, 4], default: 2, summary: "states per group: independent chains between barriers, more registers", impacts: {register_pressure: 7, compute_hw_fit: 6}}
  POLY: {values: [0, 1, 2], default: 0, summary: "states of each group whose exp2 is a degree-5 polynomial (FMA pipe) instead of MUFU ex2", impacts: {compute_hw_fit: 5}}
  PFR: {values: [0, 1], default: 1, summary: "1 loads the next tile's u, delta and z into registers during this tile (16 bytes per lane and row more registers); 0 loads this tile's while its B and C staging is awaited", impacts: {register_pressure: 5, memory_bandwidth: 4}}
  VEC: {values: [2, 4, 8], default: 8, summary: "values per global vector load and store of u, delta, z and y (f16: 8 = 16 bytes; f32: 4 = 16 bytes, 8 = two such loads); rows whose length is no multiple fall back to scalar accesses", impacts: {memory_bandwidth: 6}}
require:
  - "ITEMS % VEC == 0"
  - "POLY <= UNR"
  - "ITEMS * UNR <= 64"
  - "32 * WPC * CPB <= 512"
  # two buffers of 32 rows of TILE floats (f32 rows: this wrapper's copy of the block differs
  # from the included file's only here)
  - "256 * 32 * WPC * ITEMS <= 227 * 1024"
@end */
/* selective scan with f32 activations: selective_scan's templates/cuda/chunk_carry.cu with
 * SS_F32 1. The block above is that file's with the shared-memory bound for 4-byte rows (a
 * require expression cannot see the element type, and the first block of a file is its knob
 * block); the included file's own block, below, is then a plain comment.
 * tests/cli/t0153-scan-f32.sh checks the two agree elsewhere. */
#define SS_GATE 1
#define SS_F32 1
#define SS_FN selective_scan_f32
// @ksearch include: ../../../selective_scan/templates/cuda/chunk_carry.cu
