/* The run journal's format: the text lines `mallocbench run` appends to FILE.journal, one per
 * finished task, so that a kill -9 loses no finished task (suite/driver.h, "Crash safety"), and
 * the reading of such a file back on --resume. This module knows lines, not plans: which tasks a
 * run has, when a line is written and what a resume does with a record are the driver's.
 *
 * The file. A header line, then one line per finished task, each ending in '\n', fields
 * separated by one space:
 *   mallocbench-journal 1 seeds S budget B [simulations N c_scale C finetune F]
 *       [finetune_steps N] [leaf_rollout N] [search KIND] [bound_budget B]
 *       plan T profile T workloads T solvers T hardware T agent T catalogue T data T
 *   B TASK T_SLOW T_HEUR T_BOUND BOUND_STATUS HEUR_WALL_S BOUND_WALL_S NOTE OFFSETS #SUM
 *   J TASK STATUS VALID N_FAST FAST_BYTES T_SOLVER WALL_S ITERATIONS BUDGET_HIT NOTE OFFSETS
 *       CURVE_LEN [STEP RETURN]... [heuristic H] #SUM
 * (wrapped here; each is one line). Integers are decimal; reals are "%.17g", which reads back
 * to the same double; texts (T, the statuses, NOTE) are escaped into one token (mb_journal_
 * escape); OFFSETS is -1 (no assignment) or the buffer count and then every offset. SUM is the
 * first 16 hex digits of the SHA-256 of the line before " #": a line torn by a kill, edited or
 * damaged does not match it, and is refused alone, since every line carries its own. The header
 * has no checksum: the driver checks its plan hash against the plan it makes again instead.
 *
 * Compatibility. Journals outlive binaries (a run killed by one is resumed by the next), so
 * these bytes do not change; fields are only added, optional, after the others: the bracketed
 * header options are written only when not the defaults (a default run's header is that of runs
 * made before they existed), and " heuristic H" only on a curve whose reference is known.
 * Two changes from the writer in driver.c before this module, both where the old bytes could
 * not be read back: the statuses were written unescaped, so the LP bound's "not solved" made its
 * baseline line unreadable (it reran on every resume); it is "snot%20solved" now, which the old
 * reader reads. And header texts are no longer limited (the old reader refused texts of 8192
 * bytes or more, the old writer cut them at about 24 KB). tests/test_run_journal.c holds lines
 * the old writer wrote; both directions were checked on killed runs (see the commit). */
#ifndef MB_RUN_JOURNAL_H
#define MB_RUN_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "assignment.h"
#include "error.h"
#include "results.h"
#include "workload.h"

/* The two kinds of task of a plan (driver.h): a pair's baseline, and one solver's job. */
typedef enum mb_task_kind { MB_TASK_BASELINE, MB_TASK_JOB } mb_task_kind;

/* What a finished task produced: what a worker computes and what a journal line holds. A job
 * uses the job fields, a baseline the baseline ones; both have a note and an assignment. */
typedef struct mb_task_record {
  /* job */
  char status[MB_RES_STATUS]; /* "ok", "invalid" (validator rejected it), "error" */
  int8_t valid;
  int32_t n_fast;
  int64_t fast_bytes;
  mb_time_ps t_solver;
  double wall_s;
  int64_t iterations;
  int8_t budget_hit;
  int32_t curve_len;                 /* training curve points; 0: no curve */
  double *curve_step, *curve_return; /* curve_len each, malloc'd */
  double curve_heuristic;            /* the curve's heuristic reference; NaN: none */
  /* baseline */
  mb_time_ps t_slow, t_heur, t_bound; /* all-slow time, the heuristic's, the LP bound */
  char bound_status[MB_RES_STATUS];   /* "ok", "not solved" (time limit), "error" */
  double heur_wall_s, bound_wall_s;
  /* both */
  char note[MB_RES_NOTE];
  mb_assignment *a; /* job: the solver's; baseline: the heuristic's; NULL: none */
} mb_task_record;

/* An empty record: zeros, no assignment, no curve, curve_heuristic NaN. */
mb_task_record mb_task_record_empty(void);
/* Frees the assignment and the curve of r and makes it empty. */
void mb_task_record_clear(mb_task_record *r);

/* A task line read back: which task, its kind, and its record (the caller owns r). */
typedef struct mb_journal_entry {
  int64_t task; /* the task's number in the plan, >= 0 (whether the plan has it: the caller's) */
  mb_task_kind kind;
  mb_task_record r;
} mb_journal_entry;

/* The line of finished task `task`, checksum and '\n' included, malloc'd into *line, its length
 * in *len. False (err set) only when memory runs out. Texts longer than their field cannot come
 * back (mb_task_record's arrays bound them); nothing else limits a line. */
bool mb_journal_encode_record(int64_t task, mb_task_kind kind, const mb_task_record *r, char **line,
                              size_t *len, mb_error *err);

/* Reads one task line (len bytes, without its '\n') into *out, whose record is overwritten (not
 * freed). False, with err naming file:line_no and the field at fault and out->r left empty, for
 * anything mb_journal_encode_record does not write: a checksum that does not match (a torn,
 * edited or damaged line), an unknown kind, a missing, malformed, out-of-range or extra field,
 * a text too long for its field, a count beyond what the line holds. */
bool mb_journal_decode_record(const char *line, size_t len, const char *file, int64_t line_no,
                              mb_journal_entry *out, mb_error *err);

/* The plan options a header line holds: enough to make a run's plan again when its HDF5 file
 * no longer opens. mallocMuZero's options are mb_run_config's (0 and MB_SOLVER_SEARCH_GUMBEL:
 * the solvers' defaults, which is what a header without them means); the texts are the run's
 * (never NULL; "" for the workloads regex, hardware list and agent means the run's defaults). */
typedef struct mb_journal_header {
  char plan[MB_RES_SHA]; /* the plan hash, 64 hex digits */
  int64_t seeds;
  double budget; /* seconds per solve */
  int simulations;
  double c_scale, finetune;
  int64_t finetune_steps;
  int leaf_rollout;
  int search; /* MB_SOLVER_SEARCH_* */
  /* seconds for the LP bound (run --bound-budget); 0: the profile's default, which is what a
   * header without it means (the driver passes 0 for a run at that default, so that its header
   * is that of runs made before the option existed) */
  double bound_budget;
  const char *profile, *workloads, *solvers, *hardware, *agent, *catalogue, *data;
  char *storage; /* what mb_journal_decode_header allocated (the texts); NULL when caller-filled */
} mb_journal_header;

/* The header line, '\n' included, malloc'd into *line. False (err set) when memory runs out or
 * h->search is no search kind. */
bool mb_journal_encode_header(const mb_journal_header *h, char **line, size_t *len, mb_error *err);

/* Reads a header line (len bytes, without its '\n') into *h (free with mb_journal_header_free).
 * Options may come in any order (the last of a repeated one counts); an option this version does
 * not know is skipped when its value is a text, so that a later version's header can still name
 * its plan. False, with err naming file:1 and the field at fault, when it does not start with
 * "mallocbench-journal 1", lacks one of the options every header has (seeds, budget and the
 * texts), or has a value that does not read as its field. Values are checked for syntax and for
 * fitting their type only: whether they make a valid plan is the caller's to check. */
bool mb_journal_decode_header(const char *line, size_t len, const char *file, mb_journal_header *h,
                              mb_error *err);
void mb_journal_header_free(mb_journal_header *h);

/* Reads a journal file line by line, as --resume does: the header, then each task line in file
 * order. A complete line that does not decode (or that the caller rejects, mb_journal_reject)
 * is skipped with a note on `log` naming the journal, the line and the field ("FILE:LINE:
 * damaged line skipped (...)"), and the lines after it are still read, since each has its own
 * checksum; a last line without its '\n' (a kill during its write) is dropped with a note. The
 * reader also keeps the file's text minus what it dropped (mb_journal_kept), which is what the
 * caller rewrites the journal to before appending. State lives here, owned by the caller; the
 * fields are the module's. */
typedef struct mb_journal_reader {
  const char *path;                /* the journal (borrowed), named in notes and messages */
  FILE *log;                       /* notes on dropped lines; NULL: none */
  char *text;                      /* the whole file; text[0, kept) is what is kept so far */
  size_t len, pos, kept, last_len; /* last_len: the last line kept, for mb_journal_reject */
  int64_t line_no, damaged;
} mb_journal_reader;

/* Reads the whole journal at `path` into rd. False when it cannot be read, with err set and
 * errno kept (ENOENT: there is no journal). */
bool mb_journal_open(mb_journal_reader *rd, const char *path, FILE *log, mb_error *err);
/* Reads the header line (mb_journal_decode_header). False, err set, when it is torn (no '\n')
 * or does not decode: then nothing after it can be trusted. */
bool mb_journal_read_header(mb_journal_reader *rd, mb_journal_header *h, mb_error *err);

typedef enum mb_journal_step {
  MB_JOURNAL_RECORD, /* *out holds the next good task line (the caller owns out->r) */
  MB_JOURNAL_END,    /* no more lines */
  MB_JOURNAL_FAILED  /* out of memory; err set */
} mb_journal_step;

/* The next task line that decodes, skipping (with notes) those that do not. */
mb_journal_step mb_journal_next(mb_journal_reader *rd, mb_journal_entry *out, mb_error *err);
/* Drops the line mb_journal_next returned last (call it before the next mb_journal_next): noted and
 * counted like a damaged line, with `why` (printf-style: the field at fault, e.g. "task 99: the
 * plan has 40 tasks"). */
void mb_journal_reject(mb_journal_reader *rd, const char *why, ...)
    __attribute__((format(printf, 2, 3)));
/* Ends the reading: notes how many lines were dropped in all when there were more than the
 * first few noted one by one. Returns the number of complete lines dropped; a torn last line is
 * not counted (the caller truncates the file to mb_journal_kept's length anyway). */
int64_t mb_journal_finish(mb_journal_reader *rd);
/* The header and every line kept, in file order: what the journal holds once the dropped lines
 * are gone. Valid until mb_journal_close. */
const char *mb_journal_kept(const mb_journal_reader *rd, size_t *len);
void mb_journal_close(mb_journal_reader *rd);

/* Escapes `text` into one journal token: 's' (so that "" is a token too), then each byte, those
 * that would end or break a token (bytes <= ' ', '%', '#' and >= 0x7f) as "%XX", two uppercase
 * hex digits. A byte that needs none is kept: "a,b" is "sa,b", "é" (UTF-8) is "s%C3%A9". Writes
 * the token to out, which needs 3 * strlen(text) + 2 bytes. */
void mb_journal_escape(char *out, const char *text);
/* Reads back a token of mb_journal_escape into out (cap >= 1 bytes). False, with err saying why (no
 * location: the caller's), when it does not start with 's', holds a '%' not followed by two hex
 * digits or "%00", or does not fit in cap - 1 bytes. Every other byte is taken as it is. */
bool mb_journal_unescape(const char *token, char *out, size_t cap, mb_error *err);

#endif
