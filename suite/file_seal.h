/* File seals: a SHA-256 of a whole file, kept in the file's first MB_SEAL_BLOCK bytes and checked
 * before anything parses the rest. Used for results files (suite/results.c).
 *
 * Why: libhdf5 1.10 parses damaged metadata of the oldest file format (which results files keep
 * for crash safety, see results.h) without checks and can crash on it, and it never checks raw
 * data: of 2000 one-byte changes of a results file, 6 crashed a reader inside libhdf5 and 86
 * read back changed without an error (tests/stress/damage_count; the hostile-input review saw
 * `verify` or `export` segfault on 2 of 40).
 * HDF5's newer formats checksum their metadata, but results files are updated in place while a
 * run goes on, and there a checksummed object header that a kill -9 cuts in the middle of its
 * write makes a whole group unreadable: tests/stress/hdf5_kill_stress lost committed tasks in 3
 * of 1000 kills with H5F_LIBVER_V18 bounds, none with the oldest format (results/README.md). So
 * the format stays, and a finished file is sealed instead: every byte of it is covered, metadata
 * and data, and a damaged file is refused before libhdf5 sees it.
 *
 * The block is HDF5's user block (H5Pset_userblock(fcpl, MB_SEAL_BLOCK)): HDF5 data starts
 * after it, and libhdf5, h5dump and h5py skip it. It is ASCII text, NUL-padded:
 *   mallocbench-seal 1
 *   kind: results
 *   state: open                    (being written, or its writer was killed: not checked)
 * or
 *   state: sealed
 *   size: 1182345                  (bytes of the whole file)
 *   sha256: <64 hex digits>        (of bytes MB_SEAL_BLOCK .. size-1)
 * and, in its last 80 bytes, "header-sha256: <64 hex digits>\n", the SHA-256 of the bytes before
 * them, so that damage to the block itself is seen too. A file without the first line (written
 * before seals existed, or by another program) has no seal: its readers go on as before.
 * Any one-byte change of a sealed file is therefore either refused or harmless (one of the first
 * 17 bytes, "mallocbench-seal ": the file then reads as unsealed, and its contents are intact).
 *
 * Writers mark a file open before they change it and seal it after closing it; a kill in between
 * leaves it open, and readers then rely on the HDF5 file itself (a killed results file is
 * rebuilt from its journal by `run --resume`), reading it first in a child process (results.h). */
#ifndef MB_FILE_SEAL_H
#define MB_FILE_SEAL_H

#include <stdbool.h>

#include "error.h"

#define MB_SEAL_BLOCK 512   /* bytes; a power of two >= 512, as HDF5 user blocks are */
#define MB_SEAL_KIND_MAX 32 /* bytes of a kind with its NUL: writers refuse longer kinds */

typedef enum mb_seal_state {
  MB_SEAL_NONE = 0, /* no seal block: written before seals, or not by mallocbench */
  MB_SEAL_OPEN,     /* being written, or its writer stopped before sealing it */
  MB_SEAL_OK        /* sealed, and every byte matches the seal */
} mb_seal_state;

/* Checks the seal of `path`. False with err set ("PATH: the file is damaged: ...") when the
 * block is damaged or a sealed file no longer matches its seal, or on an I/O error; otherwise
 * true with *state, and the block's kind in kind (MB_SEAL_KIND_MAX bytes, a longer kind that
 * another program wrote cut to fit; "" without a block; may be NULL). Reads the whole file when it
 * is sealed. */
bool mb_seal_check(const char *path, mb_seal_state *state, char *kind, mb_error *err);
/* Writes the block "open" (of the given kind: at most MB_SEAL_KIND_MAX - 1 bytes, no newline;
 * refused otherwise, before anything is written). The file's HDF5 data must start at MB_SEAL_BLOCK
 * (its signature is checked there): never writes over the data of a file without the block. */
bool mb_seal_mark_open(const char *path, const char *kind, mb_error *err);
/* Hashes the file and writes the block "sealed", then fdatasync; call after the writer closed
 * the file. Same precondition as mb_seal_mark_open. */
bool mb_seal_close(const char *path, const char *kind, mb_error *err);
/* Removes the block (zeroes it: the file then reads as one without a seal). For a file changed
 * on purpose by another program, which its seal would refuse. True without writing when the
 * file has no block; same precondition as mb_seal_mark_open otherwise. */
bool mb_seal_remove(const char *path, mb_error *err);
/* Whether the file starts with a seal block's first line (damaged or not): a file mallocbench
 * wrote with a seal, which is HDF5 from byte MB_SEAL_BLOCK on. */
bool mb_seal_has_block(const char *path);
/* Whether the file's seal block says "sealed" (whatever the file's bytes are: unlike
 * mb_seal_check it does not hash the file, so a damaged sealed file also says so). For a
 * quick look at which files a reader will check before libhdf5 parses them. */
bool mb_seal_says_sealed(const char *path);

#endif
