#!/usr/bin/env bash
# The cleanup of ctest's temporary-files fixture (CMakeLists.txt, test_tmp_setup): fails when
# /tmp holds a file or folder named as the tests name theirs (mbtest*, mb-*, mallocbench-*,
# hdf5_kill_stress.*, fuzz_*) that is newer than MARKER, the file the setup made before the
# tests ran. Tests write under TMPDIR (the build tree's test-tmp/); one that writes to /tmp
# itself must remove what it made there (tests/e2e/catalogue.sh does).
# Usage: tmp_check.sh MARKER
set -u
marker=${1:?usage: tmp_check.sh MARKER}
[ -e "$marker" ] || { echo "FAIL: no marker $marker: test_tmp_setup did not run" >&2; exit 1; }
left=$(find /tmp -maxdepth 1 -mindepth 1 -newer "$marker" -user "$(id -u)" \
  \( -name 'mbtest*' -o -name 'mb-*' -o -name 'mallocbench-*' -o -name 'hdf5_kill_stress.*' \
  -o -name 'fuzz_*' \) 2>/dev/null)
if [ -n "$left" ]; then
  echo "FAIL: the tests left in /tmp (write under \$TMPDIR, or remove them):" >&2
  echo "$left" >&2
  exit 1
fi
echo "tmp_check: no test left a file in /tmp"
