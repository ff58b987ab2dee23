/* Naive matmul_bf16: each element a float dot product of the widened bf16 inputs, i-j-p loop
 * order, one thread, rounded to bf16 at the end. */
#include <stdint.h>
#include <string.h>

static float bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint16_t float_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

void matmul_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, int32_t m, int32_t n,
		 int32_t k)
{
	for (int32_t i = 0; i < m; i++)
		for (int32_t j = 0; j < n; j++) {
			float s = 0.0f;
			for (int32_t p = 0; p < k; p++)
				s += bf16_to_float(a[(int64_t)i * k + p]) *
				     bf16_to_float(b[(int64_t)p * n + j]);
			c[(int64_t)i * n + j] = float_to_bf16(s);
		}
}
