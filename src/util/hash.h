/* Content hashing (SHA-256) for the compile cache, candidate identity and reference caches. */
#ifndef KS_UTIL_HASH_H
#define KS_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

struct ks_sha256 {
	uint32_t h[8];
	uint64_t nbytes;
	uint8_t block[64];
	size_t used;
};

void ks_sha256_init(struct ks_sha256 *s);
void ks_sha256_update(struct ks_sha256 *s, const void *data, size_t n);
/* also feeds a length prefix so ("ab","c") and ("a","bc") hash differently */
void ks_sha256_update_str(struct ks_sha256 *s, const char *str);
void ks_sha256_final(struct ks_sha256 *s, uint8_t out[32]);
/* lowercase hex of the digest, 65 bytes with the terminator */
void ks_sha256_hex(struct ks_sha256 *s, char out[65]);
/* one-shot helper */
void ks_sha256_str_hex(const char *str, char out[65]);

#endif
