/* Unit tests of run_journal, the format of `mallocbench run`'s journal: texts, task lines and
 * header lines read back to what was written (names with commas, quotes, spaces, control bytes
 * and UTF-8 included), lines written by earlier binaries read and written byte for byte, every
 * kind of damaged line refused with a message naming the journal, the line and the field, and
 * the reader skipping damaged lines (with notes) while keeping the lines after them. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_journal.h"
#include "sha256.h"
#include "solver.h"
#include "support.h"

/* Names a reader may meet in catalogues, notes and paths. */
static const char *const NAMES[] = {
    "",
    "a,b,c",
    "say \"hi\", 'there'",
    "two words  and\ttab",
    "line\nbreak\r\n",
    "\x01\x02\x1b[31m\x7f",
    "100% #1 %41 %%",
    "s",
    "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80",
    "\xff\xfe\x80",
};
#define N_NAMES (sizeof NAMES / sizeof NAMES[0])

/* A line as it would be written: body, then " #" and its checksum (no '\n'). */
static char *with_sum(const char *body) {
  char sum[65];
  mb_sha256_hex(body, strlen(body), sum);
  size_t n = strlen(body) + 20;
  char *line = malloc(n);
  assert_non_null(line);
  snprintf(line, n, "%s #%.16s", body, sum);
  return line;
}

static void assert_contains(const char *text, const char *part) {
  if (!strstr(text, part)) fail_msg("'%s' does not contain '%s'", text, part);
}

/* ---- texts ---- */

static void test_escape_round_trip(void **state) {
  (void)state;
  char all[256];
  for (int i = 0; i < 255; i++) all[i] = (char)(i + 1); /* every byte but NUL */
  all[255] = '\0';
  for (size_t i = 0; i <= N_NAMES; i++) {
    const char *name = i < N_NAMES ? NAMES[i] : all;
    char token[3 * 256 + 2], back[256];
    mb_journal_escape(token, name);
    assert_int_equal(token[0], 's');
    for (const unsigned char *p = (const unsigned char *)token; *p; p++)
      if (*p <= ' ' || *p == '#' || *p >= 0x7f) fail_msg("byte 0x%02x in token '%s'", *p, token);
    mb_error err = {{0}};
    if (!mb_journal_unescape(token, back, sizeof back, &err)) fail_msg("%s", err.message);
    assert_string_equal(back, name);
  }
}

/* The escape is fixed: these tokens are in journals already written. */
static void test_escape_bytes(void **state) {
  (void)state;
  const char *cases[][2] = {{"", "s"},
                            {"a,b", "sa,b"},
                            {"say \"hi\"", "ssay%20\"hi\""},
                            {"100% #1", "s100%25%20%231"},
                            {"caf\xc3\xa9", "scaf%C3%A9"},
                            {"\t\n\x7f", "s%09%0A%7F"},
                            {"^(a|b)$", "s^(a|b)$"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char token[64];
    mb_journal_escape(token, cases[i][0]);
    assert_string_equal(token, cases[i][1]);
  }
  /* lowercase hex digits read too (the format allows both) */
  char out[16];
  assert_true(mb_journal_unescape("sa%2cb", out, sizeof out, NULL));
  assert_string_equal(out, "a,b");
  assert_true(mb_journal_unescape("s%af%fa%Fa%aF", out, sizeof out, NULL));
  assert_string_equal(out, "\xaf\xfa\xfa\xaf");
}

static void test_unescape_refuses(void **state) {
  (void)state;
  const char *bad[][2] = {{"abc", "not a text"},     {"s%", "not followed by two hex"},
                          {"s%4", "two hex digits"}, {"s%zz", "two hex digits"},
                          {"s%00", "other than 00"}, {"sabcdefgh", "longer than the field's 7"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char out[8];
    mb_error err = {{0}};
    assert_false(mb_journal_unescape(bad[i][0], out, sizeof out, &err));
    assert_contains(err.message, bad[i][1]);
  }
  char out[8];
  assert_true(mb_journal_unescape("sabcdefg", out, sizeof out, NULL)); /* 7 bytes: fits */
}

/* ---- task lines ---- */

static mb_assignment *assignment_of(int32_t n, const int64_t *offsets) {
  mb_assignment *a = mb_assignment_new(n);
  assert_non_null(a);
  for (int32_t i = 0; i < n; i++) a->offset[i] = offsets[i];
  return a;
}

static void set_curve(mb_task_record *r, int32_t n, const double *step, const double *ret) {
  r->curve_len = n;
  r->curve_step = malloc((size_t)n * sizeof(double));
  r->curve_return = malloc((size_t)n * sizeof(double));
  assert_non_null(r->curve_step);
  assert_non_null(r->curve_return);
  memcpy(r->curve_step, step, (size_t)n * sizeof(double));
  memcpy(r->curve_return, ret, (size_t)n * sizeof(double));
}

static bool same_double(double a, double b) {
  return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void assert_same_record(const mb_task_record *a, const mb_task_record *b) {
  assert_string_equal(a->status, b->status);
  assert_int_equal(a->valid, b->valid);
  assert_int_equal(a->n_fast, b->n_fast);
  assert_int_equal(a->fast_bytes, b->fast_bytes);
  assert_int_equal(a->t_solver, b->t_solver);
  assert_true(same_double(a->wall_s, b->wall_s));
  assert_int_equal(a->iterations, b->iterations);
  assert_int_equal(a->budget_hit, b->budget_hit);
  assert_int_equal(a->curve_len, b->curve_len);
  for (int32_t k = 0; k < a->curve_len; k++) {
    assert_true(same_double(a->curve_step[k], b->curve_step[k]));
    assert_true(same_double(a->curve_return[k], b->curve_return[k]));
  }
  assert_true(same_double(a->curve_heuristic, b->curve_heuristic) ||
              (a->curve_len == 0 && isnan(b->curve_heuristic)));
  assert_int_equal(a->t_slow, b->t_slow);
  assert_int_equal(a->t_heur, b->t_heur);
  assert_int_equal(a->t_bound, b->t_bound);
  assert_string_equal(a->bound_status, b->bound_status);
  assert_true(same_double(a->heur_wall_s, b->heur_wall_s));
  assert_true(same_double(a->bound_wall_s, b->bound_wall_s));
  assert_string_equal(a->note, b->note);
  assert_int_equal(a->a != NULL, b->a != NULL);
  if (a->a) {
    assert_int_equal(a->a->n_buffers, b->a->n_buffers);
    for (int32_t i = 0; i < a->a->n_buffers; i++)
      assert_int_equal(a->a->offset[i], b->a->offset[i]);
  }
}

/* Encodes, decodes, compares, and encodes again: the same bytes. */
static void round_trip(int64_t task, mb_task_kind kind, const mb_task_record *r) {
  char *line = NULL, *again = NULL;
  size_t len = 0, len2 = 0;
  mb_error err = {{0}};
  assert_true(mb_journal_encode_record(task, kind, r, &line, &len, &err));
  assert_int_equal(len, strlen(line));
  assert_int_equal(line[len - 1], '\n');
  assert_null(memchr(line, '\n', len - 1)); /* one line, whatever the texts hold */
  mb_journal_entry e;
  if (!mb_journal_decode_record(line, len - 1, "j", 2, &e, &err)) fail_msg("%s", err.message);
  assert_int_equal(e.task, task);
  assert_int_equal(e.kind, kind);
  assert_same_record(r, &e.r);
  assert_true(mb_journal_encode_record(e.task, e.kind, &e.r, &again, &len2, &err));
  assert_int_equal(len, len2);
  assert_memory_equal(line, again, len);
  mb_task_record_clear(&e.r);
  free(line);
  free(again);
}

static void test_record_round_trip(void **state) {
  (void)state;
  const int64_t offsets[] = {MB_SLOW, 0, 4096, INT64_MAX, INT64_MIN};
  const double steps[] = {0, 1.5, 1e300, -0.0, 5e-324};
  const double returns[] = {0.1, NAN, INFINITY, -INFINITY, 1.0 / 3};
  for (size_t i = 0; i < N_NAMES; i++) {
    mb_task_record b = mb_task_record_empty();
    b.t_slow = 123456789012345;
    b.t_heur = -1;
    b.t_bound = INT64_MAX;
    snprintf(b.bound_status, sizeof b.bound_status, "%s", i % 2 ? "not solved" : NAMES[i]);
    b.heur_wall_s = 0.1 * (double)(i + 1) / 3; /* 17 digits needed */
    b.bound_wall_s = 1.0 / 3;
    snprintf(b.note, sizeof b.note, "%s", NAMES[i]);
    b.a = i % 3 ? assignment_of(5, offsets) : NULL;
    round_trip((int64_t)i, MB_TASK_BASELINE, &b);
    mb_task_record_clear(&b);

    mb_task_record j = mb_task_record_empty();
    snprintf(j.status, sizeof j.status, "%s", i % 2 ? "invalid" : NAMES[i]);
    j.valid = 1;
    j.n_fast = INT32_MAX;
    j.fast_bytes = 1 << 20;
    j.t_solver = 987654321;
    j.wall_s = 0.000123456789;
    j.iterations = INT64_MIN;
    j.budget_hit = -1;
    snprintf(j.note, sizeof j.note, "%s, then %s", NAMES[i], NAMES[(i + 1) % N_NAMES]);
    j.a = i % 3 != 1 ? assignment_of((int32_t)(i % 6), offsets) : NULL;
    if (i % 2) set_curve(&j, (int32_t)(i % 6), steps, returns);
    j.curve_heuristic = i % 4 == 1 ? 0.625 : NAN; /* absent on half of the curves */
    round_trip(INT64_MAX - (int64_t)i, MB_TASK_JOB, &j);
    mb_task_record_clear(&j);
  }
}

/* Lines in the format every earlier binary wrote (bytes and checksums): they read, and the same
 * records are written to the same bytes. */
static const char GOLDEN_B[] = "B 0 123456789 100000000 90000000 sok 0.25 0.5 s 3 -1 0 4096";
static const char GOLDEN_J[] =
    "J 1 sok 1 2 8192 95000000 0.25 17 0 sgreedy:%20two%20passes,%20\"fast\" 3 0 4096 -1 2 0 "
    "0.5 1 0.75 heuristic 0.625";

/* Lines a journal of the binary before run_journal existed holds (HEAD 8a50532, `mallocbench run`
 * on the samples killed after 60 tasks). */
static const char *const REAL_LINES[] = {
    "mallocbench-journal 1 seeds 20 budget 1 plan "
    "se02043f08ba2b7140fb2671e1024c708ad3a86b49aed08e36002373c2740627d profile squick workloads "
    "s. solvers sheuristic,greedy hardware s agent s catalogue s/tmp/h1-work/e2e/cat.txt data "
    "s/work/shared/data\n",
    "B 0 42438358 35337416 35337403 sok 4.4003001676173881e-05 1.3245000445749611e-05 s 8 -1 -1 0 "
    "-1 1048576 0 -1 -1 #8d85fb4b9c1653e1\n",
    "J 7 sok 1 3 2097152 35337416 1.663000148255378e-06 3 0 "
    "sbest%20fit:%203%20of%203%20candidates%20in%20fast%20memory 8 -1 -1 0 -1 1048576 0 -1 -1 0 "
    "#0b8470e94d6644fb\n",
};

static void test_record_golden(void **state) {
  (void)state;
  char b_line[256], j_line[256];
  snprintf(b_line, sizeof b_line, "%s #a99041e11133eb67\n", GOLDEN_B);
  snprintf(j_line, sizeof j_line, "%s #b36835fe99cb3f25\n", GOLDEN_J);
  const char *lines[] = {b_line, j_line};
  for (int i = 0; i < 2; i++) {
    mb_journal_entry e;
    mb_error err = {{0}};
    size_t n = strlen(lines[i]);
    if (!mb_journal_decode_record(lines[i], n - 1, "j", 2, &e, &err)) fail_msg("%s", err.message);
    assert_int_equal(e.task, i);
    assert_int_equal(e.kind, i ? MB_TASK_JOB : MB_TASK_BASELINE);
    char *line = NULL;
    size_t len = 0;
    assert_true(mb_journal_encode_record(e.task, e.kind, &e.r, &line, &len, &err));
    assert_string_equal(line, lines[i]);
    if (i == 1) {
      assert_string_equal(e.r.note, "greedy: two passes, \"fast\"");
      assert_int_equal(e.r.curve_len, 2);
      assert_true(e.r.curve_heuristic == 0.625);
      assert_int_equal(e.r.a->offset[2], MB_SLOW);
    }
    free(line);
    mb_task_record_clear(&e.r);
  }
  for (size_t i = 0; i < sizeof REAL_LINES / sizeof REAL_LINES[0]; i++) {
    const char *real = REAL_LINES[i];
    size_t n = strlen(real) - 1;
    char *line = NULL;
    size_t len = 0;
    mb_error err = {{0}};
    if (i == 0) {
      mb_journal_header h;
      if (!mb_journal_decode_header(real, n, "j", &h, &err)) fail_msg("%s", err.message);
      assert_true(mb_journal_encode_header(&h, &line, &len, &err));
      mb_journal_header_free(&h);
    } else {
      mb_journal_entry e;
      if (!mb_journal_decode_record(real, n, "j", 2, &e, &err)) fail_msg("%s", err.message);
      assert_true(mb_journal_encode_record(e.task, e.kind, &e.r, &line, &len, &err));
      mb_task_record_clear(&e.r);
    }
    assert_string_equal(line, real);
    free(line);
  }
}

/* Every double goes through every real field of a line and back, bit for bit ("%.17g"). */
static void test_record_reals_exact(void **state) {
  (void)state;
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (int round = 0; round < 2000; round++) {
    double d[7];
    for (int k = 0; k < 7; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      memcpy(&d[k], &x, sizeof d[k]);
      if (isnan(d[k])) d[k] = 1.0 / (double)(round + 3); /* NaN payloads are not kept */
    }
    mb_task_record b = mb_task_record_empty();
    b.heur_wall_s = d[0];
    b.bound_wall_s = d[1];
    round_trip(round, MB_TASK_BASELINE, &b);
    mb_task_record j = mb_task_record_empty();
    j.wall_s = d[2];
    set_curve(&j, 2, d + 3, d + 5);
    j.curve_heuristic = d[round % 7];
    round_trip(round, MB_TASK_JOB, &j);
    mb_task_record_clear(&j);
  }
}

/* Lines written before curves had a heuristic reference end with the curve: NaN. */
static void test_record_without_reference(void **state) {
  (void)state;
  char *line = with_sum("J 4 sok 1 0 0 5 0.5 3 1 s -1 1 10 0.5");
  mb_journal_entry e;
  mb_error err = {{0}};
  if (!mb_journal_decode_record(line, strlen(line), "j", 2, &e, &err)) fail_msg("%s", err.message);
  assert_int_equal(e.r.curve_len, 1);
  assert_true(isnan(e.r.curve_heuristic));
  assert_null(e.r.a);
  /* and such a record is written so again: no reference, no "heuristic" */
  char *again = NULL;
  size_t len = 0;
  assert_true(mb_journal_encode_record(e.task, e.kind, &e.r, &again, &len, &err));
  assert_int_equal(len, strlen(line) + 1);
  assert_memory_equal(again, line, len - 1);
  free(again);
  mb_task_record_clear(&e.r);
  free(line);
}

/* Decoding fails with a message naming the journal, the line and `field`. */
static void assert_refused(const char *line, const char *field) {
  mb_journal_entry e;
  mb_error err = {{0}};
  if (mb_journal_decode_record(line, strlen(line), "run.h5.journal", 7, &e, &err))
    fail_msg("accepted: %s", line);
  assert_contains(err.message, "run.h5.journal:7: ");
  char want[80];
  snprintf(want, sizeof want, "field '%s'", field);
  if (!strstr(err.message, want))
    fail_msg("'%s' for %s: does not name %s", err.message, line, want);
  assert_null(e.r.a); /* nothing left to free */
  assert_null(e.r.curve_step);
}

/* A body whose checksum matches: refused for its fields alone. */
static void assert_body_refused(const char *body, const char *field) {
  char *line = with_sum(body);
  assert_refused(line, field);
  free(line);
}

/* Every prefix of a good line (a kill during its write) is refused, for its checksum. */
static void test_truncated_lines(void **state) {
  (void)state;
  char line[256];
  snprintf(line, sizeof line, "%s #b36835fe99cb3f25", GOLDEN_J);
  for (size_t n = 0; n < strlen(line); n++) {
    char cut[256];
    memcpy(cut, line, n);
    cut[n] = '\0';
    assert_refused(cut, "checksum");
  }
}

/* Any one byte changed (an edit, a flipped bit) fails the checksum. */
static void test_bad_checksum(void **state) {
  (void)state;
  char line[256];
  snprintf(line, sizeof line, "%s #a99041e11133eb67", GOLDEN_B);
  size_t n = strlen(line);
  for (size_t i = 0; i < n; i++) {
    char changed[256];
    memcpy(changed, line, n + 1);
    changed[i] = changed[i] == '7' ? '8' : '7';
    if (changed[i] == ' ' || line[i] == ' ' || line[i] == '#') continue; /* cut elsewhere */
    assert_refused(changed, "checksum");
  }
  assert_refused("B 0 1 2 3 sok 0.5 0.5 s -1 #A99041E11133EB67", "checksum");
  assert_refused("B 0 1 2 3 sok 0.5 0.5 s -1 #a99041e11133eb6", "checksum");
  assert_refused("B 0 1 2 3 sok 0.5 0.5 s -1 #a99041e11133eb6700", "checksum");
  assert_refused("B 0 1 2 3 sok 0.5 0.5 s -1", "checksum");
  assert_refused("", "checksum");
  /* a NUL byte inside a line, even one after which the checksum would match */
  char nul[64] = "B 0 1 2 3 sok 0.5 0.5 s -1 #0123456789abcdef";
  nul[5] = '\0';
  mb_journal_entry e;
  mb_error err = {{0}};
  assert_false(mb_journal_decode_record(nul, 44, "run.h5.journal", 7, &e, &err));
  assert_contains(err.message, "run.h5.journal:7: byte 5: a NUL byte");
}

/* Lines whose checksum matches but whose fields are not what a writer writes. */
static void test_bad_fields(void **state) {
  (void)state;
  const char *cases[][2] = {
      {"X 0 1 2 3 sok 0.5 0.5 s -1", "kind"},
      {"BJ 0 1 2 3 sok 0.5 0.5 s -1", "kind"},
      {"", "kind"},
      {"B", "task"},
      {"B -1 1 2 3 sok 0.5 0.5 s -1", "task"},
      {"B x 1 2 3 sok 0.5 0.5 s -1", "task"},
      {"B 99999999999999999999 1 2 3 sok 0.5 0.5 s -1", "task"},
      {"B 0 1.5 2 3 sok 0.5 0.5 s -1", "t_slow"},
      {"B 0 1 2x 3 sok 0.5 0.5 s -1", "t_heur"},
      {"B 0 1 2 +3 sok 0.5 0.5 s -1", "t_bound"},
      {"B 0 1 2 3 ok 0.5 0.5 s -1", "bound_status"},
      {"B 0 1 2 3 s0123456789abcdef 0.5 0.5 s -1", "bound_status"}, /* 16 bytes: too long */
      {"B 0 1 2 3 sok zero 0.5 s -1", "heur_wall_s"},
      {"B 0 1 2 3 sok \t0.5 0.5 s -1", "heur_wall_s"}, /* strtod would skip the tab */
      {"B 0 1 2 3 sok 0.5 0.5e 5 -1", "bound_wall_s"},
      {"B 0 1 2 3 sok 0.5 0.5 s%zz -1", "note"},
      {"B 0 1 2 3 sok 0.5 0.5 s%00 -1", "note"},
      {"B 0 1 2 3 sok 0.5 0.5 s", "n_buffers"},
      {"B 0 1 2 3 sok 0.5 0.5 s -2", "n_buffers"},
      {"B 0 1 2 3 sok 0.5 0.5 s 3 0 1", "n_buffers"}, /* 3 offsets claimed, 2 there */
      {"B 0 1 2 3 sok 0.5 0.5 s 2147483648", "n_buffers"},
      {"B 0 1 2 3 sok 0.5 0.5 s 2 0 x", "offset[1]"},
      {"B 0 1 2 3 sok 0.5 0.5 s -1 7", "7"}, /* one field too many */
      {"J 1 sok 1 2 8192 95000000 0.25 17 0 s -1", "curve_len"},
      {"J 1 sok 300 2 8192 95000000 0.25 17 0 s -1 0", "valid"},
      {"J 1 sok 1 2147483648 8192 95000000 0.25 17 0 s -1 0", "n_fast"},
      {"J 1 sok 1 2 8192 95000000 0.25 17 2 s", "n_buffers"},
      {"J 1 sok 1 2 8192 95000000 0.25 17 -129 s -1 0", "budget_hit"},
      {"J 1 sok 1 2 8192 95000000 wall 17 0 s -1 0", "wall_s"},
      {"J 1 sok 1 2 8192 95000000 0.25 1e3 0 s -1 0", "iterations"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 -1", "curve_len"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 2 0 1 2", "curve_len"}, /* 2 points, 3 fields */
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 1 0 x", "curve_return[0]"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 1 y 0", "curve_step[0]"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 1 0 1 heuristics 0.5", "heuristics"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 1 0 1 heuristic", "heuristic"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 1 0 1 heuristic h", "heuristic"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 0 heuristic 0.5", "heuristic"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 1 0 1 heuristic 0.5 0", "0"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0", "note"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    assert_body_refused(cases[i][0], cases[i][1]);
  /* a field too many: the message names the kind of line */
  const char *over[][2] = {
      {"B 0 1 2 3 sok 0.5 0.5 s -1 7", "field '7': after the last field of a baseline line"},
      {"J 1 s 1 2 8192 95000000 0.25 17 0 s -1 0 x",
       "field 'x': after the last field of a job line"}};
  for (size_t i = 0; i < 2; i++) {
    char *line = with_sum(over[i][0]);
    mb_journal_entry e;
    mb_error err = {{0}};
    assert_false(mb_journal_decode_record(line, strlen(line), "run.h5.journal", 7, &e, &err));
    assert_contains(err.message, over[i][1]);
    free(line);
  }
}

/* ---- header lines ---- */

static mb_journal_header header_with(const char *text) {
  mb_journal_header h = {.seeds = 3,
                         .budget = 0.1,
                         .search = MB_SOLVER_SEARCH_GUMBEL,
                         .profile = "quick",
                         .workloads = text,
                         .solvers = "heuristic,greedy",
                         .hardware = "",
                         .agent = text,
                         .catalogue = "/tmp/my catalogue.txt",
                         .data = text};
  snprintf(h.plan, sizeof h.plan, "%064d", 7);
  return h;
}

static void assert_same_header(const mb_journal_header *a, const mb_journal_header *b) {
  assert_string_equal(a->plan, b->plan);
  assert_int_equal(a->seeds, b->seeds);
  assert_true(a->budget == b->budget);
  assert_int_equal(a->simulations, b->simulations);
  assert_true(a->c_scale == b->c_scale);
  assert_true(a->finetune == b->finetune);
  assert_int_equal(a->finetune_steps, b->finetune_steps);
  assert_int_equal(a->leaf_rollout, b->leaf_rollout);
  assert_int_equal(a->search, b->search);
  assert_true(a->bound_budget == b->bound_budget);
  const char *ta[] = {a->profile, a->workloads, a->solvers, a->hardware,
                      a->agent,   a->catalogue, a->data};
  const char *tb[] = {b->profile, b->workloads, b->solvers, b->hardware,
                      b->agent,   b->catalogue, b->data};
  for (int i = 0; i < 7; i++) assert_string_equal(ta[i], tb[i]);
}

static void header_round_trip(const mb_journal_header *h, const char *want_prefix) {
  char *line = NULL, *again = NULL;
  size_t len = 0, len2 = 0;
  mb_error err = {{0}};
  assert_true(mb_journal_encode_header(h, &line, &len, &err));
  assert_int_equal(line[len - 1], '\n');
  assert_null(memchr(line, '\n', len - 1));
  if (want_prefix && strncmp(line, want_prefix, strlen(want_prefix)))
    fail_msg("header '%s' does not start '%s'", line, want_prefix);
  mb_journal_header back;
  if (!mb_journal_decode_header(line, len - 1, "j", &back, &err)) fail_msg("%s", err.message);
  assert_same_header(h, &back);
  assert_true(mb_journal_encode_header(&back, &again, &len2, &err));
  assert_string_equal(line, again);
  mb_journal_header_free(&back);
  free(line);
  free(again);
}

static void test_header_round_trip(void **state) {
  (void)state;
  for (size_t i = 0; i < N_NAMES; i++) {
    mb_journal_header h = header_with(NAMES[i]);
    /* at the defaults: the header runs wrote before mallocMuZero's options existed */
    header_round_trip(&h, "mallocbench-journal 1 seeds 3 budget 0.10000000000000001 plan s0000");
    h.simulations = 4;
    h.c_scale = 2.5;
    header_round_trip(&h,
                      "mallocbench-journal 1 seeds 3 budget 0.10000000000000001 "
                      "simulations 4 c_scale 2.5 finetune 0 plan s");
    h.simulations = 0;
    h.c_scale = 0;
    h.finetune_steps = 300;
    h.leaf_rollout = MB_SOLVER_NO_LEAF_ROLLOUT;
    h.search = MB_SOLVER_SEARCH_PUCT;
    header_round_trip(&h,
                      "mallocbench-journal 1 seeds 3 budget 0.10000000000000001 "
                      "simulations 0 c_scale 0 finetune 0 finetune_steps 300 leaf_rollout -1 "
                      "search puct plan s");
  }
  /* a text longer than any fixed buffer of earlier versions (8191 bytes) */
  /* the LP bound's time limit (run --bound-budget): after the other options, and only when the
   * driver gives one (0: the profile's, the header of runs made before the option) */
  mb_journal_header hb = header_with("x");
  hb.bound_budget = 0.001;
  header_round_trip(&hb,
                    "mallocbench-journal 1 seeds 3 budget 0.10000000000000001 "
                    "bound_budget 0.001 plan s");
  hb.bound_budget = 1e-9; /* tiny values come back exactly, as every real does */
  header_round_trip(&hb,
                    "mallocbench-journal 1 seeds 3 budget 0.10000000000000001 "
                    "bound_budget 1.0000000000000001e-09 plan s");
  hb.bound_budget = 250;
  hb.simulations = 4;
  hb.search = MB_SOLVER_SEARCH_PUCT;
  header_round_trip(&hb,
                    "mallocbench-journal 1 seeds 3 budget 0.10000000000000001 "
                    "simulations 4 c_scale 0 finetune 0 search puct bound_budget 250 plan s");

  char *long_text = malloc(30000);
  assert_non_null(long_text);
  for (int i = 0; i < 29999; i++) long_text[i] = (char)(i % 3 ? 'a' + i % 26 : ' ');
  long_text[29999] = '\0';
  mb_journal_header h = header_with(long_text);
  header_round_trip(&h, NULL);
  free(long_text);
}

/* The exact header of a default run (the e2e tests and older binaries read this one). */
static void test_header_golden(void **state) {
  (void)state;
  mb_journal_header h = header_with("");
  h.workloads = "^(a|b)$";
  h.data = "/data 1";
  char *line = NULL;
  size_t len = 0;
  assert_true(mb_journal_encode_header(&h, &line, &len, NULL));
  char want[512];
  snprintf(want, sizeof want,
           "mallocbench-journal 1 seeds 3 budget 0.10000000000000001 plan s%064d profile squick "
           "workloads s^(a|b)$ solvers sheuristic,greedy hardware s agent s catalogue "
           "s/tmp/my%%20catalogue.txt data s/data%%201\n",
           7);
  assert_string_equal(line, want);
  assert_null(strstr(line, "bound_budget"));
  free(line);
  h.search = 5;
  mb_error err = {{0}};
  assert_false(mb_journal_encode_header(&h, &line, &len, &err));
  assert_contains(err.message, "field 'search' 5");
}

static const char GOOD_TAIL[] =
    " plan sabc profile squick workloads s solvers sgreedy hardware s agent s catalogue sc data sd";

static void assert_header_refused(const char *line, const char *field) {
  mb_journal_header h;
  mb_error err = {{0}};
  if (mb_journal_decode_header(line, strlen(line), "run.h5.journal", &h, &err))
    fail_msg("accepted: %s", line);
  assert_null(h.storage);
  assert_contains(err.message, "run.h5.journal:1: ");
  if (!strstr(err.message, field))
    fail_msg("'%s' for %s: does not name %s", err.message, line, field);
}

static void test_header_refuses(void **state) {
  (void)state;
  char line[512];
  const char *cases[][2] = {
      {"mallocbench-journal 1 seeds x budget 1%s", "field 'seeds' 'x'"},
      {"mallocbench-journal 1 seeds 1 budget one%s", "field 'budget' 'one'"},
      {"mallocbench-journal 1 budget 1%s", "field 'seeds': missing"},
      {"mallocbench-journal 1 seeds 1%s", "field 'budget': missing"},
      {"mallocbench-journal 1 seeds 1 budget 1 simulations 1.5%s", "field 'simulations' '1.5'"},
      {"mallocbench-journal 1 seeds 1 budget 1 simulations 4294967296%s", "field 'simulations'"},
      {"mallocbench-journal 1 seeds 1 budget 1 c_scale x%s", "field 'c_scale' 'x'"},
      {"mallocbench-journal 1 seeds 1 budget 1 leaf_rollout -%s", "field 'leaf_rollout' '-'"},
      {"mallocbench-journal 1 seeds 1 budget 1 finetune_steps 1e3%s", "field 'finetune_steps'"},
      {"mallocbench-journal 1 seeds 1 budget 1 search beam%s", "field 'search' 'beam'"},
      {"mallocbench-journal 1 seeds 1 budget 1 bound_budget 5s%s", "field 'bound_budget' '5s'"},
      {"mallocbench-journal 1 seeds 1 budget 1 bound_budget s5%s", "field 'bound_budget' 's5'"},
      {"mallocbench-journal 1 seeds 1 budget 1 future 7%s", "field 'future': '7': not a text"},
      {"mallocbench-journal 1 seeds 1 budget 1 profile s%%zz%s", "field 'profile'"},
      {"mallocbench-journal 2 seeds 1 budget 1%s", "field 'version' '2'"},
      {"mallocbench-journal 1.0%s", "field 'version' '1.0': expected 1"},
      {"mallocbench-journal", "field 'version': missing"},
      {"mallocbench-journa 1 seeds 1 budget 1%s", "not a mallocbench journal header"},
      {"%s", "not a mallocbench journal header"},
      {"mallocbench-journal 1 seeds 1 budget 1%s seeds", "field 'seeds': missing (the line ends"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(line, sizeof line, cases[i][0], GOOD_TAIL);
    assert_header_refused(line, cases[i][1]);
  }
  /* each text every header has, left out in turn */
  const char *keys[] = {"plan",     "profile", "workloads", "solvers",
                        "hardware", "agent",   "catalogue", "data"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    char want[64];
    snprintf(want, sizeof want, "field '%s': missing", keys[k]);
    int n = snprintf(line, sizeof line, "mallocbench-journal 1 seeds 1 budget 1");
    for (size_t j = 0; j < sizeof keys / sizeof keys[0]; j++)
      if (j != k) n += snprintf(line + n, sizeof line - (size_t)n, " %s sx", keys[j]);
    assert_header_refused(line, want);
  }
  snprintf(line, sizeof line, "mallocbench-journal 1 seeds 1 budget 1%s", GOOD_TAIL);
  char *plan = strstr(line, "plan sabc");
  memcpy(plan, "plan s   ", 9); /* "plan s" then spaces: an empty plan */
  assert_header_refused(line, "field 'plan': empty");
  snprintf(line, sizeof line, "mallocbench-journal 1 seeds 1 budget 1 plan s%065d%s", 1, GOOD_TAIL);
  assert_header_refused(line, "field 'plan'");
}

/* An option of a later version is skipped when its value is a text; options in any order. */
static void test_header_later_options(void **state) {
  (void)state;
  char line[512];
  snprintf(line, sizeof line, "mallocbench-journal 1 budget 2 future sx%%20y seeds 5%s", GOOD_TAIL);
  mb_journal_header h;
  mb_error err = {{0}};
  if (!mb_journal_decode_header(line, strlen(line), "j", &h, &err)) fail_msg("%s", err.message);
  assert_int_equal(h.seeds, 5);
  assert_true(h.budget == 2);
  assert_string_equal(h.plan, "abc");
  assert_string_equal(h.data, "d");
  assert_string_equal(h.workloads, "");
  assert_int_equal(h.simulations, 0);
  assert_int_equal(h.search, MB_SOLVER_SEARCH_GUMBEL);
  assert_true(h.bound_budget == 0);
  mb_journal_header_free(&h);
}

/* A header written before bound_budget existed (REAL_LINES[0], the binary of 8a50532) reads
 * with bound_budget 0, the profile's default, and is written back to the same bytes; the option
 * may come anywhere among the others, like every option. */
static void test_header_bound_budget_optional(void **state) {
  (void)state;
  const char *old = REAL_LINES[0];
  mb_journal_header h;
  mb_error err = {{0}};
  if (!mb_journal_decode_header(old, strlen(old) - 1, "j", &h, &err)) fail_msg("%s", err.message);
  assert_true(h.bound_budget == 0);
  assert_int_equal(h.seeds, 20);
  char *line = NULL;
  size_t len = 0;
  assert_true(mb_journal_encode_header(&h, &line, &len, &err));
  assert_string_equal(line, old);
  free(line);
  mb_journal_header_free(&h);
  char text[512];
  snprintf(text, sizeof text, "mallocbench-journal 1 seeds 1 bound_budget 0.5 budget 2%s",
           GOOD_TAIL);
  if (!mb_journal_decode_header(text, strlen(text), "j", &h, &err)) fail_msg("%s", err.message);
  assert_true(h.bound_budget == 0.5 && h.budget == 2);
  mb_journal_header_free(&h);
}

/* ---- reading a journal file ---- */

typedef struct journal_file {
  char *path;
  char *text;
  FILE *log;
} journal_file;

/* Writes text to a journal in a fresh temporary directory (j->path, for mb_test_temp_remove) and
 * opens a log (j->log) for the reader's notes. */
static void write_journal(journal_file *j, const char *text) {
  j->path = mb_test_temp_path("run.h5.journal");
  mb_test_write_bytes(j->path, text, strlen(text));
  j->log = tmpfile();
  assert_non_null(j->log);
}

static char *line_of(int64_t task, mb_task_kind kind, const char *note) {
  mb_task_record r = mb_task_record_empty();
  snprintf(r.status, sizeof r.status, "ok");
  snprintf(r.note, sizeof r.note, "%s", note);
  char *line = NULL;
  size_t len = 0;
  assert_true(mb_journal_encode_record(task, kind, &r, &line, &len, NULL));
  return line;
}

/* header, good, damaged (bad checksum), good (the plan rejects it), bad field, good, torn */
static void test_reader(void **state) {
  (void)state;
  mb_journal_header h = header_with("x");
  char *head = NULL, *l1 = line_of(0, MB_TASK_BASELINE, "a, \"b\""),
       *l3 = line_of(2, MB_TASK_JOB, "");
  char *l4 = line_of(99, MB_TASK_JOB, ""), *l6 = line_of(5, MB_TASK_JOB, "last");
  size_t len = 0;
  assert_true(mb_journal_encode_header(&h, &head, &len, NULL));
  char *l2 = line_of(1, MB_TASK_JOB, "damaged");
  l2[5] = 'X'; /* "J 1 sXk ...": the checksum no longer matches */
  char *l5 = with_sum("J 7 sok 1 0 0 5 0.5 3 1 s -1 zero");
  char text[4096];
  snprintf(text, sizeof text, "%s%s%s%s%s%s\n%sJ 8 sok 1", head, l1, l2, l3, l4, l5, l6);
  journal_file j;
  write_journal(&j, text);
  mb_journal_reader rd;
  mb_error err = {{0}};
  assert_true(mb_journal_open(&rd, j.path, j.log, &err));
  mb_journal_header back;
  assert_true(mb_journal_read_header(&rd, &back, &err));
  assert_same_header(&h, &back);
  mb_journal_header_free(&back);
  mb_journal_entry e;
  int64_t tasks[8];
  int n = 0;
  mb_journal_step step;
  while ((step = mb_journal_next(&rd, &e, &err)) == MB_JOURNAL_RECORD) {
    if (e.task == 99)
      mb_journal_reject(&rd, "field 'task' %d: the plan has 10 tasks", 99);
    else
      tasks[n++] = e.task;
    mb_task_record_clear(&e.r);
  }
  assert_int_equal(step, MB_JOURNAL_END);
  assert_int_equal(n, 3);
  assert_int_equal(tasks[0], 0);
  assert_int_equal(tasks[1], 2);
  assert_int_equal(tasks[2], 5);
  assert_int_equal(mb_journal_finish(&rd), 3);
  size_t kept_len = 0;
  const char *kept = mb_journal_kept(&rd, &kept_len);
  char want[4096];
  snprintf(want, sizeof want, "%s%s%s%s", head, l1, l3, l6);
  assert_int_equal(kept_len, strlen(want));
  assert_memory_equal(kept, want, kept_len);
  mb_journal_close(&rd);
  char *notes = mb_test_stream_text(j.log);
  char expect[4300];
  snprintf(expect, sizeof expect, "%s:3: damaged line skipped (field 'checksum' ", j.path);
  assert_contains(notes, expect);
  snprintf(expect, sizeof expect,
           "%s:5: damaged line skipped (field 'task' 99: the plan has 10 tasks); its task runs "
           "again",
           j.path);
  assert_contains(notes, expect);
  snprintf(expect, sizeof expect, "%s:6: damaged line skipped (field 'curve_len' 'zero'", j.path);
  assert_contains(notes, expect);
  snprintf(expect, sizeof expect, "%s:8: torn last line dropped (a kill during its write)", j.path);
  assert_contains(notes, expect);
  assert_null(strstr(notes, "in all"));
  free(notes);
  fclose(j.log);
  mb_test_temp_remove(j.path);
  free(head);
  free(l1);
  free(l2);
  free(l3);
  free(l4);
  free(l5);
  free(l6);
}

/* n_damaged damaged lines, then a good one: the first five are noted one by one, and a count
 * follows when there were more. */
static void read_after_damaged(int n_damaged) {
  mb_journal_header h = header_with("");
  char *head = NULL;
  size_t len = 0;
  assert_true(mb_journal_encode_header(&h, &head, &len, NULL));
  char text[8192];
  int n = snprintf(text, sizeof text, "%s", head);
  for (int i = 0; i < n_damaged; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "J %d garbage\n", i);
  char *good = line_of(9, MB_TASK_JOB, "after");
  snprintf(text + n, sizeof text - (size_t)n, "%s", good);
  journal_file j;
  write_journal(&j, text);
  mb_journal_reader rd;
  mb_journal_header back;
  assert_true(mb_journal_open(&rd, j.path, j.log, NULL));
  assert_true(mb_journal_read_header(&rd, &back, NULL));
  mb_journal_header_free(&back);
  mb_journal_entry e;
  assert_int_equal(mb_journal_next(&rd, &e, NULL), MB_JOURNAL_RECORD);
  assert_int_equal(e.task, 9); /* read after the damaged lines */
  assert_string_equal(e.r.note, "after");
  mb_task_record_clear(&e.r);
  assert_int_equal(mb_journal_next(&rd, &e, NULL), MB_JOURNAL_END);
  assert_int_equal(mb_journal_finish(&rd), n_damaged);
  mb_journal_close(&rd);
  char *notes = mb_test_stream_text(j.log);
  int noted = 0;
  for (const char *p = notes; (p = strstr(p, "damaged line skipped (")) != NULL; p++) noted++;
  assert_int_equal(noted, n_damaged < 5 ? n_damaged : 5);
  char expect[4300];
  snprintf(expect, sizeof expect, "%s:6: damaged line skipped (field 'checksum'", j.path);
  assert_contains(notes, expect);
  if (n_damaged > 5) {
    snprintf(expect, sizeof expect, "%s: %d damaged lines skipped in all", j.path, n_damaged);
    assert_contains(notes, expect);
  } else {
    assert_null(strstr(notes, "in all"));
  }
  free(notes);
  fclose(j.log);
  mb_test_temp_remove(j.path);
  free(head);
  free(good);
}

static void test_reader_many_damaged(void **state) {
  (void)state;
  read_after_damaged(5); /* all noted: no count */
  read_after_damaged(8);
}

static void test_reader_no_journal_or_torn_header(void **state) {
  (void)state;
  mb_journal_reader rd;
  mb_error err = {{0}};
  char *path = mb_test_temp_path("none.journal");
  bool opened = mb_journal_open(&rd, path, NULL, &err);
  int e = errno;
  assert_false(opened);
  assert_int_equal(e, ENOENT);
  assert_contains(err.message, "cannot read the journal");
  mb_test_temp_remove(path);
  journal_file j;
  write_journal(&j, "mallocbench-journal 1 seeds 1 budget 1 plan sab");
  assert_true(mb_journal_open(&rd, j.path, j.log, &err));
  mb_journal_header h;
  assert_false(mb_journal_read_header(&rd, &h, &err));
  char expect[4300];
  snprintf(expect, sizeof expect, "%s:1: the header line is torn", j.path);
  assert_contains(err.message, expect);
  mb_journal_close(&rd);
  fclose(j.log);
  mb_test_temp_remove(j.path);
}

/* Names from files reach the notes escaped (error.h): a path holding a line break and ESC. */
static void test_reader_notes_escaped(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir();
  char path[4200];
  snprintf(path, sizeof path, "%s/run\n\x1b[2J.journal", dir);
  mb_journal_header h = header_with("");
  char *head = NULL;
  size_t len = 0;
  assert_true(mb_journal_encode_header(&h, &head, &len, NULL));
  char text[1024];
  snprintf(text, sizeof text, "%sJ 1 bad\n", head);
  mb_test_write_bytes(path, text, strlen(text));
  FILE *log = tmpfile();
  assert_non_null(log);
  mb_journal_reader rd;
  mb_journal_header back;
  mb_journal_entry e;
  assert_true(mb_journal_open(&rd, path, log, NULL));
  assert_true(mb_journal_read_header(&rd, &back, NULL));
  mb_journal_header_free(&back);
  assert_int_equal(mb_journal_next(&rd, &e, NULL), MB_JOURNAL_END);
  mb_journal_close(&rd);
  char *notes = mb_test_stream_text(log);
  assert_contains(notes, "/run\\x0a\\x1b[2J.journal:2: damaged line skipped");
  assert_null(strchr(notes, '\x1b'));
  assert_int_equal(strchr(notes, '\n') - notes, (long)strlen(notes) - 1); /* one line */
  free(notes);
  fclose(log);
  free(head);
  mb_test_temp_remove(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_escape_round_trip),
      cmocka_unit_test(test_escape_bytes),
      cmocka_unit_test(test_unescape_refuses),
      cmocka_unit_test(test_record_round_trip),
      cmocka_unit_test(test_record_golden),
      cmocka_unit_test(test_record_reals_exact),
      cmocka_unit_test(test_record_without_reference),
      cmocka_unit_test(test_truncated_lines),
      cmocka_unit_test(test_bad_checksum),
      cmocka_unit_test(test_bad_fields),
      cmocka_unit_test(test_header_round_trip),
      cmocka_unit_test(test_header_golden),
      cmocka_unit_test(test_header_refuses),
      cmocka_unit_test(test_header_later_options),
      cmocka_unit_test(test_header_bound_budget_optional),
      cmocka_unit_test(test_reader),
      cmocka_unit_test(test_reader_many_damaged),
      cmocka_unit_test(test_reader_no_journal_or_torn_header),
      cmocka_unit_test(test_reader_notes_escaped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
