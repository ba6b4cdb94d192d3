# Finds every third-party dependency; a missing one stops configuration with the name
# of the Debian package that provides it (scripts/setup.sh installs them all).
find_package(Threads REQUIRED)
find_package(PkgConfig)

macro(mb_missing what package)
  message(FATAL_ERROR "mallocbench: ${what} not found. Install the Debian package '${package}' "
                      "(or run ./scripts/setup.sh, which installs every dependency).")
endmacro()

if(NOT PKG_CONFIG_FOUND)
  mb_missing("pkg-config" "pkg-config")
endif()

find_package(HDF5 COMPONENTS C HL QUIET)
if(NOT HDF5_FOUND OR NOT HDF5_HL_LIBRARIES)
  mb_missing("HDF5 with its high-level library" "libhdf5-dev")
endif()

pkg_check_modules(PCRE2 QUIET libpcre2-8)
if(NOT PCRE2_FOUND)
  mb_missing("PCRE2 (libpcre2-8)" "libpcre2-dev")
endif()

pkg_check_modules(CMOCKA QUIET cmocka)
if(NOT CMOCKA_FOUND)
  mb_missing("cmocka" "libcmocka-dev")
endif()

find_path(CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas)
find_library(CBLAS_LIBRARY NAMES openblas cblas blas)
if(NOT CBLAS_INCLUDE_DIR OR NOT CBLAS_LIBRARY)
  mb_missing("a CBLAS (cblas.h and libopenblas)" "libopenblas-dev")
endif()

find_path(GLPK_INCLUDE_DIR glpk.h)
find_library(GLPK_LIBRARY NAMES glpk)
if(NOT GLPK_INCLUDE_DIR OR NOT GLPK_LIBRARY)
  mb_missing("GLPK (glpk.h and libglpk)" "libglpk-dev")
endif()

set(MB_DEP_INCLUDE_DIRS ${HDF5_INCLUDE_DIRS} ${PCRE2_INCLUDE_DIRS} ${CBLAS_INCLUDE_DIR} ${GLPK_INCLUDE_DIR})
set(MB_DEP_LIBRARIES ${HDF5_HL_LIBRARIES} ${HDF5_C_LIBRARIES} ${PCRE2_LINK_LIBRARIES}
    ${CBLAS_LIBRARY} ${GLPK_LIBRARY})
