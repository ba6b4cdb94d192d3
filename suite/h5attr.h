/* HDF5 attributes: the pieces the results store (results.c) and the network checkpoints
 * (solvers/muzero/nn_io.c) share, so that both answer "is it there?" the same way.
 *
 * Why: both read attributes that files written before them lack (a resumed run's options, an
 * agent's newer config fields), asking first whether the attribute exists. On a damaged file
 * HDF5 cannot always tell (a metadata checksum that does not match); taking that for "absent"
 * would silently use an older file's default where the file holds something it cannot read
 * (a resume with other options, an agent with another game), so an error is never absence:
 * mb_h5attr_find says MB_H5ATTR_ERROR, and a reader that only asks yes or no treats it as
 * present, so that the read that follows fails and says why. The innermost HDF5 message of a
 * failed call is what both put into their errors ("incorrect metadata checksum after all read
 * attempts"). Writing stays with each file: the two store numbers differently (a scalar, and
 * H5LT's one-element array), and both formats are published. */
#ifndef MB_H5ATTR_H
#define MB_H5ATTR_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef enum mb_h5attr_state {
  MB_H5ATTR_ERROR = -1, /* HDF5 failed to tell (a damaged file, a bad name) */
  MB_H5ATTR_ABSENT = 0,
  MB_H5ATTR_PRESENT = 1
} mb_h5attr_state;

/* Whether the object `obj` has the attribute `key`. */
mb_h5attr_state mb_h5attr_find(hid_t obj, const char *key);

/* Deletes the attribute `key` of obj when it is there, so that it can be created anew. False
 * when HDF5 cannot tell or cannot delete it. */
bool mb_h5attr_remove(hid_t obj, const char *key);

/* Reads the string attribute `key` of obj (one string: a scalar or a one-element array, fixed
 * or variable length) into a malloc'd NUL-terminated text. NULL after err, whose message,
 * without the file's name (the caller prefixes it), is one of "attribute 'K' is missing",
 * "attribute 'K' is not a string", "attribute 'K' is not a single string" and
 * "attribute 'K': cannot read it (damaged file?): REASON"; *state (when not NULL) says which
 * kind: MB_H5ATTR_ABSENT for the first, MB_H5ATTR_ERROR for the last, MB_H5ATTR_PRESENT for
 * the others and on success. */
char *mb_h5attr_read_string(hid_t obj, const char *key, mb_h5attr_state *state, mb_error *err);

/* The innermost message of HDF5's error stack, left by the last call that failed, into out
 * (size n >= 1), or "" when there is none; returns out. */
const char *mb_h5attr_reason(char *out, size_t n);

#endif
