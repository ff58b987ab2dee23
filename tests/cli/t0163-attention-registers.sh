#!/usr/bin/env bash
# needs: nvcc (no GPU: the check reads the PTX nvcc writes for sm_90a)
# The warp-specialised attention kernel hands registers from its producer warpgroup to its
# consumers with setmaxnreg.  setmaxnreg.inc takes them from the CTA's own pool and spins
# until they are there: if the producer's count plus the consumers' exceeds what the CTA got
# at launch (65536 / threads, in steps of 8), the consumers wait on the SM's spare registers,
# and the kernel hangs whenever something else holds them (through MLX's CUDA build on an
# H100, every launch: docs/results/mlx-attention-h100.md).  For each warpgroup count and TMA
# mode of templates/cuda/flash_wgmma.cu, this reads the PTX's .maxntid and setmaxnreg values
# and checks producer + WG x consumer <= (WG + 1) x launch registers.  Fails on 4400432
# (TMA 2, WG 2: 32 + 2 x 240 > 3 x 168).
. "$(dirname "$0")/lib.sh"
NVCC=${KSEARCH_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || skip_rest "no nvcc here"
T=$ROOT/tasks/attention/templates/cuda/flash_wgmma.cu

check() { # check WG TMA: the handed-over registers fit the launch allocation
	local ptx=$TMP/wg$1-tma$2.ptx
	if ! "$NVCC" -ptx -gencode arch=compute_90a,code=compute_90a -I"$ROOT/include" -DWG="$1" \
		-DBN=128 -DSTAGES=2 -DOVL=0 -DWS=1 -DPERSIST=1 -DTMA="$2" -DQREG=0 -x cu "$T" \
		-o "$ptx" 2>"$TMP/err"; then
		sed 's/^/# /' "$TMP/err" | head -20
		ok 1 "WG $1 TMA $2 compiles to PTX"
		return
	fi
	python3 - "$ptx" "$1" <<'PY'
import re, sys
ptx, wg = open(sys.argv[1]).read(), int(sys.argv[2])
bad = 0
# every entry with setmaxnreg: its .maxntid and the dec (producer) / inc (consumer) counts
starts = [m.start() for m in re.finditer(r"\.entry\s", ptx)] + [len(ptx)]
seen = 0
for a, b in zip(starts, starts[1:]):
    body = ptx[a:b]
    m = re.match(r"\.entry\s+([\w$]+)", body)
    dec = re.findall(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+(\d+)", body)
    inc = re.findall(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+(\d+)", body)
    nt = re.search(r"\.maxntid\s+(\d+)", body)
    if not dec or not inc or not nt:
        continue
    threads = int(nt.group(1))
    launch = min(65536 // threads // 8 * 8, 248)
    need = int(dec[0]) * 128 + int(inc[0]) * 128 * wg
    have = launch * threads
    print("# %s: %d threads, producer %s, consumers %s: %d of %d registers"
          % (m.group(1)[:40], threads, dec[0], inc[0], need, have))
    bad += need > have
    seen += 1
if not seen:
    print("# no warp-specialised entry (setmaxnreg) in the PTX: nothing checked")
sys.exit(1 if bad or not seen else 0)
PY
	ok $? "WG $1 TMA $2: setmaxnreg asks no more registers than the CTA holds"
}
for wg in 1 2 3; do
	for tma in 0 2; do
		check $wg $tma
	done
done
done_testing
