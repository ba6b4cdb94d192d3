/* Reports from a results file: a Markdown report (tables and links to the figures) for reading
 * and LaTeX tables for the paper. Every number is read from the HDF5 file through the result
 * matrix (suite/result_matrix.h), the same view the figures use; nothing is recomputed from
 * anything else. Tables:
 *   summary      per solver: geometric-mean and max speedup over the heuristic, wins/ties/losses,
 *                mean gap to the LP bound, total wall time
 *   summary_test the same over the catalogue's test split alone (the workloads mallocMuZero
 *                never trained on); only when the file has cases of both splits
 *   workloads    per workload: T_slow, and per solver speedup, gap and wall time
 *   alphatensor  AlphaTensor traces: speedup per factorization and matrix size
 *   provenance   the run's provenance attributes
 * LaTeX goes to TEX_DIR/{summary,workloads,alphatensor,provenance}.tex, summary_test.tex (removed
 * when the file has not both splits, so a stale one never shows another run's numbers) and
 * macros.tex (numbers for the paper's text as \newcommand macros, \NumTestCases among them). */
#ifndef MB_REPORT_H
#define MB_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum { MB_REPORT_MD = 1, MB_REPORT_TEX = 2 };

typedef struct mb_report_options {
  unsigned formats;          /* MB_REPORT_* bits; default both */
  const char *markdown_path; /* default results/REPORT.md under the source tree */
  const char *tex_dir;       /* default paper/generated under the source tree */
  const char *figures_dir;   /* figures linked from the Markdown (default results/figures) */
  const char *command;       /* the command that writes this report, named in it so that a
                                reader can run it again (default "mallocbench report FILE") */
} mb_report_options;

#define MB_REPORT_MAX_OUTPUTS 16

/* The files a report wrote, in the order written (the Markdown, then the LaTeX tables). */
typedef struct mb_report_outputs {
  int32_t n;
  char paths[MB_REPORT_MAX_OUTPUTS][4096];
} mb_report_outputs;

bool mb_report_parse_formats(const char *list, unsigned *formats, mb_error *err);
/* Writes the formats asked for; the written files go to *outputs (may be NULL). */
bool mb_report_write(const char *results_path, const mb_report_options *opt,
                     mb_report_outputs *outputs, mb_error *err);

/* AlphaTensor trace names in the catalogue follow "<factorization>_<N>_<dtype>[-<hardware>]"
 * with factorization one of at_tpu, at_gpu, strassen2, standard (datasets/CATALOGUE.md);
 * parses one into a readable factorization name, N and dtype (false for other workloads). */
bool mb_report_parse_alphatensor_name(const char *name, char *factorization, size_t fn, long *n,
                                      char *dtype, size_t dn);

#endif
