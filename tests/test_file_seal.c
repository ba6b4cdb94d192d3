/* File seals (file_seal.h) on plain files shaped like a sealed HDF5 file (a 512-byte block,
 * then the HDF5 signature and some bytes), without libhdf5: the states a seal goes through,
 * every one-byte change of a sealed file refused or harmless, a changed length refused, no
 * block ever written over data that does not start with the HDF5 signature, blocks written by
 * hand at each edge of what the check accepts, and a file longer than one read of the hash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_seal.h"
#include "paths.h"
#include "sha256.h"
#include "support.h"

static const unsigned char SIGNATURE[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
enum { BODY = 3000 };

/* Writes `path`: MB_SEAL_BLOCK zero bytes (an empty user block), the signature, then `body`
 * bytes. */
static void write_fake_hdf5_of(const char *path, long body) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  static unsigned char zeros[MB_SEAL_BLOCK];
  assert_int_equal(fwrite(zeros, 1, sizeof zeros, f), sizeof zeros);
  assert_int_equal(fwrite(SIGNATURE, 1, sizeof SIGNATURE, f), sizeof SIGNATURE);
  for (long i = 0; i < body; i++) fputc((int)((i * 37 + 11) & 0xff), f);
  assert_int_equal(fclose(f), 0);
}

static void write_fake_hdf5(const char *path) { write_fake_hdf5_of(path, BODY); }

static long file_size(const char *path) {
  size_t n = 0;
  char *bytes = mb_read_file(path, &n);
  assert_non_null(bytes);
  free(bytes);
  return (long)n;
}

static void flip_byte(const char *path, long at) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, at, SEEK_SET);
  int c = fgetc(f);
  fseek(f, at, SEEK_SET);
  fputc(c ^ 0x5a, f);
  assert_int_equal(fclose(f), 0);
}

/* none -> open -> sealed -> none, with the kind kept; a file without a block is left alone */
static void test_states(void **state) {
  (void)state;
  char *path = mb_test_temp_path("seal_states.h5");
  write_fake_hdf5(path);
  mb_error err;
  mb_seal_state st;
  char kind[MB_SEAL_KIND_MAX];
  assert_false(mb_seal_has_block(path));
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_NONE);
  assert_string_equal(kind, "");

  assert_true(mb_seal_mark_open(path, "results", &err));
  assert_true(mb_seal_has_block(path));
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_OPEN);
  assert_string_equal(kind, "results");
  flip_byte(path, MB_SEAL_BLOCK + 100); /* an open file's data are not covered: a writer has it */
  assert_true(mb_seal_check(path, &st, NULL, &err));
  assert_int_equal(st, MB_SEAL_OPEN);

  assert_true(mb_seal_close(path, "results", &err));
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_OK);
  assert_string_equal(kind, "results");
  assert_int_equal(file_size(path), MB_SEAL_BLOCK + 8 + BODY); /* the seal adds no byte */

  assert_true(mb_seal_remove(path, &err));
  assert_false(mb_seal_has_block(path));
  assert_true(mb_seal_check(path, &st, NULL, &err));
  assert_int_equal(st, MB_SEAL_NONE);
  assert_true(mb_seal_remove(path, &err)); /* nothing to remove: true, nothing written */
  mb_test_temp_remove(path);
}

/* Every byte of a sealed file changed in turn: the check refuses it, naming the file and
 * "damaged", except in the block's first line, whose change makes the file read as unsealed. */
static void test_every_byte(void **state) {
  (void)state;
  char *path = mb_test_temp_path("seal_bytes.h5");
  char *copy = mb_test_temp_path("seal_bytes_copy.h5");
  write_fake_hdf5(path);
  mb_error err;
  assert_true(mb_seal_close(path, "agent", &err));
  size_t n = 0;
  unsigned char *bytes = (unsigned char *)mb_read_file(path, &n);
  assert_non_null(bytes);
  int refused = 0, unsealed = 0;
  /* every byte of the block, then every 7th of the data */
  for (long at = 0; at < (long)n; at += at < MB_SEAL_BLOCK ? 1 : 7) {
    bytes[at] ^= 0x5a;
    mb_test_write_bytes(copy, bytes, n);
    bytes[at] ^= 0x5a;
    mb_seal_state st = MB_SEAL_OK;
    if (mb_seal_check(copy, &st, NULL, &err)) {
      assert_int_equal(st, MB_SEAL_NONE);
      assert_true(at < (long)strlen("mallocbench-seal "));
      unsealed++;
    } else {
      assert_non_null(strstr(err.message, copy));
      refused++;
    }
  }
  assert_true(unsealed <= (int)strlen("mallocbench-seal "));
  assert_true(refused > MB_SEAL_BLOCK);
  free(bytes);
  mb_test_temp_remove(copy);
  mb_test_temp_remove(path);
}

/* A sealed file cut short or extended is refused, naming both sizes. */
static void test_length(void **state) {
  (void)state;
  char *path = mb_test_temp_path("seal_len.h5");
  write_fake_hdf5(path);
  mb_error err;
  assert_true(mb_seal_close(path, "results", &err));
  FILE *f = fopen(path, "ab");
  assert_non_null(f);
  fputc('x', f);
  fclose(f);
  mb_seal_state st;
  assert_false(mb_seal_check(path, &st, NULL, &err));
  char want[64];
  snprintf(want, sizeof want, "it has %d bytes, and had %d", MB_SEAL_BLOCK + 8 + BODY + 1,
           MB_SEAL_BLOCK + 8 + BODY);
  assert_non_null(strstr(err.message, want));
  mb_test_temp_remove(path);
}

/* A file whose data after the block is not HDF5 (a text file, a short file) is never written:
 * the block would overwrite its data. */
static void test_never_over_foreign_data(void **state) {
  (void)state;
  char *path = mb_test_temp_path("seal_foreign.txt");
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  for (int i = 0; i < 2000; i++) fputc('a' + i % 26, f);
  fclose(f);
  mb_error err;
  assert_false(mb_seal_mark_open(path, "results", &err));
  assert_non_null(strstr(err.message, "no HDF5 data after"));
  assert_false(mb_seal_close(path, "results", &err));
  assert_false(mb_seal_has_block(path));
  f = fopen(path, "rb");
  assert_non_null(f);
  for (int i = 0; i < 2000; i++) assert_int_equal(fgetc(f), 'a' + i % 26);
  fclose(f);
  mb_seal_state st;
  assert_true(mb_seal_check(path, &st, NULL, &err)); /* no block: left to the caller */
  assert_int_equal(st, MB_SEAL_NONE);
  remove(path);
  assert_false(mb_seal_check(path, &st, NULL, &err)); /* a missing file names itself */
  assert_non_null(strstr(err.message, path));
  mb_test_temp_remove(path);
}

/* A file whose first 512 bytes are `text` NUL-padded to the header line, then the header line
 * with its true checksum (a block the seal's own checksum does not tell from a written one),
 * then body_len bytes (the HDF5 signature first when they fit). */
static void write_block_file(const char *path, const char *text, size_t body_len) {
  enum { CHECK_AT = MB_SEAL_BLOCK - 80 };
  unsigned char *bytes = calloc(MB_SEAL_BLOCK + body_len + 1, 1);
  assert_non_null(bytes);
  assert_true(strlen(text) < CHECK_AT);
  memcpy(bytes, text, strlen(text));
  char hex[65];
  mb_sha256_hex(bytes, CHECK_AT, hex);
  snprintf((char *)bytes + CHECK_AT, 81, "header-sha256: %s\n", hex);
  for (size_t i = 0; i < body_len; i++)
    bytes[MB_SEAL_BLOCK + i] = i < sizeof SIGNATURE ? SIGNATURE[i] : (unsigned char)(i * 13);
  mb_test_write_bytes(path, bytes, MB_SEAL_BLOCK + body_len);
  free(bytes);
}

/* Blocks written by hand, each at an edge of what the check accepts: without a state or with
 * one it does not know; a file of the block alone, open or sealed (its body empty); a size of
 * 31 characters (read) and of 32 (more than the field holds); a first line that is not the
 * seal's. And the kinds written, and read. */
static void test_hand_made_blocks(void **state) {
  (void)state;
  char *path = mb_test_temp_path("seal_hand.h5");
  mb_error err;
  mb_seal_state st;
  char kind[MB_SEAL_KIND_MAX];
  char empty_sha[65], text[MB_SEAL_BLOCK];
  mb_sha256_hex("", 0, empty_sha);

  const char *no_state[] = {"mallocbench-seal 1\nkind: results\n",
                            "mallocbench-seal 1\nkind: results\nstate: closed\n",
                            "mallocbench-seal 1\nkind: results\nstate:open\n"};
  for (size_t i = 0; i < sizeof no_state / sizeof no_state[0]; i++) {
    write_block_file(path, no_state[i], 100);
    assert_false(mb_seal_check(path, &st, kind, &err));
    assert_non_null(strstr(err.message, "its seal block has no valid state"));
    assert_non_null(strstr(err.message, path));
  }

  write_block_file(path, "mallocbench-seal 1\nkind: agent\nstate: open\n", 0);
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_OPEN);
  assert_string_equal(kind, "agent");
  assert_true(mb_seal_has_block(path));
  assert_false(mb_seal_says_sealed(path));

  snprintf(text, sizeof text,
           "mallocbench-seal 1\nkind: results\nstate: sealed\nsize: %d\nsha256: %s\n",
           MB_SEAL_BLOCK, empty_sha);
  write_block_file(path, text, 0);
  if (!mb_seal_check(path, &st, kind, &err)) fail_msg("%s", err.message);
  assert_int_equal(st, MB_SEAL_OK);
  assert_true(mb_seal_says_sealed(path));

  /* the size field holds 31 characters: zero-padded to 31 it is read, to 32 it is not */
  for (int width = 31; width <= 32; width++) {
    snprintf(text, sizeof text,
             "mallocbench-seal 1\nkind: results\nstate: sealed\nsize: %0*d\nsha256: %s\n", width,
             MB_SEAL_BLOCK, empty_sha);
    write_block_file(path, text, 0);
    bool ok = mb_seal_check(path, &st, NULL, &err);
    if (width == 31) {
      if (!ok) fail_msg("a size of 31 characters: %s", err.message);
      assert_int_equal(st, MB_SEAL_OK);
    } else {
      assert_false(ok);
      assert_non_null(strstr(err.message, "its seal block lacks the size or SHA-256"));
    }
  }

  /* the seal's first line is "mallocbench-seal " and a version: one letter more is another
   * file's */
  write_block_file(path, "mallocbench-sealed\nkind: results\nstate: open\n", 100);
  assert_false(mb_seal_has_block(path));
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_NONE);
  mb_test_temp_remove(path);

  /* a kind is written only if mb_seal_check can give it back whole (31 bytes) and on one line;
   * a refused kind writes nothing */
  path = mb_test_temp_path("seal_kind.h5");
  write_fake_hdf5(path);
  char long_kind[MB_SEAL_KIND_MAX + 1];
  memset(long_kind, 'k', sizeof long_kind);
  long_kind[MB_SEAL_KIND_MAX] = '\0';
  assert_false(mb_seal_mark_open(path, long_kind, &err));
  assert_non_null(strstr(err.message, "is not a name of at most 31 bytes on one line"));
  assert_non_null(strstr(err.message, path));
  assert_false(mb_seal_close(path, long_kind, &err));
  assert_false(mb_seal_mark_open(path, "results\nstate: sealed", &err));
  assert_false(mb_seal_has_block(path)); /* nothing written */
  long_kind[MB_SEAL_KIND_MAX - 1] = '\0';
  assert_true(mb_seal_mark_open(path, long_kind, &err));
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_OPEN);
  assert_string_equal(kind, long_kind);
  assert_true(mb_seal_close(path, long_kind, &err));
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_OK);
  assert_string_equal(kind, long_kind);

  /* a longer kind (another program's block, here as long as the block has room for) is read,
   * cut to the caller's buffer */
  char hand_kind[400];
  memset(hand_kind, 'h', sizeof hand_kind);
  hand_kind[393] = '\0';
  snprintf(text, sizeof text, "mallocbench-seal 1\nkind: %s\nstate: open\n", hand_kind);
  assert_int_equal(strlen(text), 431); /* the last byte before the header line, and its NUL */
  write_block_file(path, text, 0);
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_OPEN);
  hand_kind[MB_SEAL_KIND_MAX - 1] = '\0';
  assert_string_equal(kind, hand_kind);
  mb_test_temp_remove(path);
}

/* A file larger than the hash's 1 MiB reads: sealed and checked across them, and a change in the
 * second read refused. */
static void test_more_than_one_read(void **state) {
  (void)state;
  char *path = mb_test_temp_path("seal_large.h5");
  write_fake_hdf5_of(path, (1L << 20) + 1000);
  mb_error err;
  mb_seal_state st;
  if (!mb_seal_close(path, "results", &err)) fail_msg("%s", err.message);
  assert_true(mb_seal_check(path, &st, NULL, &err));
  assert_int_equal(st, MB_SEAL_OK);
  flip_byte(path, MB_SEAL_BLOCK + (1L << 20) + 500);
  assert_false(mb_seal_check(path, &st, NULL, &err));
  assert_non_null(strstr(err.message, "its contents no longer match their SHA-256"));
  mb_test_temp_remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_states),           cmocka_unit_test(test_every_byte),
      cmocka_unit_test(test_length),           cmocka_unit_test(test_never_over_foreign_data),
      cmocka_unit_test(test_hand_made_blocks), cmocka_unit_test(test_more_than_one_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
