#include "file_seal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "sha256.h"

#define MAGIC "mallocbench-seal 1\n"
#define MAGIC_STEM "mallocbench-seal " /* any version */
#define CHECK_AT (MB_SEAL_BLOCK - 80)  /* "header-sha256: " + 64 hex digits + "\n" */
#define CHECK_KEY "header-sha256: "

/* The HDF5 format signature, at the start of the data that follows the block. */
static const unsigned char HDF5_SIGNATURE[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

static bool read_at(int fd, void *buf, size_t n, off_t at) {
  size_t done = 0;
  while (done < n) {
    ssize_t k = pread(fd, (char *)buf + done, n - done, at + (off_t)done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    done += (size_t)k;
  }
  return true;
}

/* SHA-256 (hex) of bytes [MB_SEAL_BLOCK, size) of the open file. */
static bool hash_body(int fd, int64_t size, char hex[65]) {
  enum { CHUNK = 1 << 20 };
  unsigned char *buf = malloc(CHUNK);
  if (!buf) return false;
  mb_sha256 h;
  mb_sha256_init(&h);
  bool ok = true;
  for (int64_t at = MB_SEAL_BLOCK; ok && at < size;) {
    size_t n = size - at < CHUNK ? (size_t)(size - at) : CHUNK;
    ok = read_at(fd, buf, n, (off_t)at);
    if (ok) mb_sha256_update(&h, buf, n);
    at += (int64_t)n;
  }
  free(buf);
  uint8_t d[32];
  mb_sha256_final(&h, d);
  mb_sha256_digest_hex(d, hex);
  return ok;
}

/* Finds "key: " at the start of a line of the block's text and returns what follows it (up to
 * the line's end, copied into out), or NULL. */
static const char *field(const char *text, const char *key, char *out, size_t n) {
  size_t k = strlen(key);
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len >= k + 2 && !strncmp(line, key, k) && line[k] == ':' && line[k + 1] == ' ') {
      if (len - k - 2 >= n) return NULL;
      memcpy(out, line + k + 2, len - k - 2);
      out[len - k - 2] = '\0';
      return out;
    }
    line += len + (end != NULL);
  }
  return NULL;
}

static bool damaged(mb_error *err, const char *path, const char *why) {
  return mb_fail(err, "%s: the file is damaged: %s (sealed when it was last written)", path, why);
}

bool mb_seal_check(const char *path, mb_seal_state *state, char *kind, mb_error *err) {
  *state = MB_SEAL_NONE;
  if (kind) kind[0] = '\0';
  /* O_NONBLOCK: a FIFO would block the open until a writer came */
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return mb_fail(err, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  char block[MB_SEAL_BLOCK + 1];
  bool ok = fstat(fd, &st) == 0;
  /* a results file or an agent is a regular file: HDF5 would block on a FIFO or fail on a
   * directory with a message that does not say why */
  if (ok && !S_ISREG(st.st_mode)) {
    close(fd);
    return mb_fail(err, "%s: cannot open: not a regular file (%s)", path, mb_file_kind(st.st_mode));
  }
  /* only a file long enough has a block */
  bool has = ok && st.st_size >= MB_SEAL_BLOCK;
  if (has && !read_at(fd, block, MB_SEAL_BLOCK, 0)) ok = false;
  if (!ok || !has || strncmp(block, MAGIC_STEM, strlen(MAGIC_STEM))) {
    int e = errno;
    close(fd);
    return ok || mb_fail(err, "%s: cannot read: %s", path, strerror(e));
  }
  block[MB_SEAL_BLOCK] = '\0';
  /* value holds any line of the block: a kind longer than the caller's buffer is cut, not lost */
  char hex[65], want[65], text[CHECK_AT + 1], value[CHECK_AT + 1];
  mb_sha256_hex(block, CHECK_AT, hex);
  memcpy(text, block, CHECK_AT);
  text[CHECK_AT] = '\0';
  const char *check = block + CHECK_AT;
  if (strncmp(block, MAGIC, strlen(MAGIC))) {
    ok = mb_fail(err, "%s: sealed by a newer mallocbench (seal block '%.*s'); update mallocbench",
                 path, (int)(strcspn(block, "\n") < 40 ? strcspn(block, "\n") : 40), block);
  } else if (strncmp(check, CHECK_KEY, strlen(CHECK_KEY)) ||
             memcmp(check + strlen(CHECK_KEY), hex, 64) || check[79] != '\n') {
    ok = damaged(err, path, "its seal block (the first 512 bytes) does not match its own checksum");
  } else if (!field(text, "state", value, sizeof value) ||
             (strcmp(value, "open") && strcmp(value, "sealed"))) {
    ok = damaged(err, path, "its seal block has no valid state");
  } else if (!strcmp(value, "open")) {
    *state = MB_SEAL_OPEN;
  } else {
    char size_text[32];
    char *end = NULL;
    long long size =
        field(text, "size", size_text, sizeof size_text) ? strtoll(size_text, &end, 10) : -1;
    if (!end || *end || size < MB_SEAL_BLOCK || !field(text, "sha256", want, sizeof want) ||
        strlen(want) != 64) {
      ok = damaged(err, path, "its seal block lacks the size or SHA-256");
    } else if ((long long)st.st_size != size) {
      char why[160];
      snprintf(why, sizeof why, "it has %lld bytes, and had %lld when it was sealed",
               (long long)st.st_size, size);
      ok = damaged(err, path, why);
    } else if (!hash_body(fd, size, hex)) {
      ok = mb_fail(err, "%s: cannot read: %s", path, strerror(errno));
    } else if (strcmp(hex, want)) {
      ok = damaged(err, path, "its contents no longer match their SHA-256");
    } else {
      *state = MB_SEAL_OK;
    }
  }
  if (ok && kind && field(text, "kind", value, sizeof value))
    snprintf(kind, MB_SEAL_KIND_MAX, "%s", value);
  close(fd);
  return ok;
}

bool mb_seal_has_block(const char *path) {
  char head[sizeof MAGIC_STEM - 1];
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  bool has = fd >= 0 && read_at(fd, head, sizeof head, 0) && !memcmp(head, MAGIC_STEM, sizeof head);
  if (fd >= 0) close(fd);
  return has;
}

bool mb_seal_says_sealed(const char *path) {
  char block[CHECK_AT + 1], state[16];
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  bool read = fd >= 0 && read_at(fd, block, CHECK_AT, 0);
  if (fd >= 0) close(fd);
  block[read ? CHECK_AT : 0] = '\0';
  return read && !strncmp(block, MAGIC, strlen(MAGIC)) &&
         field(block, "state", state, sizeof state) && !strcmp(state, "sealed");
}

typedef enum block_kind { BLOCK_OPEN, BLOCK_SEALED, BLOCK_ZERO } block_kind;

/* The sealed block's text is at most 139 bytes and its kind (with a size of 19 digits): it ends
 * before the header line */
_Static_assert(139 + MB_SEAL_KIND_MAX <= CHECK_AT,
               "a sealed block's text must fit before its check");

/* Writes the block: open, sealed (with the size and hash of the file as it is) or zeros. */
static bool write_block(const char *path, const char *kind, block_kind what, mb_error *err) {
  /* a kind is read back whole only if it fits mb_seal_check's buffer, and a newline in it would
   * write a line of its own into the block */
  if (strlen(kind) >= MB_SEAL_KIND_MAX || strchr(kind, '\n'))
    return mb_fail(err, "%s: seal kind '%.40s' is not a name of at most %d bytes on one line", path,
                   kind, MB_SEAL_KIND_MAX - 1);
  int fd = open(path, O_RDWR);
  if (fd < 0) return mb_fail(err, "%s: cannot open to seal it: %s", path, strerror(errno));
  unsigned char sig[8];
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && read_at(fd, sig, sizeof sig, MB_SEAL_BLOCK) &&
            !memcmp(sig, HDF5_SIGNATURE, sizeof sig);
  if (!ok) {
    close(fd);
    return mb_fail(err, "%s: no HDF5 data after a %d-byte block: not sealed", path, MB_SEAL_BLOCK);
  }
  char block[MB_SEAL_BLOCK], hex[65];
  memset(block, 0, sizeof block);
  if (what == BLOCK_SEALED) {
    if (!hash_body(fd, (int64_t)st.st_size, hex)) {
      int e = errno;
      close(fd);
      return mb_fail(err, "%s: cannot read it to seal it: %s", path, strerror(e));
    }
    snprintf(block, CHECK_AT, "%skind: %s\nstate: sealed\nsize: %" PRId64 "\nsha256: %s\n", MAGIC,
             kind, (int64_t)st.st_size, hex);
  } else if (what == BLOCK_OPEN) {
    snprintf(block, CHECK_AT, "%skind: %s\nstate: open\n", MAGIC, kind);
  }
  if (what != BLOCK_ZERO) {
    char check[MB_SEAL_BLOCK - CHECK_AT + 1]; /* the last line, and snprintf's NUL */
    mb_sha256_hex(block, CHECK_AT, hex);
    snprintf(check, sizeof check, "%s%s\n", CHECK_KEY, hex);
    memcpy(block + CHECK_AT, check, MB_SEAL_BLOCK - CHECK_AT);
  }
  ok = pwrite(fd, block, sizeof block, 0) == (ssize_t)sizeof block && fdatasync(fd) == 0;
  int e = errno;
  ok = close(fd) == 0 && ok;
  if (!ok) return mb_fail(err, "%s: cannot write its seal block: %s", path, strerror(e));
  return true;
}

bool mb_seal_mark_open(const char *path, const char *kind, mb_error *err) {
  return write_block(path, kind, BLOCK_OPEN, err);
}

bool mb_seal_close(const char *path, const char *kind, mb_error *err) {
  return write_block(path, kind, BLOCK_SEALED, err);
}

bool mb_seal_remove(const char *path, mb_error *err) {
  return !mb_seal_has_block(path) || write_block(path, "", BLOCK_ZERO, err);
}
