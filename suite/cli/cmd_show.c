/* mallocbench show WORKLOAD [--hardware NAME] [--catalogue FILE] [--data DIR]: a workload's
 * statistics, and the simulated all-slow time and standalone benefits on one hardware profile.
 * WORKLOAD is a file or the name of a catalogue entry (then on the entry's own hardware, or
 * --hardware's, with the entry's fast-memory size, as run has it). mallocbench show AGENT.h5: a
 * mallocMuZero agent checkpoint described (agent_describe.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_describe.h"
#include "catalogue.h"
#include "commands.h"
#include "cost.h"
#include "error.h"
#include "file_seal.h"
#include "hardware.h"
#include "nn_io.h"
#include "results.h"
#include "workload.h"
#include "workload_io.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench show WORKLOAD [--hardware NAME] [--catalogue FILE] [--data DIR]\n"
          "       mallocbench show AGENT.h5\n\n"
          "Prints a workload's statistics: ops, buffers, pinned buffers, total bytes, peak live\n"
          "bytes and when, largest buffer, total FLOPs, the all-slow program time T_slow and the\n"
          "sum of standalone benefits (both simulated by mallocbench's roofline cost model), and\n"
          "how many buffers fit in fast memory.\n\n"
          "WORKLOAD          a native workload file (.wl), an XLA HLO text dump (.hlo), a\n"
          "                  buffer CSV (.csv) or a model-zoo spec (.spec); or, when no such\n"
          "                  file exists, the name of a catalogue entry ('mallocbench list')\n");
  mb_workload_arg_usage(out);
  fprintf(out,
          "\nWith a mallocMuZero agent checkpoint (the HDF5 file of 'mallocbench train'), prints\n"
          "how it was trained (the command line, updates, episodes, wall time, seed, BLAS\n"
          "kernel, whether a resumable state lies beside it), its networks, the game it plays\n"
          "(actions, buffer order, observation layout) and its training curve in brief.\n");
}

static const unsigned char HDF5_SIGNATURE[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* The offset of HDF5's signature, where the format allows a superblock: 0 (agent checkpoints),
 * or 512, 1024, 2048, ... after a user block (results files, behind their seal block,
 * file_seal.h); -1 when there is none up to 1 MiB. */
static long hdf5_signature_at(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  long found = -1;
  for (long at = 0; found < 0 && at <= (1L << 20); at = at ? 2 * at : 512) {
    unsigned char head[8];
    if (fseek(f, at, SEEK_SET) == 0 && fread(head, 1, sizeof head, f) == sizeof head &&
        !memcmp(head, HDF5_SIGNATURE, sizeof head))
      found = at;
  }
  fclose(f);
  return found;
}

/* Only a regular file can be an HDF5 file here (and opening a FIFO to look would block); any
 * other is a workload to its parser, which says what it is. */
static bool starts_like_hdf5(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return mb_seal_has_block(path) || hdf5_signature_at(path) >= 0;
}

/* Whether the file's root attribute `format` names an agent checkpoint, however damaged the
 * rest of it is. */
static bool declares_agent(const char *path) {
  mb_error ignored;
  mb_nn_file *f = mb_nn_file_open(path, &ignored);
  char format[64];
  bool agent = f && mb_nn_file_has(f, "format") &&
               mb_nn_file_get_string(f, "format", format, sizeof format, &ignored) &&
               !strcmp(format, MB_AGENT_FORMAT);
  mb_nn_file_close(f);
  return agent;
}

static int show_hdf5(const char *path) {
  mb_error err;
  /* a sealed file is checked before libhdf5 parses it, and is no agent */
  mb_seal_state seal;
  if (!mb_seal_check(path, &seal, NULL, &err)) {
    mb_diag(stderr, "mallocbench show: %s", err.message);
    return 2;
  }
  /* Any other may be an agent checkpoint: its superblock is at 0, or after a user block that
   * another program added (h5jam), which the agent's readers accept too. */
  if (seal == MB_SEAL_NONE && mb_agent_describe(path, stdout, &err)) return 0;
  mb_error results_err;
  mb_results *r = mb_results_open(path, false, &results_err);
  if (r) {
    mb_results_close(r, NULL);
    mb_diag(stderr,
            "mallocbench show: %s is a results file, not a workload or an agent: 'mallocbench "
            "summary %s' prints its table",
            path, path);
    return 2;
  }
  /* Neither: say what is wrong with what the file seems to be. A results file has a user block
   * (its seal block's place), so one without is taken for an agent unless it says otherwise. */
  bool seems_agent = seal == MB_SEAL_NONE && (hdf5_signature_at(path) == 0 || declares_agent(path));
  mb_diag(stderr, "mallocbench show: %s", seems_agent ? err.message : results_err.message);
  return 2;
}

/* "12582912 B (12.00 MiB)" */
static const char *fmt_bytes(int64_t b, char *buf, size_t n) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)b;
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  if (u == 0)
    snprintf(buf, n, "%" PRId64 " B", b);
  else
    snprintf(buf, n, "%" PRId64 " B (%.2f %s)", b, v, units[u]);
  return buf;
}

int mb_cmd_show(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  const char *path = NULL;
  mb_workload_arg wa = {0};
  const char *option_given = NULL; /* the first of them, for the message on HDF5 files */
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (arg[0] != '-' || !arg[1]) {
      if (path) {
        mb_diag(stderr, "mallocbench show: one workload at a time ('%s' and '%s')", path, arg);
        return 2;
      }
      path = arg;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    int read = mb_option_workload_arg("show", o.flag, o.value, &wa);
    if (read < 0) return 2;
    if (!read) return mb_unknown_option("show", arg);
    if (!option_given) option_given = arg;
    i = o.last;
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  if (starts_like_hdf5(path)) {
    if (option_given) {
      mb_diag(stderr, "mallocbench show: %s: %.*s applies to workloads, not to HDF5 files", path,
              (int)strcspn(option_given, "="), option_given); /* the flag of --flag=value */
      return 2;
    }
    return show_hdf5(path);
  }
  mb_error err;
  mb_hardware hw;
  bool catalogue_name = false;
  mb_workload *w = mb_cli_workload(path, &wa, &hw, &catalogue_name, &err);
  if (!w) {
    mb_diag(stderr, "mallocbench show: %s", err.message);
    return 2;
  }
  if (!mb_cost_check_range(w, &hw, &err)) {
    mb_diag(stderr, "mallocbench show: %s: %s", path, err.message);
    mb_workload_free(w);
    return 2;
  }
  mb_time_ps *benefit = malloc((size_t)w->n_buffers * sizeof *benefit);
  char sha[65];
  if (!benefit || !mb_workload_sha256_hex(w, sha)) {
    fprintf(stderr, "mallocbench show: out of memory\n");
    free(benefit);
    mb_workload_free(w);
    return 2;
  }
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  mb_standalone_benefits(w, &hw, benefit);
  mb_time_ps t_slow = mb_slow_time(w, &hw), benefit_sum = 0;
  int32_t fit = 0, unpinned = 0;
  int64_t unpinned_bytes = 0;
  int32_t largest = 0;
  for (int32_t i = 0; i < w->n_buffers; i++) {
    const mb_buffer *b = &w->buffers[i];
    if (b->size > w->buffers[largest].size) largest = i;
    if (b->pinned) continue;
    unpinned++;
    unpinned_bytes += b->size;
    benefit_sum += benefit[i];
    if (b->size <= hw.capacity) fit++;
  }
  char b1[64], b2[64];
  /* names and paths come from files: escaped as in messages (error.h), no raw control bytes */
  mb_diag(stdout, "workload        %s", w->name);
  mb_diag(stdout, "source          %s", w->source);
  if (catalogue_name) {
    char default_cat[4096];
    const char *cat_path =
        wa.catalogue ? wa.catalogue : mb_catalogue_default_path(default_cat, sizeof default_cat);
    mb_diag(stdout, "file            entry '%s' of %s", path,
            cat_path ? cat_path : "datasets/catalogue.txt");
  } else {
    mb_diag(stdout, "file            %s", path);
  }
  printf("sha256          %s (of the canonical text)\n", sha);
  if (w->n_ops)
    printf("ops             %d (schedule length %d)\n", st.n_ops, w->schedule_length);
  else
    printf("ops             none: buffer list with explicit benefits, schedule length %d\n",
           w->schedule_length);
  printf("buffers         %d (%d pinned to slow memory, %d candidates), %d uses\n", st.n_buffers,
         st.n_pinned, unpinned, w->n_uses);
  printf("total bytes     %s; candidates %s\n", fmt_bytes(st.total_bytes, b1, sizeof b1),
         fmt_bytes(unpinned_bytes, b2, sizeof b2));
  mb_diag(stdout, "peak live bytes %s at time %d%s%s%s",
          fmt_bytes(st.peak_live_bytes, b1, sizeof b1), st.peak_time, w->n_ops ? " (op '" : "",
          w->n_ops ? w->ops[st.peak_time].name : "", w->n_ops ? "')" : "");
  mb_diag(stdout, "largest buffer  %s ('%s')", fmt_bytes(st.largest_buffer, b1, sizeof b1),
          w->buffers[largest].name);
  if (w->n_ops) printf("total FLOPs     %.6g\n", st.total_flops);
  mb_diag(stdout, "hardware        %s: fast memory %s, alignment %" PRId64 " B", hw.name,
          fmt_bytes(hw.capacity, b1, sizeof b1), hw.alignment);
  printf("T_slow          %.6f ms (%s)\n", (double)t_slow / 1e9,
         w->n_ops ? "simulated: mallocbench roofline cost model"
                  : "given by the workload: it has no ops to simulate");
  printf(
      "benefit sum     %.6f ms (simulated: sum of candidates' standalone benefits, %.1f%% "
      "of T_slow)\n",
      (double)benefit_sum / 1e9, t_slow > 0 ? 100.0 * (double)benefit_sum / (double)t_slow : 0);
  printf("buffers fitting %d of %d candidates fit in fast memory alone (size <= %s)\n", fit,
         unpinned, fmt_bytes(hw.capacity, b1, sizeof b1));
  free(benefit);
  mb_workload_free(w);
  return 0;
}
