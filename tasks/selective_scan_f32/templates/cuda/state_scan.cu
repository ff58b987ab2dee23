/* @ksearch
family: warp-scan-state-outer
summary: "one warp per channel walks the sequence in tiles of 32 * ITEMS steps; inside a tile each lane owns ITEMS consecutive steps and the states are visited one after another (UNR at a time): the lane's (decay, state) pairs get an in-register inclusive scan, the lanes' totals a warp-shuffle scan, the carry from the previous tile closes the chain, and y accumulates C.h at once, so nothing is scanned twice and only the carry per state lives across tiles; several channels per block share B and C through L1"
rating: 8
difficulty: 4
knobs:
  ITEMS: {values: [4, 8, 16, 32], default: 8, summary: "consecutive steps per lane; more items, fewer shuffle levels per step, more registers", impacts: {register_pressure: 8, compute_hw_fit: 7}}
  CPB: {values: [1, 2, 4, 8, 16, 32], default: 8, summary: "channels per block, sharing B and C tiles (through L1 for PF 0, shared memory otherwise); 16 and 32 only with PF 2, whose shared memory does not grow with CPB", impacts: {memory_bandwidth: 5, compute_hw_fit: 3}}
  UNR: {values: [1, 2, 4], default: 2, summary: "states interleaved in one pass over the items: independent chains for the scheduler, more registers", impacts: {register_pressure: 7, compute_hw_fit: 6}}
  VEC: {values: [2, 4, 8], default: 8, summary: "values per vector load and store (f16: 8 = 16 bytes; f32: 4 = 16 bytes, 8 = two such loads); rows whose length is no multiple fall back to scalar accesses", impacts: {memory_bandwidth: 6}}
  PF: {values: [0, 1, 2], default: 1, summary: "1 stages the next tile's B, C (shared by the block's channels) and u, delta, z in shared memory with cp.async while the current tile is computed (two buffers, one barrier per tile); 2 stages only B and C there and keeps each lane's next u, delta, z in registers (float pairs, loaded one tile ahead), so a block needs 256 * TILE bytes whatever CPB and several blocks fit on one SM; 0 loads each state's rows when it is needed", impacts: {memory_bandwidth: 7, compute_hw_fit: 5}}
  MINB: {values: [1, 2, 3, 4], default: 1, summary: "blocks per SM the PF >= 1 kernel is compiled for (the second __launch_bounds__ argument): caps registers at 64K / (MINB * 32 * CPB * SPLIT) so that many blocks fit, at the price of spills when the cap is low", impacts: {register_pressure: 8, compute_hw_fit: 6}}
  SPLIT: {values: [1, 2, 4], default: 1, summary: "warps per channel (PF >= 1), each scanning 16 / SPLIT of the states; parts 1.. write their C.h sums to their own shared rows once per tile (conflict-free, no atomics) and part 0 adds them. Measured on an H200 at b1 L2048 (docs/results/cuda-selective_scan-occupancy.md): the float shared-memory atomics this replaced made ITEMS 16 CPB 4 SPLIT 2 3.2x slower (414 against 130 us); it is still about 2x slower than CPB 8 SPLIT 1, which has the same warps per block and twice the channels", impacts: {compute_hw_fit: 3, register_pressure: 2}}
require:
  - "ITEMS % VEC == 0"
  - "ITEMS * UNR <= 64"
  - "(16 / SPLIT) % UNR == 0"
  - "PF >= 1 || SPLIT == 1"
  - "PF >= 1 || MINB == 1"
  # MINB blocks must fit in 64 warps per SM and leave at least 32 registers a thread
  - "MINB * CPB * SPLIT <= 64"
  - "CPB * SPLIT <= (PF == 2 ? 32 : 8)"
  # two buffers of (32 + 3 CPB for PF 1) rows of TILE floats, the partial sums, s_A2 and s_carry
  # (f32 rows: this wrapper's copy of the block differs from the included file's only here and
  # in PF's summary)
  - "PF == 0 || 2 * (32 + (PF == 1) * 3 * CPB) * 32 * ITEMS * 4 + (SPLIT - 1) * CPB * 32 * ITEMS * 4 + 2 * CPB * 16 * 4 <= 227 * 1024"
@end */
/* selective scan with f32 activations: selective_scan's templates/cuda/state_scan.cu with
 * SS_F32 1. The block above is that file's with the shared-memory bound for 4-byte rows (a
 * require expression cannot see the element type, and the first block of a file is its knob
 * block); the included file's own block, below, is then a plain comment.
 * tests/cli/t0153-scan-f32.sh checks the two agree elsewhere. */
#define SS_GATE 1
#define SS_F32 1
#define SS_FN selective_scan_f32
// @ksearch include: ../../../selective_scan/templates/cuda/state_scan.cu
