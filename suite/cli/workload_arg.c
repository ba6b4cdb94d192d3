/* The WORKLOAD argument that show, solve, check and play share (commands.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "catalogue.h"
#include "commands.h"
#include "paths.h"
#include "workload_io.h"

int mb_option_workload_arg(const char *command, const char *flag, const char *value,
                           mb_workload_arg *wa) {
  const char **field = !strcmp(flag, "--hardware")    ? &wa->hw_name
                       : !strcmp(flag, "--catalogue") ? &wa->catalogue
                       : !strcmp(flag, "--data")      ? &wa->data_dir
                                                      : NULL;
  if (!field) return 0;
  bool ok = field == &wa->hw_name ? mb_option_text(command, flag, value, field)
                                  : mb_option_path(command, flag, value, field);
  return ok ? 1 : -1;
}

void mb_workload_arg_usage(FILE *out) {
  fputs(
      "--hardware H      hardware profile name or path (default tpu-v4i; for a catalogue\n"
      "                  entry its own; an entry keeps its fast-memory size either way,\n"
      "                  as run --hardware does)\n"
      "--catalogue FILE  the catalogue whose entries WORKLOAD may name (default\n"
      "                  datasets/catalogue.txt), as run's --catalogue\n"
      "--data DIR        external data directory of those entries (default\n"
      "                  MALLOCBENCH_DATA or ../shared/data), as run's --data\n",
      out);
}

/* The entry `name` of wa's catalogue on its hardware: its own profile, or with wa->hw_name the
 * profile already in *hw, with the entry's fast-memory size either way (as `run --hardware`
 * keeps it: the catalogue sizes fast memory per workload). NULL with err set when the catalogue
 * does not load (err then quotes its error), has no such entry (err then says that no file has
 * the name either), or the entry does not load. */
static mb_workload *load_entry(const char *name, const mb_workload_arg *wa, mb_hardware *hw,
                               mb_error *err) {
  char default_cat[4096];
  const char *cat_path =
      wa->catalogue ? wa->catalogue : mb_catalogue_default_path(default_cat, sizeof default_cat);
  if (!cat_path) {
    mb_fail(err, "%s: no such file, and the source tree's path is too long for the catalogue (%s)",
            name, mb_source_dir());
    return NULL;
  }
  mb_error cat_err;
  mb_catalogue *cat = mb_catalogue_load(cat_path, &cat_err);
  if (!cat) {
    mb_fail(err, "%s: no such file, and the catalogue that could name it does not load: %s", name,
            cat_err.message);
    return NULL;
  }
  const mb_catalogue_entry *e = NULL;
  for (int32_t i = 0; i < cat->n_entries && !e; i++)
    if (!strcmp(cat->entries[i].name, name)) e = &cat->entries[i];
  if (!e) {
    mb_catalogue_free(cat);
    mb_fail(err, "%s: no such file, nor an entry of %s ('mallocbench list%s%s' lists them)", name,
            cat_path, wa->catalogue ? " --catalogue " : "", wa->catalogue ? wa->catalogue : "");
    return NULL;
  }
  char cache[4096];
  bool missing = false;
  mb_workload *w = NULL;
  if (!mb_cache_dir(cache, sizeof cache))
    mb_fail(err, "%s/results/cache: path too long", mb_source_dir());
  else
    w = mb_catalogue_load_workload(e, mb_data_dir(wa->data_dir), cache, &missing, err);
  if (w && wa->hw_name) {
    *hw = mb_hardware_with_capacity(hw, e->capacity);
  } else if (w && !mb_catalogue_hardware(e, hw, err)) {
    mb_workload_free(w);
    w = NULL;
  }
  mb_catalogue_free(cat);
  return w;
}

mb_workload *mb_cli_workload(const char *arg, const mb_workload_arg *wa, mb_hardware *hw,
                             bool *entry, mb_error *err) {
  bool is_entry = !strchr(arg, '/') && access(arg, F_OK) != 0 && errno == ENOENT;
  if (entry) *entry = is_entry;
  const char *hw_name = wa->hw_name ? wa->hw_name : "tpu-v4i";
  if ((wa->hw_name || !is_entry) && !mb_hardware_find(hw_name, NULL, hw, err)) return NULL;
  return is_entry ? load_entry(arg, wa, hw, err) : mb_workload_load_any(arg, err);
}
