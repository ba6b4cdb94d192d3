/* SHA-256 as specified in FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 6.2). */
#include "sha256.h"

#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t state[8], const uint8_t block[64]) {
  uint32_t w[64];
  for (int t = 0; t < 16; t++)
    w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
           (uint32_t)block[4 * t + 2] << 8 | (uint32_t)block[4 * t + 3];
  for (int t = 16; t < 64; t++) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int t = 0; t < 64; t++) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void mb_sha256_init(mb_sha256 *h) {
  static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(h->state, H0, sizeof H0);
  h->length = 0;
  h->fill = 0;
}

void mb_sha256_update(mb_sha256 *h, const void *data, size_t n) {
  const uint8_t *p = data;
  h->length += (uint64_t)n;
  if (h->fill) {
    size_t take = 64 - h->fill < n ? 64 - h->fill : n;
    memcpy(h->block + h->fill, p, take);
    h->fill += take;
    p += take;
    n -= take;
    if (h->fill < 64) return;
    compress(h->state, h->block);
    h->fill = 0;
  }
  for (; n >= 64; p += 64, n -= 64) compress(h->state, p);
  memcpy(h->block, p, n);
  h->fill = n;
}

void mb_sha256_final(mb_sha256 *h, uint8_t digest[32]) {
  uint64_t bits = h->length * 8; /* message length mod 2^64 bits, as the standard pads */
  static const uint8_t pad[64] = {0x80};
  size_t padlen = h->fill < 56 ? 56 - h->fill : 120 - h->fill;
  uint64_t saved = h->length;
  mb_sha256_update(h, pad, padlen);
  uint8_t len[8];
  for (int i = 0; i < 8; i++) len[i] = (uint8_t)(bits >> (56 - 8 * i));
  mb_sha256_update(h, len, 8);
  h->length = saved;
  for (int i = 0; i < 8; i++) {
    digest[4 * i] = (uint8_t)(h->state[i] >> 24);
    digest[4 * i + 1] = (uint8_t)(h->state[i] >> 16);
    digest[4 * i + 2] = (uint8_t)(h->state[i] >> 8);
    digest[4 * i + 3] = (uint8_t)h->state[i];
  }
}

void mb_sha256_digest_hex(const uint8_t digest[32], char out[65]) {
  static const char HEX[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    out[2 * i] = HEX[digest[i] >> 4];
    out[2 * i + 1] = HEX[digest[i] & 15];
  }
  out[64] = '\0';
}

void mb_sha256_hex(const void *data, size_t n, char out[65]) {
  mb_sha256 h;
  uint8_t digest[32];
  mb_sha256_init(&h);
  mb_sha256_update(&h, data, n);
  mb_sha256_final(&h, digest);
  mb_sha256_digest_hex(digest, out);
}

void mb_sha256_update_reversed(mb_sha256 *h, const void *x, int64_t n, size_t size) {
  unsigned char stage[4096];
  const unsigned char *p = x;
  size_t per = sizeof stage / size, at = 0;
  for (int64_t i = 0; i < n; i++, p += size) {
    for (size_t b = 0; b < size; b++) stage[at * size + b] = p[size - 1 - b];
    if (++at == per || i == n - 1) {
      mb_sha256_update(h, stage, at * size);
      at = 0;
    }
  }
}

void mb_sha256_le_hex(const void *x, int64_t n, size_t size, char hex[65]) {
  mb_sha256 h;
  mb_sha256_init(&h);
  const uint16_t probe = 1;
  if (size == 1 || *(const unsigned char *)&probe == 1) {
    if (n > 0) mb_sha256_update(&h, x, (size_t)n * size);
  } else { /* a big-endian host */
    mb_sha256_update_reversed(&h, x, n, size);
  }
  uint8_t d[32];
  mb_sha256_final(&h, d);
  mb_sha256_digest_hex(d, hex);
}
