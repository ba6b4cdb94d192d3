/* mallocbench list: the catalogue, filtered, optionally with each workload's statistics.
 *
 * Statistics are off by default: they materialise every workload (imports, generation), a
 * plain listing should not, and the output must not depend on whether stdout is a terminal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "clock.h"
#include "commands.h"
#include "cost.h"
#include "error.h"
#include "paths.h"
#include "workload.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench list [--workloads REGEX] [--tags TAG,...] [--split train|test]\n"
          "                        [--stats] [--no-cache] [--data DIR] [--catalogue FILE]\n"
          "                        [--cache DIR]\n\n"
          "Prints the catalogue (datasets/catalogue.txt; format in datasets/CATALOGUE.md).\n"
          "  --workloads REGEX  only names matching REGEX (PCRE2, unanchored)\n"
          "  --tags T1,T2       only entries carrying every listed tag\n"
          "  --split S          only the train or the test split\n"
          "  --stats            load every listed workload and print its statistics: ops,\n"
          "                     buffers, peak live bytes (all buffers), fast-memory capacity,\n"
          "                     capacity / peak live bytes of the non-pinned buffers, T_slow\n"
          "                     (simulated by mallocbench's roofline cost model, all buffers in\n"
          "                     slow memory) and the wall time to import or generate it.\n"
          "                     Off by default, so that a plain listing never imports or\n"
          "                     generates anything and prints the same whether or not stdout\n"
          "                     is a terminal.\n"
          "  --no-cache         regenerate model and AlphaTensor workloads (measures generation)\n"
          "  --data DIR         external data directory (default MALLOCBENCH_DATA or\n"
          "                     ../shared/data)\n"
          "  --catalogue FILE   another catalogue file\n"
          "  --cache DIR        cache of generated workloads (default results/cache)\n"
          "Entries whose external data is missing are listed as skipped with the reason.\n"
          "Exit status: 0, or 1 when a workload fails to load, 2 on bad usage or catalogue.\n");
}

/* Exact when the size is a whole number of the unit ("128MiB"), else one decimal. */
static const char *fmt_size(int64_t b, char *buf, size_t n) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  int64_t x = b;
  while (u < 4 && x >= 1024 && x % 1024 == 0) x /= 1024, u++;
  if (x < 10240 || u == 4) {
    snprintf(buf, n, "%lld%s", (long long)x, units[u]);
    return buf;
  }
  double v = (double)b;
  u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  snprintf(buf, n, "%.1f%s", v, units[u]);
  return buf;
}

static bool has_all_tags(const char *tags, const char *want) {
  if (!want || !*want) return true;
  char item[256];
  const char *p = want;
  while (*p) {
    size_t len = strcspn(p, ",");
    if (len >= sizeof item) return false; /* longer than any catalogue tag: none has it */
    if (len) {
      memcpy(item, p, len);
      item[len] = '\0';
      bool found = false;
      const char *q = tags;
      while (*q && !found) {
        size_t l2 = strcspn(q, ",");
        found = l2 == len && !strncmp(q, item, len);
        q += l2 + (q[l2] == ',');
      }
      if (!found) return false;
    }
    p += len + (p[len] == ',');
  }
  return true;
}

/* One catalogue line as written (the plain listing). */
static void print_entry(const mb_catalogue_entry *e) {
  char cap[32];
  if (e->capacity)
    fmt_size(e->capacity, cap, sizeof cap);
  else
    snprintf(cap, sizeof cap, "profile");
  /* catalogue fields are text from a file: escaped as in messages (error.h) */
  mb_diag(stdout, "%-36s %-11s %-5s %-8s %9s %-40s %s %s", e->name, e->kind, e->split, e->hardware,
          cap, e->tags, e->source, e->args);
  fflush(stdout);
}

typedef enum row_status { ROW_SHOWN, ROW_SKIPPED, ROW_FAILED } row_status;

/* One entry's statistics (--stats): loads the workload; a missing data file is a skipped row,
 * any other error a failed one. */
static row_status print_stats_row(const mb_catalogue_entry *e, const char *data_dir,
                                  const char *cache) {
  mb_error err;
  mb_hardware hw;
  if (!mb_catalogue_hardware(e, &hw, &err)) {
    mb_diag(stdout, "%-36s FAILED: %s", e->name, err.message);
    return ROW_FAILED;
  }
  bool missing = false;
  double t0 = mb_wall_seconds();
  mb_workload *w = mb_catalogue_load_workload(e, data_dir, cache, &missing, &err);
  double load_ms = (mb_wall_seconds() - t0) * 1e3;
  if (!w) {
    mb_diag(stdout, "%-36s %s: %s", e->name, missing ? "skipped" : "FAILED", err.message);
    fflush(stdout);
    return missing ? ROW_SKIPPED : ROW_FAILED;
  }
  if (!mb_cost_check_range(w, &hw, &err)) {
    mb_diag(stdout, "%-36s FAILED: %s", e->name, err.message);
    fflush(stdout);
    mb_workload_free(w);
    return ROW_FAILED;
  }
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  int64_t placeable = mb_catalogue_placeable_peak(w);
  mb_time_ps t_slow = mb_slow_time(w, &hw);
  char cap[32], peak[32], ratio[32];
  fmt_size(hw.capacity, cap, sizeof cap);
  if (placeable > 0)
    snprintf(ratio, sizeof ratio, "%.3f", (double)hw.capacity / (double)placeable);
  else
    snprintf(ratio, sizeof ratio, "-");
  mb_diag(stdout, "%-36s %-5s %-8s %7d %7d %10s %9s %8s %12.1f %9.1f", e->name, e->split,
          e->hardware, st.n_ops, st.n_buffers, fmt_size(st.peak_live_bytes, peak, sizeof peak), cap,
          ratio, (double)t_slow / 1e6, load_ms);
  fflush(stdout);
  mb_workload_free(w);
  return ROW_SHOWN;
}

int mb_cmd_list(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  const char *regex = NULL, *tags = NULL, *split = NULL, *data = NULL, *cat_path = NULL,
             *cache = NULL;
  bool stats = false, no_cache = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--stats")) {
      stats = true;
      continue;
    }
    if (!strcmp(a, "--no-cache")) {
      no_cache = true;
      continue;
    }
    if (a[0] != '-') {
      mb_diag(stderr, "mallocbench list: unexpected argument '%s' (list takes options only)", a);
      return 2;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    const char *flag = o.flag, *v = o.value;
    const char **slot = !strcmp(flag, "--workloads")   ? &regex
                        : !strcmp(flag, "--tags")      ? &tags
                        : !strcmp(flag, "--data")      ? &data
                        : !strcmp(flag, "--catalogue") ? &cat_path
                        : !strcmp(flag, "--cache")     ? &cache
                                                       : NULL;
    bool is_path = slot == &data || slot == &cat_path || slot == &cache;
    if (slot) {
      if (!(is_path ? mb_option_path : mb_option_text)("list", flag, v, slot)) return 2;
    } else if (!strcmp(flag, "--split")) {
      if (!mb_option_split("list", flag, v, &split)) return 2;
    } else {
      return mb_unknown_option("list", a);
    }
    i = o.last;
  }
  char default_cat[4096], default_cache[4096];
  if (!cat_path) {
    if (!mb_catalogue_default_path(default_cat, sizeof default_cat)) {
      fprintf(stderr, "mallocbench list: source directory path too long\n");
      return 2;
    }
    cat_path = default_cat;
  }
  if (!cache && !no_cache) {
    if (!mb_cache_dir(default_cache, sizeof default_cache)) {
      fprintf(stderr, "mallocbench list: source directory path too long\n");
      return 2;
    }
    cache = default_cache;
  }
  if (no_cache) cache = NULL;
  const char *data_dir = mb_data_dir(data);

  mb_error err;
  mb_catalogue *cat = mb_catalogue_load(cat_path, &err);
  if (!cat) {
    mb_diag(stderr, "mallocbench list: %s", err.message);
    return 2;
  }
  bool *selected = calloc((size_t)(cat->n_entries ? cat->n_entries : 1), sizeof *selected);
  if (!selected || !mb_catalogue_select(cat, regex, "--workloads", selected, &err)) {
    mb_diag(stderr, "mallocbench list: %s", selected ? err.message : "out of memory");
    free(selected);
    mb_catalogue_free(cat);
    return 2;
  }

  if (stats)
    printf(
        "# statistics: T_slow simulated by mallocbench's roofline cost model (all buffers in "
        "slow memory);\n# cap/peak = capacity / peak live bytes of the non-pinned buffers; "
        "load = wall time to import or generate%s\n",
        cache ? " (cache hits are fast; --no-cache measures generation)" : "");
  if (stats)
    printf("%-36s %-5s %-8s %7s %7s %10s %9s %8s %12s %9s\n", "name", "split", "hardware", "ops",
           "buffers", "peak_live", "capacity", "cap/peak", "T_slow_us", "load_ms");
  else
    printf("%-36s %-11s %-5s %-8s %9s %-40s %s\n", "name", "kind", "split", "hardware", "capacity",
           "tags", "source args");
  int shown = 0, skipped = 0, failed = 0;
  for (int32_t i = 0; i < cat->n_entries; i++) {
    const mb_catalogue_entry *e = &cat->entries[i];
    if (!selected[i]) continue;
    if (split && strcmp(split, e->split)) continue;
    if (!has_all_tags(e->tags, tags)) continue;
    shown++;
    if (!stats) {
      print_entry(e);
      continue;
    }
    row_status st = print_stats_row(e, data_dir, cache);
    skipped += st == ROW_SKIPPED;
    failed += st == ROW_FAILED;
  }
  char counts[96] = "";
  if (stats)
    snprintf(counts, sizeof counts, "; %d skipped (missing data), %d failed", skipped, failed);
  mb_diag(stdout, "# %d listed of %d in %s%s", shown, cat->n_entries, cat_path, counts);
  mb_catalogue_free(cat);
  free(selected);
  return failed ? 1 : 0;
}
