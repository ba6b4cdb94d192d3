/* libFuzzer target: the run journal's reader (suite/run_journal.h) must refuse garbage without
 * crashing, and what it accepts must survive a rewrite.
 *
 * The input is a journal: its first line is decoded as a header, every other line as a task
 * line twice, as it is and with its checksum made right (" #" and the SHA-256 prefix appended to
 * the text before any " #"), since a random line almost never matches its checksum and the
 * fields behind it would go unfuzzed otherwise. A line that decodes is encoded again and must
 * decode again to the same task, kind and buffer count (abort otherwise). Then the whole input
 * goes through the file reader, as --resume reads a journal. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_journal.h"
#include "sha256.h"

/* The first " #" in line[0, len), or NULL (lines may hold NUL bytes: no strstr). */
static const char *find_hash(const char *line, size_t len) {
  for (size_t i = 0; i + 1 < len; i++)
    if (line[i] == ' ' && line[i + 1] == '#') return line + i;
  return NULL;
}

static void check_record(const char *line, size_t len, int64_t line_no) {
  mb_journal_entry e;
  mb_error err;
  if (!mb_journal_decode_record(line, len, "fuzz.journal", line_no, &e, &err)) return;
  char *again = NULL;
  size_t again_len = 0;
  if (mb_journal_encode_record(e.task, e.kind, &e.r, &again, &again_len, &err)) {
    mb_journal_entry back;
    /* the encoder's line ends in '\n', which the decoder does not take */
    if (!mb_journal_decode_record(again, again_len - 1, "fuzz.journal", line_no, &back, &err) ||
        back.task != e.task || back.kind != e.kind || (back.r.a == NULL) != (e.r.a == NULL) ||
        (e.r.a && back.r.a->n_buffers != e.r.a->n_buffers) || back.r.curve_len != e.r.curve_len)
      abort();
    mb_task_record_clear(&back.r);
  }
  free(again);
  mb_task_record_clear(&e.r);
}

static void check_header(const char *line, size_t len) {
  mb_journal_header h;
  mb_error err;
  if (!mb_journal_decode_header(line, len, "fuzz.journal", &h, &err)) return;
  char *again = NULL;
  size_t again_len = 0;
  if (mb_journal_encode_header(&h, &again, &again_len, &err)) {
    mb_journal_header back;
    if (!mb_journal_decode_header(again, again_len - 1, "fuzz.journal", &back, &err)) abort();
    if (strcmp(back.plan, h.plan) || back.seeds != h.seeds || strcmp(back.solvers, h.solvers))
      abort();
    mb_journal_header_free(&back);
  }
  free(again);
  mb_journal_header_free(&h);
}

static void check_file(const uint8_t *data, size_t size) {
  char path[] = "/tmp/fuzz_journal_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return;
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    close(fd);
    unlink(path);
    return;
  }
  fwrite(data, 1, size, f);
  fclose(f);
  mb_journal_reader rd;
  mb_error err;
  if (mb_journal_open(&rd, path, NULL, &err)) {
    mb_journal_header h;
    if (mb_journal_read_header(&rd, &h, &err)) {
      mb_journal_entry e;
      while (mb_journal_next(&rd, &e, &err) == MB_JOURNAL_RECORD) mb_task_record_clear(&e.r);
      mb_journal_finish(&rd);
      size_t kept_len = 0;
      if (!mb_journal_kept(&rd, &kept_len) || kept_len > size) abort();
      mb_journal_header_free(&h);
    }
    mb_journal_close(&rd);
  }
  unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  int64_t line_no = 1;
  for (size_t start = 0; start < size; line_no++) {
    const char *nl = memchr(text + start, '\n', size - start);
    size_t len = nl ? (size_t)(nl - (text + start)) : size - start;
    if (line_no == 1) {
      check_header(text + start, len);
    } else {
      check_record(text + start, len, line_no);
      /* the same text with a checksum that matches it */
      const char *hash = find_hash(text + start, len);
      size_t body = hash ? (size_t)(hash - (text + start)) : len;
      char *fixed = malloc(body + 2 + 16 + 1);
      if (fixed) {
        char sum[65];
        memcpy(fixed, text + start, body);
        mb_sha256_hex(fixed, body, sum);
        memcpy(fixed + body, " #", 2);
        memcpy(fixed + body + 2, sum, 16);
        check_record(fixed, body + 18, line_no);
        free(fixed);
      }
    }
    start += len + 1;
  }
  check_file(data, size);
  return 0;
}
