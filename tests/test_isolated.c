/* Work run in a child process: its return value comes back; a crash, an abort or an exit of its
 * own ends the child only and is reported with how it ended; the child's writes to memory and
 * to stdout/stderr do not reach the caller. A supervised child's exit status comes back as it
 * is, its fault is reported, and another signal ends the supervisor too. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "isolated.h"
#include "paths.h"
#include "support.h"

enum { BLOCK = 4096 }; /* bytes: beyond glibc's per-thread cache, within ASan's malloc fill */

static int return_ctx(void *ctx, mb_error *err) {
  (void)err;
  return *(int *)ctx;
}

/* Fails as a reader does, with a message: the code is *ctx. */
static int fails_saying_why(void *ctx, mb_error *err) {
  mb_fail(err, "data.h5: attribute 'x': \x01 is not a number");
  return *(int *)ctx;
}

/* Fails with a message of the longest length an mb_error holds. */
static int fails_at_length(void *ctx, mb_error *err) {
  (void)ctx;
  memset(err->message, 'm', sizeof err->message - 1);
  err->message[sizeof err->message - 1] = '\0';
  return 1;
}

static int write_and_return(void *ctx, mb_error *err) {
  (void)err;
  *(int *)ctx = 99; /* the caller's copy stays as it was */
  /* unbuffered, as a library's messages or a sanitizer's report are */
  const char text[] = "child output\n";
  if (write(STDOUT_FILENO, text, sizeof text - 1) < 0) return 6;
  fprintf(stderr, "child error output\n");
  return 5;
}

static int segfault(void *ctx, mb_error *err) {
  (void)err;
  (void)ctx;
  raise(SIGSEGV); /* what a crash inside a library does, without undefined behaviour here */
  return 0;
}

static int aborts(void *ctx, mb_error *err) {
  (void)err;
  (void)ctx;
  abort();
}

static int exits(void *ctx, mb_error *err) {
  (void)err;
  (void)ctx;
  exit(0); /* a library that exits: fn did not return */
}

/* Whether a fresh 4 KiB block holds a zero byte. Reading what malloc returned before writing
 * it is what the perturbation is for: unsigned char has no trap values, so it reads garbage. */
static int block_has_zeros(void *ctx, mb_error *err) {
  (void)err;
  (void)ctx;
  /* through a volatile: the compiler would otherwise fold a read of a fresh block it knows
   * nothing was written to */
  unsigned char *volatile fresh = malloc(BLOCK);
  unsigned char *block = fresh;
  if (!block) return MB_ISOLATED_MAX_CODE;
  return memchr(block, 0, BLOCK) != NULL;
}

static void test_returns_code(void **state) {
  (void)state;
  mb_error err = {{0}};
  for (int want = 0; want <= MB_ISOLATED_MAX_CODE; want += 21) {
    int code = -1;
    assert_int_equal(mb_isolated_run(return_ctx, &want, &code, &err), MB_ISOLATED_RETURNED);
    assert_int_equal(code, want);
  }
  int x = 7, code = -1;
  assert_int_equal(mb_isolated_run(write_and_return, &x, &code, &err), MB_ISOLATED_RETURNED);
  assert_int_equal(code, 5);
  assert_int_equal(x, 7);
}

/* A failing child's message reaches the caller; a child that succeeds, or fails without one,
 * leaves the caller's err as it was. */
static void test_returns_message(void **state) {
  (void)state;
  mb_error err = {{0}};
  int code = -1, fail = 3, succeed = 0, x = 1;
  assert_int_equal(mb_isolated_run(fails_saying_why, &fail, &code, &err), MB_ISOLATED_RETURNED);
  assert_int_equal(code, 3);
  assert_string_equal(err.message, "data.h5: attribute 'x': \\x01 is not a number");
  mb_fail(&err, "earlier");
  assert_int_equal(mb_isolated_run(fails_saying_why, &succeed, &code, &err), MB_ISOLATED_RETURNED);
  assert_int_equal(code, 0);
  assert_string_equal(err.message, "earlier");
  assert_int_equal(mb_isolated_run(write_and_return, &x, &code, &err), MB_ISOLATED_RETURNED);
  assert_int_equal(code, 5);
  assert_string_equal(err.message, "earlier");
  assert_int_equal(mb_isolated_run(fails_saying_why, &fail, &code, NULL), MB_ISOLATED_RETURNED);
  assert_int_equal(code, 3);
  assert_int_equal(mb_isolated_run(fails_at_length, NULL, &code, &err), MB_ISOLATED_RETURNED);
  assert_int_equal(code, 1);
  assert_int_equal(strlen(err.message), sizeof err.message - 1);
  assert_int_equal(strspn(err.message, "m"), sizeof err.message - 1);
}

static void test_reports_how_the_child_died(void **state) {
  (void)state;
  mb_error err = {{0}};
  int code = -1;
  assert_int_equal(mb_isolated_run(segfault, NULL, &code, &err), MB_ISOLATED_DIED);
  /* signal 11 itself, or the abort of AddressSanitizer's report (abort_on_error) */
  if (!strstr(err.message, "crashed with signal 11 (") &&
      !strstr(err.message, "crashed with signal 6 ("))
    fail_msg("segfault: %s", err.message);
  assert_non_null(strstr(err.message, "in a child process"));
  assert_int_equal(code, -1);
  assert_int_equal(mb_isolated_run(aborts, NULL, &code, &err), MB_ISOLATED_DIED);
  assert_non_null(strstr(err.message, "crashed with signal 6 ("));
  assert_int_equal(mb_isolated_run(exits, NULL, &code, &err), MB_ISOLATED_DIED);
  assert_non_null(strstr(err.message, "ended abnormally (exit status 0)"));
  /* a code out of range is no returned code either */
  int big = MB_ISOLATED_MAX_CODE + 1;
  assert_int_equal(mb_isolated_run(return_ctx, &big, &code, &err), MB_ISOLATED_DIED);
  assert_non_null(strstr(err.message, "ended abnormally (exit status 1)"));
  assert_int_equal(code, -1);
}

/* The caller goes on as before, and the child's output is not the caller's. */
static void test_caller_unaffected(void **state) {
  (void)state;
  mb_error err = {{0}};
  int code = -1;
  char *out_path = mb_test_write_temp(".out", "");
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  FILE *out = fopen(out_path, "w");
  assert_non_null(out);
  assert_true(saved >= 0 && dup2(fileno(out), STDOUT_FILENO) >= 0);
  int x = 1;
  assert_int_equal(mb_isolated_run(write_and_return, &x, &code, &err), MB_ISOLATED_RETURNED);
  printf("caller output\n");
  fflush(stdout);
  assert_true(dup2(saved, STDOUT_FILENO) >= 0);
  close(saved);
  fclose(out);
  size_t len = 0;
  char *text = mb_read_file(out_path, &len);
  assert_non_null(text);
  assert_string_equal(text, "caller output\n");
  free(text);
  mb_test_temp_remove(out_path);
  for (int i = 0; i < 20; i++)
    assert_int_equal(mb_isolated_run(segfault, NULL, &code, &err), MB_ISOLATED_DIED);
  x = 3;
  assert_int_equal(mb_isolated_run(return_ctx, &x, &code, &err), MB_ISOLATED_RETURNED);
  assert_int_equal(code, 3);
}

/* The child of mb_supervise does the work; in the test it ends at once, as `how` says. Work
 * done in the caller's own process, or after an error, ends the caller (exit 97): the test
 * fails. */
static int supervise_and_end(int how) {
  pid_t caller = getpid();
  mb_error err = {{0}};
  int status = mb_supervise(&err);
  if (status != MB_SUPERVISED_CHILD) return status;
  if (getpid() == caller || err.message[0]) _exit(97);
  if (how >= 0) _exit(how);
  signal(-how, SIG_DFL); /* not cmocka's handler: the child must die of it */
  raise(-how);
  _exit(99);
}

/* A library's read of memory it never wrote meets garbage in the child, not the zeros a fresh
 * heap or the caller's freed blocks may hold there: a 4 KiB block (larger than glibc's
 * per-thread cache keeps as it is) that the caller has just freed zeroed comes back filled. */
static void test_child_memory_is_garbage(void **state) {
  (void)state;
  unsigned char *volatile zeroed = calloc(1, BLOCK);
  free(zeroed);
  mb_error err = {{0}};
  int code = -1;
  assert_int_equal(mb_isolated_run(block_has_zeros, NULL, &code, &err), MB_ISOLATED_RETURNED);
  assert_int_equal(code, 0);
}

static void test_supervise(void **state) {
  (void)state;
  /* the child's exit status comes back as it is */
  assert_int_equal(supervise_and_end(0), 0);
  assert_int_equal(supervise_and_end(2), 2);
  assert_int_equal(supervise_and_end(200), 200);
  /* a fault: reported, and the caller goes on */
  mb_error err = {{0}};
  int status = mb_supervise(&err);
  if (status == MB_SUPERVISED_CHILD) {
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    _exit(99);
  }
  assert_int_equal(status, MB_SUPERVISED_CRASHED);
  assert_non_null(strstr(err.message, "crashed with signal 11 ("));
  assert_int_equal(supervise_and_end(-SIGABRT), MB_SUPERVISED_CRASHED);
  /* another signal (a closed pipe, Ctrl-C) ends the supervising parent the same way: seen from
   * a process of the test's own that supervises */
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(supervise_and_end(-SIGPIPE) == MB_SUPERVISED_CRASHED ? 98 : 97);
  int wstatus = 0;
  assert_true(waitpid(pid, &wstatus, 0) == pid);
  assert_true(WIFSIGNALED(wstatus));
  assert_int_equal(WTERMSIG(wstatus), SIGPIPE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_returns_code),
      cmocka_unit_test(test_returns_message),
      cmocka_unit_test(test_reports_how_the_child_died),
      cmocka_unit_test(test_caller_unaffected),
      cmocka_unit_test(test_child_memory_is_garbage),
      cmocka_unit_test(test_supervise),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
