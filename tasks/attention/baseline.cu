/* Naive CUDA attention, the search's starting point: materialise the scores, softmax, P V.
 * For a group of heads at a time: S = scale * Q K^T into a float workspace (one warp per
 * score, dot product straight from global memory), a row softmax (one thread per row, three
 * passes, expf), then O = P V (one thread per output element).  Masked scores are not
 * stored: each row is read only up to its last visible key.  The workspace (at most 1 GiB,
 * fewer heads per group when a head's scores are larger) is allocated on the first call and
 * kept, so timed calls do not allocate.  Query head h reads kv head h / (heads / kv_heads);
 * the causal mask is top-left aligned: query i sees keys 0..i (all kv_seqlen when i is past
 * them). */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

/* The element type of q, k, v, o.  A variant's wrapper (tasks/attention_bf16/baseline.cu)
 * defines ATTN_BF16 1 and its entry point's name before including this file. */
#ifndef ATTN_BF16
#define ATTN_BF16 0
#define ATTN_FN attention
#endif

#if ATTN_BF16
#include <cuda_bf16.h>
#define ATTN_T __nv_bfloat16
#define ATTN_LOAD(x) __bfloat162float(x)
#define ATTN_STORE(f) __float2bfloat16_rn(f)
#else
#define ATTN_T __half
#define ATTN_LOAD(x) __half2float(x)
#define ATTN_STORE(f) __float2half_rn(f)
#endif

#define WS_BYTES ((size_t)1 << 30)

/* the kv head that query head bh = b * heads + h reads */
__device__ static int64_t kv_head(int64_t bh, int heads, int kv_heads)
{
	return bh / heads * kv_heads + bh % heads / (heads / kv_heads);
}

/* keys query i sees */
__device__ static int visible(int64_t i, int kv_seqlen, int causal)
{
	return causal && i + 1 < kv_seqlen ? (int)i + 1 : kv_seqlen;
}

/* heads h0 .. h0 + gridDim.z - 1 of all batch * heads; s holds the group's rows, kv_seqlen
 * floats each */
__global__ void attn_scores(const ATTN_T *q, const ATTN_T *k, float *s, int64_t h0, int heads,
			    int kv_heads, int seqlen, int kv_seqlen, int hd, int causal,
			    float scale)
{
	/* one warp per score, lanes over head_dim, so q and k rows are read coalesced */
	const int64_t j = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	const int64_t i = blockIdx.y, h = blockIdx.z;
	const int lane = threadIdx.x & 31;
	if (j >= visible(i, kv_seqlen, causal))
		return;
	const int64_t bh = h0 + h;
	const ATTN_T *qi = q + (bh * seqlen + i) * hd;
	const ATTN_T *kj = k + (kv_head(bh, heads, kv_heads) * kv_seqlen + j) * hd;
	float dot = 0.0f;
	for (int d = lane; d < hd; d += 32)
		dot += ATTN_LOAD(qi[d]) * ATTN_LOAD(kj[d]);
	for (int off = 16; off > 0; off >>= 1)
		dot += __shfl_xor_sync(0xffffffffu, dot, off);
	if (lane == 0)
		s[(h * seqlen + i) * kv_seqlen + j] = dot * scale;
}

__global__ void attn_softmax(float *s, int64_t rows, int seqlen, int kv_seqlen, int causal)
{
	const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const int n = visible(r % seqlen, kv_seqlen, causal);
	float *row = s + r * kv_seqlen;
	float m = -INFINITY, l = 0.0f;
	for (int j = 0; j < n; j++)
		m = fmaxf(m, row[j]);
	for (int j = 0; j < n; j++) {
		row[j] = expf(row[j] - m);
		l += row[j];
	}
	for (int j = 0; j < n; j++)
		row[j] /= l;
}

__global__ void attn_pv(const float *p, const ATTN_T *v, ATTN_T *o, int64_t h0, int64_t rows,
			int heads, int kv_heads, int seqlen, int kv_seqlen, int hd, int causal)
{
	const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (e >= rows * hd)
		return;
	const int64_t r = e / hd, d = e % hd, bh = h0 + r / seqlen;
	const int n = visible(r % seqlen, kv_seqlen, causal);
	const float *pr = p + r * kv_seqlen;
	const ATTN_T *vh = v + kv_head(bh, heads, kv_heads) * kv_seqlen * hd + d;
	float acc = 0.0f;
	for (int j = 0; j < n; j++)
		acc += pr[j] * ATTN_LOAD(vh[(int64_t)j * hd]);
	o[h0 * seqlen * hd + e] = ATTN_STORE(acc);
}

void ATTN_FN(const ATTN_T *q, const ATTN_T *k, const ATTN_T *v, ATTN_T *o, int32_t batch,
	     int32_t heads, int32_t kv_heads, int32_t seqlen, int32_t kv_seqlen, int32_t head_dim,
	     int32_t causal, cudaStream_t stream)
{
	static float *ws;
	const int64_t bh = (int64_t)batch * heads;
	if (bh <= 0 || seqlen <= 0 || kv_seqlen <= 0 || head_dim <= 0 || kv_heads <= 0 ||
	    heads % kv_heads)
		return;
	const size_t per_head = (size_t)seqlen * kv_seqlen * sizeof(float);
	if (!ws && cudaMalloc((void **)&ws, WS_BYTES) != cudaSuccess)
		return; /* o stays unwritten: the check reports it */
	int64_t group = (int64_t)(WS_BYTES / per_head);
	if (group < 1)
		return; /* a head's scores exceed the workspace (seqlen * kv_seqlen > 2^28) */
	if (group > bh)
		group = bh;
	if (group > 65535)
		group = 65535;
	const float scale = 1.0f / sqrtf((float)head_dim);
	for (int64_t h0 = 0; h0 < bh; h0 += group) {
		const int n = (int)(bh - h0 < group ? bh - h0 : group);
		const int64_t rows = (int64_t)n * seqlen;
		dim3 grid((kv_seqlen + 7) / 8, seqlen, n);
		attn_scores<<<grid, 256, 0, stream>>>(q, k, ws, h0, heads, kv_heads, seqlen,
						      kv_seqlen, head_dim, causal, scale);
		attn_softmax<<<(unsigned)((rows + 127) / 128), 128, 0, stream>>>(
			ws, rows, seqlen, kv_seqlen, causal);
		attn_pv<<<(unsigned)((rows * head_dim + 127) / 128), 128, 0, stream>>>(
			ws, v, o, h0, rows, heads, kv_heads, seqlen, kv_seqlen, head_dim, causal);
	}
}
