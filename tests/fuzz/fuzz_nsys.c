/*
 * fuzz_nsys.c — the Nsight Systems SQLite export reader on mutated copies
 * of real exports: a damaged database must give an error for that profile,
 * never a crash. The file lives on tmpfs (/dev/shm) when there is one.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xpv_fuzz_index_file("report.sqlite", data, size);
    return 0;
}
