/*
 * collectives.c — deciding that a kernel or XLA op is a collective from its
 * name: NCCL/RCCL kernels and the XLA collective ops in their spellings
 * (all-reduce, all_reduce, AllReduce, ...). Case-insensitive substring
 * match; separators '-', '_' and ' ' are ignored, so "all-reduce",
 * "all_reduce" and "AllReduce" are the same word. "broadcast" alone is not a
 * collective (XLA's broadcast is a compute op); "collective-broadcast" is.
 */
#include "analysis_internal.h"
#include "collectives.h"

#include <ctype.h>
#include <string.h>

static const char *const COLLECTIVE_WORDS[] = {
    "nccl",          "rccl",     "allreduce",         "allgather",
    "reducescatter", "alltoall", "collectivepermute", "collectivebroadcast",
    "c10d::",        "sendrecv", "raggedalltoall",    NULL,
};

int xpv_collective_name(const char *name, size_t len)
{
    char folded[512];
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < sizeof folded; i++) {
        char c = name[i];
        if (c == '-' || c == '_' || c == ' ') continue;
        folded[n++] = (char)tolower((unsigned char)c);
    }
    folded[n] = 0;
    for (const char *const *w = COLLECTIVE_WORDS; *w; w++)
        if (strstr(folded, *w)) return 1;
    return 0;
}
