/* Figures from a results file, drawn by gnuplot (an external program found on PATH).
 *
 * Data is exported from the HDF5 file (through the result matrix, suite/result_matrix.h) to
 * temporary whitespace tables; a template in plots/ (NAME.gp) draws each figure. gnuplot's errors
 * are reported with the template's name, never ignored. Figures: speedup_per_workload   1. speedup
 * over the heuristic per workload, one bar per solver speedup_distribution   2. empirical CDF of
 * speedups per solver gap_to_bound           3. gap to the LP bound per workload and solver
 *   walltime_vs_size       4. solver wall time against workload size (log-log)
 *   training_curves        5. mallocMuZero training curves (only when the file has curves)
 *   memory_map             6. memory maps of one workload: heuristic vs the best solver */
#ifndef MB_PLOT_H
#define MB_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum { MB_PLOT_PNG = 1, MB_PLOT_PDF = 2, MB_PLOT_SVG = 4 };

#define MB_PLOT_MAX_OUTPUTS 32

typedef struct mb_plot_options {
  const char *out_dir;             /* default: results/figures under the source tree */
  unsigned formats;                /* MB_PLOT_* bits; default PNG | PDF */
  const char *templates_dir;       /* default: plots/ under the source tree */
  const char *memory_map_workload; /* NULL: the workload where the best solver gains most */
  const char *memory_map_solver;   /* NULL: the best non-heuristic solver on that workload */
} mb_plot_options;

typedef struct mb_plot_outputs {
  int32_t n;
  char paths[MB_PLOT_MAX_OUTPUTS][1024];
} mb_plot_outputs;

/* Parses "png,pdf,svg" into MB_PLOT_* bits; false with err naming the bad word. */
bool mb_plot_parse_formats(const char *list, unsigned *formats, mb_error *err);
/* Draws every figure the results file has data for; the written files go to *outputs. */
bool mb_plot_all(const char *results_path, const mb_plot_options *opt, mb_plot_outputs *outputs,
                 mb_error *err);
/* Path of the gnuplot executable on PATH, or NULL (out holds it when found). */
bool mb_plot_find_gnuplot(char *out, size_t n);

#endif
