#include "version.h"

#include "git_commit.h"

const char *mb_version(void) { return MB_VERSION; }
const char *mb_git_commit(void) { return MB_GIT_COMMIT; }
bool mb_git_dirty(void) { return MB_GIT_DIRTY != 0; }
const char *mb_build_type(void) { return MB_BUILD_TYPE; }
const char *mb_compiler(void) { return MB_COMPILER; }

void mb_print_version(FILE *out) {
  fprintf(out, "mallocbench %s (commit %s%s, %s, %s)\n", mb_version(), mb_git_commit(),
          mb_git_dirty() ? ", dirty" : "", mb_build_type(), mb_compiler());
}
