/* SHA-256 against the FIPS 180-2 / NIST example vectors, and streaming in odd-sized pieces. */
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "support.h"

static void test_abc(void **state) {
  (void)state;
  char hex[65];
  mb_sha256_hex("abc", 3, hex);
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_empty(void **state) {
  (void)state;
  char hex[65];
  mb_sha256_hex("", 0, hex);
  assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_448_bits(void **state) {
  (void)state;
  const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  char hex[65];
  assert_int_equal(strlen(m), 56); /* 448 bits: padding spills into a second block */
  mb_sha256_hex(m, strlen(m), hex);
  assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_896_bits(void **state) {
  (void)state;
  const char *m =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlm"
      "nopqrsmnopqrstnopqrstu";
  char hex[65];
  mb_sha256_hex(m, strlen(m), hex);
  assert_string_equal(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_million_a(void **state) {
  (void)state;
  /* Streamed in pieces of 1, 2, ..., so every partial-block path of update() runs. */
  char chunk[1000];
  memset(chunk, 'a', sizeof chunk);
  mb_sha256 h;
  mb_sha256_init(&h);
  size_t done = 0, piece = 1;
  while (done < 1000000) {
    size_t n = piece < 1000000 - done ? piece : 1000000 - done;
    if (n > sizeof chunk) n = sizeof chunk;
    mb_sha256_update(&h, chunk, n);
    done += n;
    piece = piece % 997 + 1;
  }
  uint8_t d[32];
  char hex[65];
  mb_sha256_final(&h, d);
  mb_sha256_digest_hex(d, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_streaming_equals_one_shot(void **state) {
  (void)state;
  unsigned char data[300];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 131 + 7);
  for (size_t n = 0; n <= sizeof data; n++) {
    char one[65], split[65];
    mb_sha256_hex(data, n, one);
    for (size_t cut = 0; cut <= n; cut += 17) {
      mb_sha256 h;
      uint8_t d[32];
      mb_sha256_init(&h);
      mb_sha256_update(&h, data, cut);
      mb_sha256_update(&h, data + cut, n - cut);
      mb_sha256_final(&h, d);
      mb_sha256_digest_hex(d, split);
      assert_string_equal(one, split);
    }
  }
}

/* Elements hash as their little-endian bytes whatever the host's order: the 32-bit words
 * 0x61626364 and 0x65666768 as "dcbahgfe", the 16-bit 0x0102, 0x0304 as 02 01 04 03. */
static void test_little_endian_elements(void **state) {
  (void)state;
  const uint32_t words[2] = {0x61626364u, 0x65666768u};
  const uint16_t halves[2] = {0x0102u, 0x0304u};
  char hex[65];
  mb_sha256_le_hex(words, 2, sizeof *words, hex);
  assert_string_equal(hex, "39f92f18190568d2aebdf866823eb93f005d767c3040fabf1e61c4a94cd34673");
  mb_sha256_le_hex(halves, 2, sizeof *halves, hex);
  assert_string_equal(hex, "d46e520a777bdd374ce8f8e6d650f1270169dd7eb97361846aac9e20c850d724");
  char empty[65];
  mb_sha256_le_hex(words, 0, sizeof *words, hex);
  mb_sha256_hex("", 0, empty);
  assert_string_equal(hex, empty);
}

/* The hex digest of n elements of `size` bytes fed with mb_sha256_update_reversed. */
static void reversed_hex(const void *x, int64_t n, size_t size, char hex[65]) {
  mb_sha256 h;
  uint8_t d[32];
  mb_sha256_init(&h);
  mb_sha256_update_reversed(&h, x, n, size);
  mb_sha256_final(&h, d);
  mb_sha256_digest_hex(d, hex);
}

/* The big-endian host's path, run here too: each element's bytes reversed, in batches of the
 * 4096-byte stage, hashes as the bytes put in that order by hand. */
static void test_reversed_elements(void **state) {
  (void)state;
  char hex[65], want[65];
  reversed_hex("dcbahgfe", 2, 4, hex);
  mb_sha256_hex("abcdefgh", 8, want);
  assert_string_equal(hex, want);

  const size_t sizes[] = {1, 2, 3, 4, 8, 24, 4096};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    size_t size = sizes[k], per = 4096 / size;
    const int64_t counts[] = {
        0, 1, 2, (int64_t)per - 1, (int64_t)per, (int64_t)per + 1, 2 * (int64_t)per + 3};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
      int64_t n = counts[c];
      size_t bytes = (size_t)n * size;
      unsigned char *plain = malloc(bytes + 1), *reversed = malloc(bytes + 1);
      assert_non_null(plain);
      assert_non_null(reversed);
      for (size_t i = 0; i < bytes; i++) plain[i] = (unsigned char)(i * 131 + i / 7 + k);
      for (size_t e = 0; e < (size_t)n; e++)
        for (size_t b = 0; b < size; b++) reversed[e * size + b] = plain[e * size + size - 1 - b];
      reversed_hex(reversed, n, size, hex);
      mb_sha256_hex(plain, bytes, want);
      assert_string_equal(hex, want);
      free(plain);
      free(reversed);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_abc),
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_448_bits),
      cmocka_unit_test(test_896_bits),
      cmocka_unit_test(test_million_a),
      cmocka_unit_test(test_streaming_equals_one_shot),
      cmocka_unit_test(test_little_endian_elements),
      cmocka_unit_test(test_reversed_elements),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
