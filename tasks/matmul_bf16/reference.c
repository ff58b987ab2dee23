/* Ground truth for matmul_bf16: every product of the bf16 inputs summed in double in the
 * order p = 0, 1, ..., k-1, rounded to float and then to bf16 (round to nearest even) once.
 * reference.cu does exactly the same on the GPU; t0400 checks they agree bit for bit. */
#include <stdint.h>
#include <string.h>

static double bf16_to_double(uint16_t h)
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
		return (uint16_t)((u >> 16) | 0x40); /* NaN stays NaN */
	u += 0x7fffu + ((u >> 16) & 1u);     /* round to nearest, ties to even */
	return (uint16_t)(u >> 16);
}

void matmul_bf16(const uint16_t *a, const uint16_t *b, uint16_t *c, int32_t m, int32_t n,
		 int32_t k)
{
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0.0;
			for (int64_t p = 0; p < k; p++)
				s += bf16_to_double(a[i * k + p]) * bf16_to_double(b[p * n + j]);
			c[i * n + j] = float_to_bf16((float)s);
		}
}
