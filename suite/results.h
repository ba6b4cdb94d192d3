/* The results store: one HDF5 file per benchmark run (layout documented in results/README.md).
 *
 * Why HDF5: one self-describing file holds the results table, every assignment, a copy of
 * every workload (so `mallocbench verify` can re-check a file years later without the
 * catalogue or the external data), training curves and provenance, and h5dump/h5py read it
 * without custom code. Tables are chunked compound datasets with an unlimited first dimension
 * (appendable); strings are fixed-length and NUL-terminated; numbers are plain int64/double.
 *
 * Layout (all names of groups below /workloads, /assignments, /curves are percent-encoded
 * with mb_results_encode_name so that any workload name is a valid HDF5 link name):
 *   /                       provenance attributes (mb_results_set_attr_*)
 *   /results                mb_result_row table, one row per finished job, in plan order
 *   /baselines              mb_baseline_row table, one row per (workload, hardware) pair
 *   /workloads/<w>/{ops,buffers,uses}   the workload's tables, attributes sha256 and split
 *   /assignments/<w>/<hw>/<solver>/<seed>   int64 offsets per buffer (-1 = slow memory)
 *   /assignments/<w>/<hw>/baseline          the heuristic baseline's offsets
 *   /curves/<w>/<hw>/<solver>/<seed>        (step, return) table, when the solver has one;
 *                                           attribute heuristic_return when it has a reference
 *
 * Threads: one mb_results handle belongs to one thread. (Debian 12's HDF5 1.10.8 is built
 * thread-safe, H5is_library_threadsafe() = 1, so other threads may use HDF5 on other files at
 * the same time, e.g. mallocMuZero loading its agent in a driver worker; the library
 * serialises the calls.) Crash safety: assignments are flushed before their row, every row is
 * followed by mb_results_flush (H5Fflush), and files use the oldest superblock format, which
 * has no "open for writing" flag that would lock a file out after a kill -9.
 *
 * Damage: the oldest format has no checksums, and libhdf5 can crash parsing damaged metadata of
 * it. So files start with a seal block (file_seal.h; HDF5's user block, which HDF5 readers
 * skip): marked open by mb_results_create and by a writable mb_results_open, sealed with a
 * SHA-256 of every byte by mb_results_close, and checked by mb_results_open before libhdf5
 * sees the file: a sealed file with any byte changed is refused ("PATH: the file is damaged:
 * ..."), never parsed. A file left open by a kill, and one written before seals, are parsed
 * unchecked; libhdf5 first reads them whole in a child process (mb_results_open), so that its
 * crashes on their damage end in an error (all but rare ones that depend on what the reading
 * process did before: the CLI reads such files in a supervised child, cli/main.c, and `run
 * --resume` their root attributes through a copy a child makes, mb_results_open_provenance). (The
 * newer HDF5 formats, whose metadata checksums would do for part of this, lost committed tasks
 * under kill -9: file_seal.h says how.) */
#ifndef MB_RESULTS_H
#define MB_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "assignment.h"
#include "error.h"
#include "hardware.h"
#include "workload.h"

#define MB_RESULTS_FORMAT 1 /* bumped when the layout changes; stored as attribute */
/* The root attribute `format` of a mallocMuZero agent checkpoint (solvers/muzero/agent.h, which
 * writes and checks it): defined here, where the suite (mb_results_open, naming an agent given
 * in place of a results file) sees it without depending on solvers/. */
#define MB_AGENT_FORMAT "mallocmuzero-agent-1"

/* String field sizes (bytes incl. NUL) of the stored tables. */
#define MB_RES_WORKLOAD 128
#define MB_RES_HARDWARE 64
#define MB_RES_SOLVER 32
#define MB_RES_STATUS 16
#define MB_RES_NOTE 256
#define MB_RES_SHA 65
#define MB_RES_SPLIT 8 /* catalogue split: "train", "test", or "" when not recorded */

/* One finished job. Times are simulated by the cost model (suite/cost.h), integer
 * picoseconds; `*_s` fields are seconds. Speedups and gaps are NaN when the row is not "ok". */
typedef struct mb_result_row {
  int64_t task; /* index of the job in the run's plan: rows sort by it */
  char workload[MB_RES_WORKLOAD];
  char hardware[MB_RES_HARDWARE];
  char solver[MB_RES_SOLVER];
  int64_t seed;
  char status[MB_RES_STATUS]; /* "ok", "invalid" (validator rejected it), "error" */
  int8_t valid;               /* 1 iff the validator accepted the assignment */
  int64_t capacity;           /* fast-memory bytes of the hardware */
  int32_t n_buffers;
  int32_t n_fast;         /* buffers placed in fast memory */
  int64_t fast_bytes;     /* peak over time of the bytes of live fast buffers */
  int64_t t_slow_ps;      /* everything in slow memory */
  int64_t t_heuristic_ps; /* baseline: the heuristic on the same workload and hardware */
  int64_t t_solver_ps;    /* this solver's assignment (-1 when not "ok") */
  int64_t t_bound_ps;     /* LP lower bound on the program time (-1 when unavailable) */
  double t_solver_s;
  double speedup_heuristic; /* t_heuristic / t_solver */
  double speedup_slow;      /* t_slow / t_solver */
  double gap_to_bound;      /* (t_solver - t_bound) / t_bound; NaN without a bound */
  double wall_s;            /* wall-clock seconds of the solve (not deterministic) */
  int64_t iterations;       /* solver-specific effort counter */
  int8_t budget_hit;
  char note[MB_RES_NOTE]; /* solver note, or the error message */
} mb_result_row;

/* One (workload, hardware) pair: the hardware profile the jobs ran on and the baselines
 * every speedup is relative to. */
typedef struct mb_baseline_row {
  int64_t task;
  char workload[MB_RES_WORKLOAD];
  char hardware[MB_RES_HARDWARE];
  char profile_sha256[MB_RES_SHA]; /* SHA-256 of the profile file ("" if not from a file) */
  int64_t capacity;
  int64_t alignment;
  double slow_bandwidth; /* bytes per second */
  double fast_bandwidth;
  double peak_flops;
  double op_overhead_s;
  int64_t t_slow_ps;
  int64_t t_heuristic_ps;
  int64_t t_bound_ps;               /* -1 when the bound failed */
  char bound_status[MB_RES_STATUS]; /* "ok", "not solved" (time limit or numerical trouble: a
                                       weaker but valid bound, solvers/bound.h) or "error" (none) */
  char bound_note[MB_RES_NOTE];
  double heuristic_wall_s;
  double bound_wall_s;
} mb_baseline_row;

/* The hardware profile a baseline row records (its name and every number the cost model uses),
 * for recomputing that pair's times from the file alone (verify, the memory-map figure). */
mb_hardware mb_baseline_hardware(const mb_baseline_row *b);

/* Fills the derived fields of a row (t_solver_s, speedups, gap) from its status and integer
 * times; the driver and `verify` both use it, so a stored number is recomputed exactly. */
void mb_result_row_derive(mb_result_row *row);

typedef struct mb_results mb_results;

/* Creates a new results file. An existing file is an error unless `force` (then it is
 * replaced). Errors name the path and the OS reason (permission, missing directory, ...). */
mb_results *mb_results_create(const char *path, bool force, mb_error *err);
/* Opens an existing file; checks its seal (above) and that it is a mallocbench results file of
 * a known format. A file without a seal that vouches for it (a killed run's, or one written
 * before seals) is first read whole (mb_results_read_all) in a child process (isolated.h): if
 * libhdf5 crashes on it there, the file is refused as damaged and the caller goes on. */
mb_results *mb_results_open(const char *path, bool writable, mb_error *err);
/* Opens `path` read-only for its root attributes (the provenance) alone, and never lets this
 * process's libhdf5 parse a file no seal vouches for: a sealed file opens as with
 * mb_results_open; an unsealed one (a killed run's) is read by a child, which copies its root
 * attributes into a new sealed file beside it (PATH.provenance, removed once opened), and the
 * handle reads that copy. For a caller that goes on working after the read (`run --resume`):
 * libhdf5 crashes on some damaged attribute messages only where the heap holds the wrong bytes,
 * which mb_results_open's child can miss. The handle's messages name `path`; its tables are
 * empty. A crash of the child gives mb_results_fail_crashed's error. */
mb_results *mb_results_open_provenance(const char *path, mb_error *err);
/* Whether `path` is an intact HDF5 file of another kind (an agent checkpoint, a file of one's
 * own): it opens, and has neither the results file's root attribute nor its /results table.
 * A results file damaged by a kill is not foreign: `run --resume` rebuilds that one from its
 * journal, and must leave a foreign file alone. */
bool mb_results_is_foreign(const char *path);
/* Whether readers give `path` to libhdf5 without a seal's check: an HDF5 file whose seal block
 * does not say sealed (a killed run's results file, one written before seals, an agent
 * checkpoint, another program's file). Quick: reads the seal block, hashes nothing. */
bool mb_results_unchecked(const char *path);
/* Turns err's account of how a process reading `path` died (isolated.h) into the message for a
 * damaged unsealed file ("PATH: the file is damaged: libhdf5 reading it crashed with ...",
 * with how to rebuild a killed run's file). Returns false. */
bool mb_results_fail_crashed(mb_error *err, const char *path);
/* Removes the seal of a results file (file_seal.h; a closed file): it then reads as a file
 * written before seals existed. For a file changed on purpose by another HDF5 program (h5py,
 * the raw HDF5 API in tests), which its seal would refuse as damaged. */
bool mb_results_unseal(const char *path, mb_error *err);
/* Flushes (when writable) and closes; false when the final flush failed. NULL is a no-op. */
bool mb_results_close(mb_results *r, mb_error *err);
/* Pushes everything written so far to the file (H5Fflush). */
bool mb_results_flush(mb_results *r, mb_error *err);
const char *mb_results_path(const mb_results *r);
/* Renames the open file (rename(2): atomic, replaces `path`); the handle stays valid. */
bool mb_results_rename(mb_results *r, const char *path, mb_error *err);

/* ---- provenance: attributes of the root group (fixed-length strings, int64, double) ---- */
bool mb_results_set_attr_string(mb_results *r, const char *key, const char *value, mb_error *err);
bool mb_results_set_attr_int(mb_results *r, const char *key, int64_t value, mb_error *err);
bool mb_results_set_attr_double(mb_results *r, const char *key, double value, mb_error *err);
/* Malloc'd copy of a string attribute; NULL with err set when missing, not one string, or
 * unreadable (the message then says so, with HDF5's reason, not "missing"). */
char *mb_results_get_attr_string(mb_results *r, const char *key, mb_error *err);
/* One integer (int), or one integer or float (double); err as above. */
bool mb_results_get_attr_int(mb_results *r, const char *key, int64_t *value, mb_error *err);
bool mb_results_get_attr_double(mb_results *r, const char *key, double *value, mb_error *err);
/* Whether the root group has the attribute (for attributes added after files were written).
 * True also when HDF5 cannot tell (a damaged file): the read that follows then fails, naming
 * it, where "absent" would silently take an older file's default (h5attr.h; nn_io.h's
 * mb_nn_file_has answers the same). */
bool mb_results_has_attr(mb_results *r, const char *key);
/* Every root attribute as (key, value-as-text) pairs in name order; caller frees with
 * mb_results_free_strings(keys, n) and (values, n). */
bool mb_results_list_attrs(mb_results *r, char ***keys, char ***values, int32_t *n, mb_error *err);
void mb_results_free_strings(char **s, int32_t n);
/* Copies every root attribute of src to dst (types kept), replacing same-named ones. */
bool mb_results_copy_attrs(mb_results *dst, mb_results *src, mb_error *err);

/* ---- workload copies ---- */
/* Stores the workload's ops, buffers and uses under /workloads/<key> with its SHA-256.
 * Replaces an existing copy with the same key. */
bool mb_results_put_workload(mb_results *r, const char *key, const mb_workload *w,
                             const char *sha256, mb_error *err);
bool mb_results_has_workload(mb_results *r, const char *key);
/* Rebuilds the workload from the stored tables (through the workload builder, so a tampered
 * table is rejected like bad input) and returns the stored SHA-256 in sha256 (may be NULL); a
 * stored checksum longer than MB_RES_SHA - 1 bytes is refused, not cut to fit. */
mb_workload *mb_results_get_workload(mb_results *r, const char *key, char sha256[MB_RES_SHA],
                                     mb_error *err);
/* Keys (decoded) of every stored workload, in name order. */
bool mb_results_workload_keys(mb_results *r, char ***keys, int32_t *n, mb_error *err);
/* The catalogue split of a stored workload ("train" or "test"; mallocMuZero trains on "train",
 * so its quality claims are made on "test"): string attribute `split` of /workloads/<key>.
 * An attribute, not a column, so the compound tables keep their layout. The setter needs the
 * copy to exist and a value shorter than MB_RES_SPLIT; it replaces an earlier value. */
bool mb_results_set_workload_split(mb_results *r, const char *key, const char *split,
                                   mb_error *err);
/* Copies the split into split[MB_RES_SPLIT]; "" when the copy has no `split` attribute (files
 * written before it was stored). False with err set when the copy is missing or the attribute
 * is not a string that fits. */
bool mb_results_get_workload_split(mb_results *r, const char *key, char split[MB_RES_SPLIT],
                                   mb_error *err);
/* The stored SHA-256 of a workload copy (attribute sha256, hex), without rebuilding the workload
 * (`compare` matches copies by it; `verify` recomputes it). False with err set when the copy or
 * the attribute is missing or longer than 64 bytes. */
bool mb_results_get_workload_sha256(mb_results *r, const char *key, char sha256[MB_RES_SHA],
                                    mb_error *err);

/* ---- tables ---- */
/* Appends a baseline row and the heuristic baseline's assignment (may be NULL), in the same
 * order as mb_results_append. */
bool mb_results_append_baseline(mb_results *r, const mb_baseline_row *row,
                                const mb_assignment *heuristic, mb_error *err);
/* Appends a result row, its assignment (may be NULL: solver error) and its curve
 * (curve_len 0: none) with the curve's heuristic reference (the heuristic's mean return on the
 * curve's episodes; stored as the curve's attribute heuristic_return unless NaN). The
 * assignment and curve are written and flushed before the row, so an interrupted append never
 * leaves a row without them; one left behind without its row is replaced when the row is
 * appended again. The caller flushes after the row. */
bool mb_results_append(mb_results *r, const mb_result_row *row, const mb_assignment *a,
                       const double *curve_step, const double *curve_return, int32_t curve_len,
                       double curve_heuristic, mb_error *err);
/* Reads a whole table (malloc'd array, caller frees; *n may be 0 with *rows NULL). */
bool mb_results_read_rows(mb_results *r, mb_result_row **rows, int64_t *n, mb_error *err);
bool mb_results_read_baselines(mb_results *r, mb_baseline_row **rows, int64_t *n, mb_error *err);
/* Rows the readers above dropped from the end of a table because a kill -9 interrupted their
 * write (the file's extent had grown, the row's data was not there); 0 in a file that was not
 * killed. `run --resume` rewrites them from the journal. */
int64_t mb_results_torn_rows(const mb_results *r);
/* Rewrites row i of a table in place (used by tests to tamper, and by repairs). */
bool mb_results_write_row(mb_results *r, int64_t i, const mb_result_row *row, mb_error *err);
/* Shrinks the tables to their first n rows (resume repairs a torn tail). */
bool mb_results_truncate(mb_results *r, int64_t n_results, int64_t n_baselines, mb_error *err);

/* The stored assignment of a result row (NULL with err set when absent; *absent tells). */
mb_assignment *mb_results_get_assignment(mb_results *r, const mb_result_row *row, bool *absent,
                                         mb_error *err);
mb_assignment *mb_results_get_baseline_assignment(mb_results *r, const mb_baseline_row *row,
                                                  bool *absent, mb_error *err);
/* Overwrites a stored assignment (tests tamper with it; same length required). */
bool mb_results_put_assignment(mb_results *r, const mb_result_row *row, const mb_assignment *a,
                               mb_error *err);
/* The stored curve of a result row; *len = 0 and true when there is none. */
bool mb_results_get_curve(mb_results *r, const mb_result_row *row, double **step, double **ret,
                          int32_t *len, mb_error *err);
/* The heuristic reference of that curve; NaN and true when the row has no curve or the curve
 * none (files written before references were stored). */
bool mb_results_get_curve_heuristic(mb_results *r, const mb_result_row *row, double *heuristic,
                                    mb_error *err);

/* Reads everything the readers of a file may read (verify, export, summary, plot, report): the
 * tables, every row's assignment and curve, every baseline's assignment, every stored workload
 * and its split, and the root attributes. Every part is read even when one fails; false then,
 * with the first failure in err. mb_results_open runs it in a child on a file no seal vouches
 * for. */
bool mb_results_read_all(mb_results *r, mb_error *err);

/* Percent-encodes '/', '%' and a leading '.' so that a name is one HDF5 link name; returns
 * out, or NULL when it does not fit in n bytes. */
char *mb_results_encode_name(const char *name, char *out, size_t n);
char *mb_results_decode_name(const char *enc, char *out, size_t n);

#endif
