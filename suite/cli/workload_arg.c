/* The WORKLOAD argument that show, solve, check and play share (commands.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "catalogue.h"
#include "commands.h"
#include "paths.h"
#include "workload_io.h"

/* The default catalogue's entry `name` on its hardware: its own profile, or with hw_given the
 * profile already in *hw, with the entry's fast-memory size either way (as `run --hardware`
 * keeps it: the catalogue sizes fast memory per workload). NULL with err set when there is no
 * such entry (err then says that no file has the name either) or it does not load. */
static mb_workload *load_entry(const char *name, bool hw_given, mb_hardware *hw, mb_error *err) {
  mb_error cat_err;
  mb_catalogue *cat = mb_catalogue_load(mb_catalogue_default_path(), &cat_err);
  const mb_catalogue_entry *e = NULL;
  for (int32_t i = 0; cat && i < cat->n_entries && !e; i++)
    if (!strcmp(cat->entries[i].name, name)) e = &cat->entries[i];
  if (!e) {
    mb_catalogue_free(cat);
    mb_fail(err, "%s: no such file, nor an entry of %s ('mallocbench list' lists them)", name,
            mb_catalogue_default_path());
    return NULL;
  }
  char cache[4096];
  bool missing = false;
  mb_workload *w = mb_catalogue_load_workload(
      e, mb_data_dir(NULL), mb_path_join(cache, sizeof cache, mb_source_dir(), "results/cache"),
      &missing, err);
  if (w && hw_given) {
    *hw = mb_hardware_with_capacity(hw, e->capacity);
  } else if (w && !mb_catalogue_hardware(e, hw, err)) {
    mb_workload_free(w);
    w = NULL;
  }
  mb_catalogue_free(cat);
  return w;
}

mb_workload *mb_cli_workload(const char *arg, const char *hw_name, bool hw_given, mb_hardware *hw,
                             bool *entry, mb_error *err) {
  bool is_entry = !strchr(arg, '/') && access(arg, F_OK) != 0 && errno == ENOENT;
  if (entry) *entry = is_entry;
  if ((hw_given || !is_entry) && !mb_hardware_find(hw_name, NULL, hw, err)) return NULL;
  return is_entry ? load_entry(arg, hw_given, hw, err) : mb_workload_load_any(arg, err);
}
