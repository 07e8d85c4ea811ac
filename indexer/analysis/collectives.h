/*
 * collectives.h — which kernel and op names are collectives (collectives.c),
 * for the kernel rows and, through analysis.h, the findings (api/).
 */
#ifndef XPV_COLLECTIVES_H
#define XPV_COLLECTIVES_H

#include <stddef.h>

/* 1 when the name looks like a collective (NCCL/RCCL kernel, XLA all-reduce,
 * ...): collectives.c. The findings (api/) classify kernels the same way. */
int xpv_collective_name(const char *name, size_t len);

#endif
