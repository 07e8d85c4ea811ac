/*
 * fuzz.h — what the fuzz targets share: each target defines
 * LLVMFuzzerTestOneInput; fuzz_index.c indexes one input as a profile file
 * the way the server would. Built two ways (tests/CMakeLists.txt): with
 * libFuzzer under clang (scripts/fuzz.sh), and with fuzz_replay.c as main
 * so that the regression inputs in tests/fuzz/regress/ run in every ctest.
 */
#ifndef XPV_FUZZ_H
#define XPV_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data to a private temporary file named file_name (its ending picks
 * the format candidates, as in a profile directory), then discovers and
 * indexes it into a private index, running the reader and the analysis.
 * Aborts only on a failure of the harness itself, never of the input. */
void xpv_fuzz_index_file(const char *file_name, const uint8_t *data, size_t size);

/* The profile folder of the private index, created on first use. */
const char *xpv_fuzz_profiles_dir(void);
/* Writes a file into that folder. */
void xpv_fuzz_write(const char *file_name, const uint8_t *data, size_t size);
/* Indexes everything in that folder (every profile again). */
void xpv_fuzz_index_all(void);

/* The private temporary folder of this process (created on first use). */
const char *xpv_fuzz_tmpdir(void);

#endif
