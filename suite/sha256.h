/* SHA-256 (FIPS 180-4), for content hashes in results provenance and cache keys. */
#ifndef MB_SHA256_H
#define MB_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct mb_sha256 {
  uint32_t state[8];
  uint64_t length;
  uint8_t block[64];
  size_t fill;
} mb_sha256;

void mb_sha256_init(mb_sha256 *h);
void mb_sha256_update(mb_sha256 *h, const void *data, size_t n);
void mb_sha256_final(mb_sha256 *h, uint8_t digest[32]);
/* One-shot: lowercase hex digest into out (65 bytes incl. NUL). */
void mb_sha256_hex(const void *data, size_t n, char out[65]);
void mb_sha256_digest_hex(const uint8_t digest[32], char out[65]);
/* One-shot over n elements of `size` bytes each (size <= 4096), each taken as
 * little-endian whatever the host's byte order: the same digest on every machine (checkpoint
 * checksums, agent digests). */
void mb_sha256_le_hex(const void *x, int64_t n, size_t size, char hex[65]);
/* Feeds n elements of `size` bytes each (1 <= size <= 4096) with each element's bytes in
 * reverse order: how mb_sha256_le_hex reads them on a big-endian host. A function of its own so
 * that a little-endian machine's tests run it too. */
void mb_sha256_update_reversed(mb_sha256 *h, const void *x, int64_t n, size_t size);

#endif
