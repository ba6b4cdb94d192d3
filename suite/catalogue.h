/* The catalogue: datasets/catalogue.txt, the list of benchmark workloads.
 *
 * One entry per line (format documented in datasets/README.md): name, kind of source, source
 * path, generator arguments, hardware profile, fast-memory capacity, split, tags.
 * Workloads are materialised on demand: HLO files and CSVs are imported from the data
 * directory, model specs and AlphaTensor traces are generated and cached under
 * results/cache/ (keyed by spec content and generator version). */
#ifndef MB_CATALOGUE_H
#define MB_CATALOGUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "hardware.h"
#include "workload.h"

typedef struct mb_catalogue_entry {
  char name[128];
  char kind[16];     /* "hlo", "model", "alphatensor", "csv", "native" */
  char source[512];  /* hlo/csv/factorization: relative to the data dir ("builtin:..." for
                        built-in factorizations); model/native: relative to the source tree */
  char args[256];    /* generator arguments, e.g. "n=8192 dtype=bf16"; "-" when none */
  char hardware[64]; /* hardware profile name */
  int64_t capacity;  /* fast-memory bytes for this workload (0: the profile's) */
  char split[8];     /* "train" or "test" */
  char tags[256];    /* comma-separated: family, inference/training, real/generated, ... */
  int32_t line;      /* line in the catalogue file */
} mb_catalogue_entry;

/* The catalogue's splits, NULL-terminated: agents train on "train"; "test" holds the workloads
 * they never saw. */
#define MB_CATALOGUE_N_SPLITS 2
extern const char *const mb_catalogue_splits[MB_CATALOGUE_N_SPLITS + 1];
/* True when NAME is one of mb_catalogue_splits. */
bool mb_catalogue_split_known(const char *name);

typedef struct mb_catalogue {
  char *path;
  int32_t n_entries;
  mb_catalogue_entry *entries;
} mb_catalogue;

mb_catalogue *mb_catalogue_load(const char *path, mb_error *err);
/* Parses catalogue text of `len` bytes; `path` names it in messages (file:line:column). */
mb_catalogue *mb_catalogue_parse(const char *text, size_t len, const char *path, mb_error *err);
void mb_catalogue_free(mb_catalogue *c);
/* datasets/catalogue.txt under the source tree (mb_source_dir: MALLOCBENCH_HOME moves it, as it
 * moves the entries' sources and the hardware profiles), into out (size n); returns out, or NULL
 * when it does not fit. */
char *mb_catalogue_default_path(char *out, size_t n);

/* Materialises an entry's workload. When its external data is missing, returns NULL with
 * *missing = true and err holding one line naming what is missing and how to get it. */
mb_workload *mb_catalogue_load_workload(const mb_catalogue_entry *e, const char *data_dir,
                                        const char *cache_dir, bool *missing, mb_error *err);
/* The entry's hardware: the named profile with the entry's capacity applied. */
bool mb_catalogue_hardware(const mb_catalogue_entry *e, mb_hardware *out, mb_error *err);
/* Peak over time of the bytes of live non-pinned buffers: what could ever want fast memory.
 * -1 on allocation failure. */
int64_t mb_catalogue_placeable_peak(const mb_workload *w);
/* The capacity rule (datasets/CATALOGUE.md): the profile's capacity when the placeable peak
 * exceeds twice it, else the largest power-of-two multiple of the alignment <= peak / 4;
 * never below the smallest non-pinned buffer (rounded up to the alignment). */
int64_t mb_catalogue_auto_capacity(const mb_workload *w, const mb_hardware *hw);
/* Marks selected[i] for every entry whose name matches the PCRE2 pattern `regex` (unanchored,
 * as grep); a NULL regex selects everything. `option` names the flag in messages, e.g.
 * "--workloads 'x(': column 3: missing closing parenthesis". */
bool mb_catalogue_select(const mb_catalogue *c, const char *regex, const char *option,
                         bool *selected, mb_error *err);
/* The same over n names that sit `stride` bytes apart from `first` (a name field in an array of
 * structs; first may be NULL when n is 0), so that every --workloads filter (run, list, train,
 * summary) matches alike. */
bool mb_names_select(const char *first, size_t stride, int32_t n, const char *regex,
                     const char *option, bool *selected, mb_error *err);
/* SHA-256 (hex) of the catalogue file's bytes, for provenance. */
bool mb_catalogue_hash(const mb_catalogue *c, char out[65], mb_error *err);

#endif
