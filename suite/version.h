/* Version and build facts, for --version and for results provenance. */
#ifndef MB_VERSION_H
#define MB_VERSION_H

#include <stdbool.h>
#include <stdio.h>

const char *mb_version(void);    /* project version, e.g. "0.1.0" */
const char *mb_git_commit(void); /* commit the binary was built from, or "unknown" */
bool mb_git_dirty(void);         /* built from a tree with uncommitted changes */
const char *mb_build_type(void); /* CMake build type */
const char *mb_compiler(void);   /* compiler id and version */
void mb_print_version(FILE *out);

#endif
