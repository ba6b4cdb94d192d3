/* Checkpoints of mallocMuZero networks in HDF5: weights, optimiser state, metadata.
 *
 * Layout (h5dump and h5py read it directly):
 *   /<module>/                 one group per network; attributes architecture (string),
 *                              in_dim, out_dim
 *   /<module>/<param>          one float32 dataset per parameter tensor ("l3.weight"), rows x
 *                              cols, with a "shape" attribute (int64[2])
 *   /adam/                     attributes step, lr, beta1, beta2, eps, weight_decay
 *   /adam/<module>/<param>.m   first and second moments, shaped like the parameter
 *   /adam/<module>/<param>.v
 *   /series/<name>             1-D float64 datasets (training curves)
 *   /arrays/<name>             1-D typed datasets (training state: the replay buffer's rows),
 *                              chunked, shuffled and deflated (observations are mostly zeros)
 *   /                          metadata attributes (string or double) set by the caller
 * Every dataset above has a string attribute "sha256": the SHA-256 (hex) of its elements as
 * little-endian bytes in row-major order (h5py: hashlib.sha256(np.ascontiguousarray(ds[()],
 * dtype="<f4").tobytes()).hexdigest() for a tensor; "<f8" for a series).
 * Writing goes to a temporary file beside the target that is renamed over it on commit (after
 * fsync; atomic_file.h), so a crash never leaves a truncated checkpoint under the real name; the
 * checkpoint gets a new file's permissions (0666 & ~umask). Loading checks
 * every tensor's shape before reading any: a file of another architecture fails with a
 * message naming the tensor and both shapes, and leaves the module untouched.
 * Damage: files are written in HDF5 1.10's format (H5F_LIBVER_V110 bounds: HDF5 >= 1.10 reads
 * them), which checksums all metadata (superblock, object headers, attribute and link storage,
 * chunk indexes), so damaged metadata is an HDF5 error, not a crash or a changed attribute; and
 * every read dataset is checked against its "sha256", so damaged data fail naming the file and
 * the dataset ("the data do not match their SHA-256"). A tensor or optimiser state that fails
 * the check has already been read into the module (the caller discards it, as agent.h does).
 * Checkpoints written before checksums (the oldest HDF5 format, no "sha256" attributes) load
 * as before, unchecked and without a note: every solve loads its agent, and the note would
 * repeat for each. tests/test_nn_io.c changes one byte at 400 places: each is refused or harmless.
 * While a file is open, HDF5's automatic error printing is switched off (the messages come
 * back through mb_error instead, with HDF5's innermost reason when it gave one, e.g. "incorrect
 * metadata checksum after all read attempts") and restored on close to what it was at opening;
 * with several files open at once, close them in the reverse order. HDF5's exit-time cleanup is
 * switched off, as suite/results.c does. */
#ifndef MB_NN_IO_H
#define MB_NN_IO_H

#include <stdbool.h>
#include <stdint.h>

#include "adam.h"
#include "error.h"
#include "nn.h"

typedef struct mb_nn_file mb_nn_file;

/* Starts writing a checkpoint that will replace `path` on commit. */
mb_nn_file *mb_nn_file_create(const char *path, mb_error *err);
/* Opens an existing checkpoint for reading. */
mb_nn_file *mb_nn_file_open(const char *path, mb_error *err);
/* Writing: closes, fsyncs and renames the temporary file to the target. Reading: closes.
 * Frees f in every case; on failure of a write the target is untouched. */
bool mb_nn_file_commit(mb_nn_file *f, mb_error *err);
/* The path given at creation or opening (the target, not the temporary file). */
const char *mb_nn_file_path(const mb_nn_file *f);
/* Reading: how many datasets read so far matched their SHA-256, and how many had none (written
 * before checksums, or the attribute removed: such data load unchecked). */
void mb_nn_file_checksum_counts(const mb_nn_file *f, int64_t *checked, int64_t *unchecked);
/* Closes without committing (a written temporary file is removed). Frees f; NULL is fine. */
void mb_nn_file_close(mb_nn_file *f);

bool mb_nn_file_write_module(mb_nn_file *f, const mb_nn_module *m, mb_error *err);
/* Loads the group named after m into m's parameters (gradients are zeroed). */
bool mb_nn_file_read_module(mb_nn_file *f, mb_nn_module *m, mb_error *err);
bool mb_nn_file_write_adam(mb_nn_file *f, const mb_adam *opt, mb_error *err);
/* Restores step, hyperparameters and moments into an optimiser created over the same
 * modules (same names and shapes). */
bool mb_nn_file_read_adam(mb_nn_file *f, mb_adam *opt, mb_error *err);

/* Metadata attributes on the root group. Keys: [A-Za-z0-9_.-]+. */
bool mb_nn_file_set_string(mb_nn_file *f, const char *key, const char *value, mb_error *err);
bool mb_nn_file_set_double(mb_nn_file *f, const char *key, double value, mb_error *err);
/* Reads a string attribute (one string, fixed or variable length: h5attr.h) into out (size n);
 * fails when missing, not one string, unreadable or too long. */
bool mb_nn_file_get_string(mb_nn_file *f, const char *key, char *out, int n, mb_error *err);
/* The same, of any length: the text allocated (the caller frees), NULL after err. */
char *mb_nn_file_get_string_alloc(mb_nn_file *f, const char *key, mb_error *err);
bool mb_nn_file_get_double(mb_nn_file *f, const char *key, double *value, mb_error *err);
/* A number attribute that must be an integer >= 0 (counters: exact up to 2^53 in a double). */
bool mb_nn_file_get_count(mb_nn_file *f, const char *key, int64_t *value, mb_error *err);
/* Whether the root group has the attribute (for attributes added after files were written).
 * True also when a damaged file cannot tell: the read that follows then fails, naming it
 * (h5attr.h; results.h's mb_results_has_attr answers the same). */
bool mb_nn_file_has(mb_nn_file *f, const char *key);

/* 1-D double dataset /series/<name> (n >= 0). */
bool mb_nn_file_write_series(mb_nn_file *f, const char *name, const double *x, int64_t n,
                             mb_error *err);
/* Whether /series/<name> exists (for series added after files were written; true, like
 * mb_nn_file_has, when a damaged file cannot tell). */
bool mb_nn_file_has_series(mb_nn_file *f, const char *name);
/* Reads /series/<name> into a malloc'd array (*x, caller frees; NULL when *n == 0). */
bool mb_nn_file_read_series(mb_nn_file *f, const char *name, double **x, int64_t *n, mb_error *err);

/* Element types of /arrays/<name>. */
typedef enum mb_nn_dtype { MB_NN_U8 = 0, MB_NN_I32, MB_NN_F32, MB_NN_F64 } mb_nn_dtype;
/* Writes the n (>= 0) elements of x as /arrays/<name>; a name is written once per file. */
bool mb_nn_file_write_array(mb_nn_file *f, const char *name, mb_nn_dtype type, const void *x,
                            int64_t n, mb_error *err);
/* Reads /arrays/<name> into x, which has room for exactly n elements. Fails before reading
 * anything when the array is missing, of another element type or of another length. */
bool mb_nn_file_read_array(mb_nn_file *f, const char *name, mb_nn_dtype type, void *x, int64_t n,
                           mb_error *err);

#endif
