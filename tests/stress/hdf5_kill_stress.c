/* hdf5_kill_stress: is a results file killed with SIGKILL consistent?
 *
 * results/README.md ("Crash safety and resuming") promises that a killed results file keeps
 * every committed task's row and assignment. tests/e2e/run_resume.sh checks killed files after
 * ~60 kills of the real CLI per run, too few to see a rare failure (it failed once in CI, then
 * not in 50 runs). This program kills at a high rate: each round forks a child that writes a
 * fresh results file through suite/results.c as the driver does (the same functions, so the
 * same file and group properties and the same flush order):
 *   mb_results_create, mb_results_put_workload + split for every workload, flush; then per
 *   (workload, hardware) pair: mb_results_append_baseline + flush, and per (solver, seed):
 *   mb_results_append (assignment, flush, row) + mb_results_flush (driver.c commit()),
 * reporting every committed task on a pipe after its final flush. The parent kills it with
 * SIGKILL after a random number of commits plus a random delay (0 .. 2 task durations), so
 * kills land anywhere in a task, inside H5Fflush included (the phase the child was in is kept
 * in shared memory and tallied). A checker process (a crash on a damaged file counts as
 * damage) then opens the killed file read-only and checks that:
 *   - it opens, and every /workloads copy reads back;
 *   - every committed task's assignment (found by the names the plan gives it) is there, with
 *     the expected offsets, and so is its row, with the expected contents;
 *   - the row of the task in flight, if there, is the plan's and has its assignment.
 * A torn in-flight row (it reads as zeros, or the table reads only up to it) is told apart:
 * every committed task is intact then; the readers (results.c, read_table) drop it and count
 * it (mb_results_torn_rows), `mallocbench verify` notes it, and a resume writes it again. A round
 * whose child was killed before its file was set up does not count as a kill.
 *
 * Build: the CMake target hdf5_kill_stress; ctest runs only --self-test and a 200-kill variant
 * (tests/stress/CMakeLists.txt). The measurement below:
 *   build/tests/stress/hdf5_kill_stress --kills 5000 --seed 7
 * (defaults --workloads 4 --solvers 2 --seeds 50 --buffers 35: the shape of
 * tests/e2e/run_resume.sh, where a solver's group grows to 50 links; --keep N keeps the first
 * N damaged files; --allow-torn-tail exits 0 when only in-flight rows were torn). Exit 0: no
 * damaged file; 1: damage; 2: usage or setup error.
 *
 * Measured (Release, HDF5 1.10.8, Debian 12, 2 shared cores; damaged files per 1000 kills,
 * "committed" = a committed task's assignment unreachable, "torn" = only the in-flight row):
 *   HDF5's default symbol-table groups (sym_k 16/4, default heap; before suite/results.c
 *   created its groups): 10000 kills (seeds 7, 21): 25.2 committed, 0.7 torn;
 *   40 workloads x 4 solvers x 3 seeds: 7 committed in 1000 kills.
 *   H5Pset_sym_k(16, 32) alone: 43 committed in 1000; a 1024-byte local heap hint alone: 13;
 *   both: 4 committed in 2500 (a heap header and its names, one write, cut at a page edge).
 *   Compact groups as suite/results.c creates them: 10000 kills (seeds 7, 21): 0 committed,
 *   0.7 torn; 40 x 4 x 3: 0 in 1000; 100 seeds (past the 64 links reserved): 0 in 1000; with
 *   every reservation cut to 4 links: 9 committed per 1000 (2000 kills).
 *   HDF5's newer format (H5F_LIBVER_V18 bounds: checksummed superblock and object headers),
 *   tried so that damaged files fail a checksum rather than crash libhdf5: 3 committed per 1000
 *   (1000 kills, seed 7: a group whose header a kill cut fails its checksum, and every link in
 *   it is lost); the oldest format, same seed: 0. So results files keep the oldest format.
 *   With the seal block (suite/file_seal.h, 2026-11-29): 1000 kills, seed 7: 0 committed, 1 torn.
 *   Killed files are in their seal's "open" state and checked as HDF5 alone; delete_link below
 *   removes the seal of the complete file it edits.
 */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "assignment.h"
#include "clock.h"
#include "error.h"
#include "results.h"
#include "rng.h"
#include "workload.h"

typedef struct config {
  int64_t kills;
  uint64_t seed;
  int32_t n_workloads, n_solvers, n_seeds, n_buffers;
  int32_t keep; /* damaged files kept for inspection */
  const char *dir;
  bool self_test;
  bool allow_torn_tail; /* exit 0 when the only damage is a torn in-flight row */
  bool verbose;
} config;

/* One task of the plan, in commit order. */
typedef struct task {
  bool baseline;
  int32_t workload, solver, seed;
} task;

typedef struct plan {
  task *tasks;
  int64_t n_tasks, n_rows, n_baselines;
} plan;

/* Where the child is: written by the child, read by the parent after the kill. */
enum phase { PH_SETUP, PH_BASELINE, PH_APPEND, PH_FLUSH, PH_REPORT, PH_DONE, PH_COUNT };
static const char *const phase_names[PH_COUNT] = {"setup", "append_baseline", "append",
                                                  "flush", "report",          "done"};

typedef struct shared_state {
  volatile int32_t phase;
  volatile int32_t setup_done;
} shared_state;

/* What the checker found. D_TAIL is the one kind that leaves every committed task intact. */
enum damage {
  D_OPEN,             /* the file does not open as a results file */
  D_WORKLOADS,        /* a stored workload copy is gone or does not read */
  D_ROW_LOST,         /* a committed task's row is missing or unreadable */
  D_ROW_WRONG,        /* a committed task's row has other contents */
  D_ASSIGN_COMMITTED, /* a committed task's assignment is unreachable (the CI failure) */
  D_ASSIGN_IN_FLIGHT, /* the in-flight task's row is there, its assignment is not */
  D_ASSIGN_WRONG,     /* an assignment with other offsets */
  D_TAIL,             /* the in-flight row is torn: its table reads as zeros there, or does
                         not read whole (the committed rows before it do) */
  D_CHECKER_CRASHED,  /* the checker died on the file (HDF5 crashed reading it) */
  D_COUNT
};
static const char *const damage_names[D_COUNT] = {"does not open",
                                                  "workload copy damaged",
                                                  "committed row lost",
                                                  "committed row wrong",
                                                  "committed row without its assignment",
                                                  "in-flight row without its assignment",
                                                  "assignment contents wrong",
                                                  "in-flight row torn (committed rows intact)",
                                                  "checker crashed"};

typedef struct verdict {
  int32_t count[D_COUNT];
  char first[512]; /* the first problem, in words */
} verdict;

static const char *const solver_names[] = {"heuristic", "greedy", "mallocmuzero",
                                           "mallocmuzero-exact"};

static void solver_name(int32_t s, char *out, size_t n) {
  if (s < 4)
    snprintf(out, n, "%s", solver_names[s]);
  else
    snprintf(out, n, "solver%d", (int)s);
}

static void workload_name(int32_t w, char *out, size_t n) {
  snprintf(out, n, "stress_net_%03d_train_b%d", (int)w, 32 << (w % 4));
}

#define HARDWARE "tpu-v4i"

/* The offsets stored for a task: a deterministic pattern, so the checker knows them. */
static void fill_assignment(mb_assignment *a, int64_t task_no) {
  for (int32_t i = 0; i < a->n_buffers; i++)
    a->offset[i] = (task_no * 31 + i) % 7 == 0 ? MB_SLOW : task_no * 65536 + (int64_t)i * 256;
}

static mb_result_row make_row(const config *c, const plan *p, int64_t t) {
  const task *k = &p->tasks[t];
  mb_result_row r;
  memset(&r, 0, sizeof r);
  r.task = t;
  workload_name(k->workload, r.workload, sizeof r.workload);
  snprintf(r.hardware, sizeof r.hardware, HARDWARE);
  solver_name(k->solver, r.solver, sizeof r.solver);
  r.seed = k->seed;
  snprintf(r.status, sizeof r.status, "ok");
  r.valid = 1;
  r.capacity = 2 << 20;
  r.n_buffers = c->n_buffers;
  r.t_slow_ps = 1000000 + t;
  r.t_heuristic_ps = 800000;
  r.t_solver_ps = 700000 - t;
  r.t_bound_ps = 600000;
  snprintf(r.note, sizeof r.note, "hdf5_kill_stress task %" PRId64, t);
  mb_result_row_derive(&r);
  return r;
}

static mb_baseline_row make_baseline(const plan *p, int64_t t) {
  const task *k = &p->tasks[t];
  mb_baseline_row b;
  memset(&b, 0, sizeof b);
  b.task = t;
  workload_name(k->workload, b.workload, sizeof b.workload);
  snprintf(b.hardware, sizeof b.hardware, HARDWARE);
  b.capacity = 2 << 20;
  b.alignment = 256;
  b.t_slow_ps = 1000000 + t;
  b.t_heuristic_ps = 800000;
  b.t_bound_ps = 600000;
  snprintf(b.bound_status, sizeof b.bound_status, "ok");
  return b;
}

static mb_workload *make_workload(const config *c, int32_t w, mb_error *err) {
  char name[MB_RES_WORKLOAD];
  workload_name(w, name, sizeof name);
  mb_workload_builder *b = mb_builder_new(name, "hdf5_kill_stress");
  int32_t n_ops = c->n_buffers + 1;
  for (int32_t i = 0; i < n_ops; i++) {
    char op[32];
    snprintf(op, sizeof op, "op%d", (int)i);
    mb_builder_add_op(b, op, "fusion", 1e6);
  }
  for (int32_t i = 0; i < c->n_buffers; i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "buf%d", (int)i);
    int32_t id = mb_builder_add_buffer(b, buf, 4096 * (i + 1), i, i + 1, false);
    mb_builder_add_use(b, id, i, 0, 4096 * (i + 1));
    mb_builder_add_use(b, id, i + 1, 4096 * (i + 1), 0);
  }
  return mb_builder_finish(b, err);
}

static bool make_plan(const config *c, plan *p) {
  int64_t pairs = c->n_workloads;
  p->n_tasks = pairs * (1 + (int64_t)c->n_solvers * c->n_seeds);
  if (p->n_tasks > 10000000) {
    fprintf(stderr,
            "hdf5_kill_stress: %" PRId64
            " tasks: at most 10000000 (fewer workloads, "
            "solvers or seeds)\n",
            p->n_tasks);
    return false;
  }
  p->tasks = calloc((size_t)p->n_tasks, sizeof *p->tasks);
  if (!p->tasks) {
    fprintf(stderr, "hdf5_kill_stress: out of memory for %" PRId64 " tasks\n", p->n_tasks);
    return false;
  }
  int64_t t = 0;
  p->n_rows = p->n_baselines = 0;
  for (int32_t w = 0; w < c->n_workloads; w++) {
    p->tasks[t++] = (task){true, w, -1, -1};
    p->n_baselines++;
    for (int32_t s = 0; s < c->n_solvers; s++)
      for (int32_t k = 0; k < c->n_seeds; k++) p->tasks[t++] = (task){false, w, s, k};
    p->n_rows += (int64_t)c->n_solvers * c->n_seeds;
  }
  return true;
}

/* ---- the child: writes the file as the driver does ---- */

static bool write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

static int child_main(const config *c, const plan *p, const char *path, int report_fd,
                      shared_state *sh) {
  mb_error err = {{0}};
  sh->phase = PH_SETUP;
  mb_results *r = mb_results_create(path, true, &err);
  bool ok = r != NULL;
  for (int32_t w = 0; ok && w < c->n_workloads; w++) {
    mb_workload *wl = make_workload(c, w, &err);
    ok = wl && mb_results_put_workload(r, wl->name, wl, "0123", &err) &&
         mb_results_set_workload_split(r, wl->name, "test", &err);
    mb_workload_free(wl);
  }
  ok = ok && mb_results_flush(r, &err);
  sh->setup_done = ok;
  mb_assignment *a = ok ? mb_assignment_new(c->n_buffers) : NULL;
  ok = ok && a;
  for (int64_t t = 0; ok && t < p->n_tasks; t++) {
    fill_assignment(a, t);
    if (p->tasks[t].baseline) {
      mb_baseline_row b = make_baseline(p, t);
      sh->phase = PH_BASELINE;
      ok = mb_results_append_baseline(r, &b, a, &err);
    } else {
      mb_result_row row = make_row(c, p, t);
      sh->phase = PH_APPEND;
      ok = mb_results_append(r, &row, a, NULL, NULL, 0, NAN, &err);
    }
    sh->phase = PH_FLUSH;
    ok = ok && mb_results_flush(r, &err);
    sh->phase = PH_REPORT;
    uint32_t done = (uint32_t)t;
    ok = ok && write_all(report_fd, &done, sizeof done);
  }
  mb_assignment_free(a);
  ok = mb_results_close(r, ok ? &err : NULL) && ok;
  sh->phase = PH_DONE;
  if (!ok) fprintf(stderr, "hdf5_kill_stress: child: %s\n", err.message);
  return ok ? 0 : 1;
}

/* ---- the checker: runs in its own process (HDF5 may crash on a damaged file) ---- */

static void note(verdict *v, enum damage d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(verdict *v, enum damage d, const char *fmt, ...) {
  if (v->count[d]++ == 0 && !v->first[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->first, sizeof v->first, fmt, ap);
    va_end(ap);
  }
}

static bool same_offsets(const mb_assignment *got, int64_t task_no, int32_t n_buffers) {
  if (got->n_buffers != n_buffers) return false;
  mb_assignment *want = mb_assignment_new(n_buffers);
  if (!want) return false;
  fill_assignment(want, task_no);
  bool same = !memcmp(got->offset, want->offset, (size_t)n_buffers * sizeof *got->offset);
  mb_assignment_free(want);
  return same;
}

/* Whether the first n rows of table `name` read and hold the tasks `want` (HDF5 directly,
 * reading only the "task" member: used when the whole table does not read). */
static bool prefix_reads(const char *path, const char *name, const int64_t *want, int64_t n) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = f >= 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1;
  hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(int64_t));
  H5Tinsert(mt, "task", 0, H5T_NATIVE_INT64);
  int64_t *got = calloc(n > 0 ? (size_t)n : 1, sizeof *got);
  bool ok = d >= 0 && got;
  if (ok && n > 0) {
    hsize_t start[1] = {0}, count[1] = {(hsize_t)n};
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, count, NULL);
    ok = fs >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
         H5Dread(d, mt, ms, fs, H5P_DEFAULT, got) >= 0 &&
         !memcmp(got, want, (size_t)n * sizeof *got);
    H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
  }
  free(got);
  H5Tclose(mt);
  if (d >= 0) H5Dclose(d);
  if (f >= 0) H5Fclose(f);
  return ok;
}

/* committed: number of tasks (in plan order) whose final flush returned. */
static void check_file(const config *c, const plan *p, const char *path, int64_t committed,
                       verdict *v) {
  memset(v, 0, sizeof *v);
  mb_error err = {{0}};
  mb_results *r = mb_results_open(path, false, &err);
  if (!r) {
    note(v, D_OPEN, "%s", err.message);
    return;
  }
  for (int32_t w = 0; w < c->n_workloads; w++) {
    char name[MB_RES_WORKLOAD];
    workload_name(w, name, sizeof name);
    mb_workload *wl = mb_results_get_workload(r, name, NULL, &err);
    if (!wl || wl->n_buffers != c->n_buffers) note(v, D_WORKLOADS, "%s", err.message);
    mb_workload_free(wl);
  }
  /* every committed task's assignment, found by the names the plan gives it */
  int64_t want_n[2] = {0, 0}; /* committed rows, baselines */
  int64_t *want_task[2] = {calloc((size_t)p->n_rows + 1, sizeof(int64_t)),
                           calloc((size_t)p->n_baselines + 1, sizeof(int64_t))};
  for (int64_t t = 0; t < committed && want_task[0] && want_task[1]; t++) {
    const task *k = &p->tasks[t];
    bool absent = false;
    mb_assignment *a;
    if (k->baseline) {
      mb_baseline_row b = make_baseline(p, t);
      a = mb_results_get_baseline_assignment(r, &b, &absent, &err);
    } else {
      mb_result_row row = make_row(c, p, t);
      a = mb_results_get_assignment(r, &row, &absent, &err);
    }
    want_task[k->baseline][want_n[k->baseline]++] = t;
    if (!a)
      note(v, D_ASSIGN_COMMITTED, "task %" PRId64 " (committed): %s", t, err.message);
    else if (!same_offsets(a, t, c->n_buffers))
      note(v, D_ASSIGN_WRONG, "%s: task %" PRId64 ": stored offsets differ", path, t);
    mb_assignment_free(a);
  }
  /* the tables: the committed rows, and the in-flight one (if there) with its assignment */
  mb_result_row *rows = NULL;
  mb_baseline_row *base = NULL;
  int64_t nr = 0, nb = 0;
  bool rows_ok = mb_results_read_rows(r, &rows, &nr, &err);
  char why[MB_ERROR_MAX];
  snprintf(why, sizeof why, "%s", err.message);
  bool base_ok = mb_results_read_baselines(r, &base, &nb, &err);
  if (!base_ok) snprintf(why, sizeof why, "%s", err.message);
  if (rows_ok && base_ok && (nr < want_n[0] || nb < want_n[1])) {
    note(v, D_ROW_LOST,
         "%s: %" PRId64 " rows and %" PRId64 " baselines, %" PRId64 " and %" PRId64 " committed",
         path, nr, nb, want_n[0], want_n[1]);
  } else if (rows_ok && base_ok && mb_results_torn_rows(r) > 0) {
    /* the readers dropped a torn tail (results.c, read_table): past the committed rows */
    note(v, D_TAIL, "%s: %" PRId64 " torn row(s) at the end dropped by the reader", path,
         mb_results_torn_rows(r));
  }
  for (int64_t t = 0, ir = 0, ib = 0; rows_ok && base_ok && t < p->n_tasks && (ir < nr || ib < nb);
       t++) {
    const task *k = &p->tasks[t];
    if (k->baseline ? ib >= nb : ir >= nr) continue;
    bool row_ok;
    if (k->baseline) {
      mb_baseline_row want = make_baseline(p, t);
      const mb_baseline_row *got = &base[ib++];
      row_ok = got->task == t && !strcmp(got->workload, want.workload) &&
               !strcmp(got->hardware, want.hardware);
    } else {
      mb_result_row want = make_row(c, p, t);
      const mb_result_row *got = &rows[ir++];
      row_ok = got->task == t && got->seed == want.seed && !strcmp(got->solver, want.solver) &&
               !strcmp(got->workload, want.workload) && !strcmp(got->note, want.note);
    }
    if (!row_ok) {
      note(v, t < committed ? D_ROW_WRONG : D_TAIL,
           "%s: task %" PRId64
           " (%s): the row is not "
           "the plan's",
           path, t, t < committed ? "committed" : "in flight");
    } else if (t >= committed) { /* committed ones were checked above */
      bool absent = false;
      mb_assignment *a = k->baseline
                             ? mb_results_get_baseline_assignment(r, &base[ib - 1], &absent, &err)
                             : mb_results_get_assignment(r, &rows[ir - 1], &absent, &err);
      if (!a)
        note(v, D_ASSIGN_IN_FLIGHT, "task %" PRId64 " (in flight): %s", t, err.message);
      else if (!same_offsets(a, t, c->n_buffers))
        note(v, D_ASSIGN_WRONG, "%s: task %" PRId64 ": stored offsets differ", path, t);
      mb_assignment_free(a);
    }
  }
  free(rows);
  free(base);
  mb_results_close(r, NULL);
  /* a table that does not read whole: torn in flight, or committed rows lost? (after the
   * close: HDF5 opens a file twice only with the same access properties) */
  if (!rows_ok || !base_ok) {
    bool prefix = want_task[0] && want_task[1] &&
                  prefix_reads(path, "results", want_task[0], want_n[0]) &&
                  prefix_reads(path, "baselines", want_task[1], want_n[1]);
    note(v, prefix ? D_TAIL : D_ROW_LOST, "%s", why);
  }
  free(want_task[0]);
  free(want_task[1]);
}

/* Runs check_file in a child process; a crash there is damage too. */
static bool check_in_child(const config *c, const plan *p, const char *path, int64_t committed,
                           verdict *v) {
  memset(v, 0, sizeof *v);
  verdict *shared =
      mmap(NULL, sizeof *v, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return false;
  memset(shared, 0, sizeof *shared);
  pid_t pid = fork();
  if (pid < 0) {
    munmap(shared, sizeof *shared);
    return false;
  }
  if (pid == 0) {
    check_file(c, p, path, committed, shared);
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *v = *shared;
  munmap(shared, sizeof *shared);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    note(v, D_CHECKER_CRASHED, "%s: the checker died (status 0x%x) reading it", path, status);
  return true;
}

static int32_t damage_total(const verdict *v) {
  int32_t n = 0;
  for (int d = 0; d < D_COUNT; d++) n += v->count[d];
  return n;
}

/* ---- the parent ---- */

static void sleep_s(double s) {
  if (s <= 0) return;
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

/* Reads commit reports until `target` of them arrived (or the child closed the pipe). */
static int64_t read_reports(int fd, int64_t have, int64_t target) {
  uint32_t buf[256];
  while (have < target) {
    size_t want = (size_t)(target - have) < 256 ? (size_t)(target - have) : 256;
    ssize_t k = read(fd, buf, want * sizeof *buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    have += k / (ssize_t)sizeof *buf;
  }
  return have;
}

typedef struct round_result {
  bool early;    /* killed before the file was set up */
  bool finished; /* the child completed before the kill */
  int32_t phase;
  int64_t committed;
  double seconds;
} round_result;

/* One child: kill it once `kill_after` commits were reported and `delay_s` more passed
 * (kill_after < 0: let it finish). */
static bool run_round(const config *c, const plan *p, const char *path, int64_t kill_after,
                      double delay_s, shared_state *sh, round_result *out) {
  memset(out, 0, sizeof *out);
  int fds[2];
  if (pipe(fds) != 0) return false;
  sh->phase = PH_SETUP;
  sh->setup_done = 0;
  double t0 = mb_wall_seconds();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    _exit(child_main(c, p, path, fds[1], sh));
  }
  close(fds[1]);
  int64_t got = read_reports(fds[0], 0, kill_after < 0 ? p->n_tasks + 1 : kill_after);
  if (kill_after >= 0) {
    sleep_s(delay_s);
    kill(pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out->seconds = mb_wall_seconds() - t0;
  out->committed = read_reports(fds[0], got, p->n_tasks + 1); /* the rest, up to EOF */
  close(fds[0]);
  out->phase = sh->phase;
  out->early = !sh->setup_done;
  out->finished = WIFEXITED(status);
  if (out->finished && WEXITSTATUS(status) != 0) {
    fprintf(stderr, "hdf5_kill_stress: the writer failed (exit %d)\n", WEXITSTATUS(status));
    return false;
  }
  return true;
}

static int64_t file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

static bool copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *o = in ? fopen(to, "wb") : NULL;
  bool ok = in && o;
  char buf[65536];
  size_t n;
  while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, o) == n;
  if (o && fclose(o) != 0) ok = false;
  if (in) fclose(in);
  return ok;
}

/* HDF5 directly: results.h has no delete, and needs none. */
static bool delete_link(const char *path, const void *link) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  bool ok = f >= 0 && H5Ldelete(f, link, H5P_DEFAULT) >= 0;
  /* edited outside suite/results.c: drop its seal, which would refuse it (file_seal.h) */
  return (f < 0 || H5Fclose(f) >= 0) && ok && mb_results_unseal(path, NULL);
}

/* Runs fn(path, arg) in a child (no HDF5 file is ever open across a fork); true if it
 * returned true. */
static bool in_child(bool (*fn)(const char *, const void *), const char *path, const void *arg) {
  pid_t pid = fork();
  if (pid == 0) _exit(fn(path, arg) ? 0 : 1);
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool zero_last_row(const char *path, const void *arg) {
  const int64_t *n_rows = arg;
  mb_error err = {{0}};
  mb_results *r = mb_results_open(path, true, &err);
  mb_result_row zero;
  memset(&zero, 0, sizeof zero);
  bool ok = r && mb_results_write_row(r, *n_rows - 1, &zero, &err);
  return mb_results_close(r, &err) && ok;
}

/* The checker must be able to fail: a complete file passes; the same file with its last row
 * zeroed is a torn tail if that task was in flight and damage if it was committed; with one
 * assignment link deleted, or cut short, it is damaged. */
static bool self_test(const config *c, const plan *p, const char *path) {
  verdict v;
  if (!check_in_child(c, p, path, p->n_tasks, &v) || damage_total(&v) != 0) {
    fprintf(stderr, "self-test: the complete file fails the check: %s\n", v.first);
    return false;
  }
  int64_t t = p->n_tasks - 1; /* the last task is a result row */
  if (!in_child(zero_last_row, path, &p->n_rows)) {
    fprintf(stderr, "self-test: cannot zero the last row of %s\n", path);
    return false;
  }
  /* (the readers drop a zeroed last row as a torn tail: a committed one is then a lost row) */
  if (!check_in_child(c, p, path, t, &v) || damage_total(&v) != 1 || v.count[D_TAIL] != 1 ||
      !check_in_child(c, p, path, t + 1, &v) || damage_total(&v) != 1 || v.count[D_ROW_LOST] != 1) {
    fprintf(stderr, "self-test: a zeroed last row is not told apart as in flight or committed\n");
    return false;
  }
  mb_result_row row = make_row(c, p, t);
  char enc_w[3 * MB_RES_WORKLOAD], link[1024];
  mb_results_encode_name(row.workload, enc_w, sizeof enc_w);
  snprintf(link, sizeof link, "/assignments/%s/%s/%s/%" PRId64, enc_w, row.hardware, row.solver,
           row.seed);
  if (!in_child(delete_link, path, link)) {
    fprintf(stderr, "self-test: cannot delete %s from %s\n", link, path);
    return false;
  }
  if (!check_in_child(c, p, path, p->n_tasks, &v) || v.count[D_ASSIGN_COMMITTED] != 1 ||
      !check_in_child(c, p, path, t, &v) || v.count[D_ASSIGN_COMMITTED] != 0) {
    fprintf(stderr, "self-test: a deleted assignment went unnoticed\n");
    return false;
  }
  if (truncate(path, file_size(path) / 2) != 0 || !check_in_child(c, p, path, p->n_tasks, &v) ||
      damage_total(&v) == 0) {
    fprintf(stderr, "self-test: a file cut in half went unnoticed\n");
    return false;
  }
  printf(
      "self-test: the checker passes a complete file, tells a torn in-flight row from a "
      "damaged committed one, and sees a deleted assignment and a truncated file (%s)\n",
      v.first);
  return true;
}

static void usage(FILE *to) {
  fprintf(to,
          "usage: hdf5_kill_stress [--kills N] [--seed S] [--workloads W] [--solvers S] "
          "[--seeds K]\n"
          "                        [--buffers B] [--dir DIR] [--keep N] [--allow-torn-tail]\n"
          "                        [--self-test] [--verbose]\n"
          "Kills a child writing a results file through suite/results.c N times with SIGKILL\n"
          "and checks every killed file (see the header of tests/stress/hdf5_kill_stress.c).\n"
          "Exit 0: no damaged file (--allow-torn-tail: none with a committed task damaged);\n"
          "1: damage found; 2: usage or setup error.\n");
}

static bool parse_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long v = s ? strtoll(s, &end, 10) : 0;
  if (!s || errno || end == s || *end || v < lo || v > hi) {
    fprintf(stderr,
            "hdf5_kill_stress: %s: expected an integer in [%" PRId64 ", %" PRId64 "], got '%s'\n",
            opt, lo, hi, s ? s : "");
    return false;
  }
  *out = v;
  return true;
}

static bool parse_args(int argc, char **argv, config *c) {
  *c = (config){1000, 1, 4, 2, 50, 35, 0, NULL, false, false, false};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int64_t v = 0;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      exit(0);
    } else if (!strcmp(a, "--self-test")) {
      c->self_test = true;
    } else if (!strcmp(a, "--allow-torn-tail")) {
      c->allow_torn_tail = true;
    } else if (!strcmp(a, "--verbose")) {
      c->verbose = true;
    } else if (!strcmp(a, "--dir")) {
      if (!val) return fprintf(stderr, "hdf5_kill_stress: --dir needs a directory\n"), false;
      c->dir = val;
      i++;
    } else {
      struct {
        const char *name;
        int64_t lo, hi;
      } opts[] = {{"--kills", 0, 10000000}, {"--seed", 0, INT64_MAX}, {"--workloads", 1, 1000},
                  {"--solvers", 1, 100},    {"--seeds", 1, 10000},    {"--buffers", 1, 100000},
                  {"--keep", 0, 1000}};
      int k = 0;
      while (k < 7 && strcmp(a, opts[k].name)) k++;
      if (k == 7) {
        fprintf(stderr, "hdf5_kill_stress: unknown option '%s'\n", a);
        usage(stderr);
        return false;
      }
      if (!parse_int(a, val, opts[k].lo, opts[k].hi, &v)) return false;
      i++;
      switch (k) {
        case 0:
          c->kills = v;
          break;
        case 1:
          c->seed = (uint64_t)v;
          break;
        case 2:
          c->n_workloads = (int32_t)v;
          break;
        case 3:
          c->n_solvers = (int32_t)v;
          break;
        case 4:
          c->n_seeds = (int32_t)v;
          break;
        case 5:
          c->n_buffers = (int32_t)v;
          break;
        default:
          c->keep = (int32_t)v;
          break;
      }
    }
  }
  return true;
}

/* The measurement; returns the exit status. */
static int stress(config c, const plan *pp, shared_state *sh) {
  const plan p = *pp;
  char dir_buf[4096];
  const char *tmp = getenv("TMPDIR"); /* ctest's is under the build tree */
  snprintf(dir_buf, sizeof dir_buf, "%s/hdf5_kill_stress.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  const char *dir = c.dir;
  if (!dir && !(dir = mkdtemp(dir_buf))) {
    fprintf(stderr, "hdf5_kill_stress: mkdtemp: %s\n", strerror(errno));
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/killed.h5", dir);

  /* reference round: uninterrupted, gives the file size and the time per task */
  round_result rr;
  verdict v;
  if (!run_round(&c, &p, path, -1, 0, sh, &rr) || !rr.finished || rr.committed != p.n_tasks) {
    fprintf(stderr, "hdf5_kill_stress: the uninterrupted writer did not complete\n");
    return 2;
  }
  int64_t full_size = file_size(path);
  double task_s = rr.seconds / (double)p.n_tasks;
  if (!check_in_child(&c, &p, path, p.n_tasks, &v) || damage_total(&v) != 0) {
    fprintf(stderr, "hdf5_kill_stress: the uninterrupted file fails the check: %s\n", v.first);
    return 2;
  }
  printf("plan: %d workloads x 1 hardware x (baseline + %d solvers x %d seeds) = %" PRId64
         " tasks, %d buffers each\n",
         (int)c.n_workloads, (int)c.n_solvers, (int)c.n_seeds, p.n_tasks, (int)c.n_buffers);
  printf("uninterrupted: %.3f s, %.1f us per task, file %" PRId64 " bytes\n", rr.seconds,
         task_s * 1e6, full_size);
  if (c.self_test) {
    bool ok = self_test(&c, &p, path);
    unlink(path);
    if (!c.dir) rmdir(dir);
    return ok ? 0 : 1;
  }

  mb_rng rng;
  mb_rng_seed(&rng, c.seed);
  int64_t kills = 0, early = 0, finished = 0, damaged = 0, tail_only = 0, kept = 0,
          in_phase[PH_COUNT] = {0}, damaged_in_phase[PH_COUNT] = {0}, by_kind[D_COUNT] = {0};
  double t_start = mb_wall_seconds();
  while (kills < c.kills) {
    int64_t after = (int64_t)mb_rng_below(&rng, (uint64_t)p.n_tasks);
    double delay = 2.0 * task_s * mb_rng_uniform(&rng);
    round_result r;
    if (!run_round(&c, &p, path, after, delay, sh, &r)) return 2;
    if (r.finished) {
      finished++;
      continue;
    }
    if (r.early) {
      early++;
      continue;
    }
    kills++;
    in_phase[r.phase]++;
    if (c.verbose && kills % 100 == 0)
      fprintf(stderr, "%" PRId64 " kills, %" PRId64 " damaged\n", kills, damaged);
    if (!check_in_child(&c, &p, path, r.committed, &v)) return 2;
    if (damage_total(&v) == 0) continue;
    damaged++;
    tail_only += damage_total(&v) == v.count[D_TAIL];
    damaged_in_phase[r.phase]++;
    for (int d = 0; d < D_COUNT; d++) by_kind[d] += v.count[d] > 0;
    printf("kill %" PRId64 ": damaged (killed in %s after %" PRId64 " commits): %s\n", kills,
           phase_names[r.phase], r.committed, v.first);
    if (kept < c.keep) {
      char to[4200];
      snprintf(to, sizeof to, "%s/damaged-%03d.h5", dir, (int)kept);
      if (copy_file(path, to)) printf("  kept as %s\n", to);
      kept++;
    }
    fflush(stdout);
  }
  double secs = mb_wall_seconds() - t_start;
  printf("kills: %" PRId64 " (plus %" PRId64 " before the file was set up, %" PRId64
         " finished first) in %.0f s\n",
         kills, early, finished, secs);
  printf("killed in:");
  for (int ph = 0; ph < PH_COUNT; ph++)
    if (in_phase[ph])
      printf(" %s %" PRId64 " (damaged %" PRId64 ")", phase_names[ph], in_phase[ph],
             damaged_in_phase[ph]);
  printf("\n");
  double per_1000 = kills ? 1000.0 / (double)kills : 0.0;
  printf("damaged files: %" PRId64 " = %.2f per 1000 kills; with a committed task damaged: %" PRId64
         " = %.2f per 1000 (the rest: only the in-flight row torn)\n",
         damaged, per_1000 * (double)damaged, damaged - tail_only,
         per_1000 * (double)(damaged - tail_only));
  for (int d = 0; d < D_COUNT; d++)
    if (by_kind[d]) printf("  %s: %" PRId64 " files\n", damage_names[d], by_kind[d]);
  unlink(path);
  if (!c.dir && kept == 0) rmdir(dir);
  return damaged - tail_only > 0 || (tail_only > 0 && !c.allow_torn_tail) ? 1 : 0;
}

int main(int argc, char **argv) {
  config c;
  plan p;
  if (!parse_args(argc, argv, &c) || !make_plan(&c, &p)) return 2;
  shared_state *sh =
      mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int status = sh == MAP_FAILED ? 2 : stress(c, &p, sh);
  if (sh != MAP_FAILED) munmap(sh, sizeof *sh);
  free(p.tasks);
  return status;
}
