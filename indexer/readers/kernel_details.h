/*
 * kernel_details.h — parsing the GPU tracer's `kernel_details` text into a
 * launch shape. Shared by the xplane and trace-JSON readers (JAX writes the
 * same text into both).
 *
 * Current form: "regs:N static_shared:N dynamic_shared:N grid:x,y,z
 * block:x,y,z occ_pct:F" (space or newline separated, any order); older
 * files: "regs:N shm:N grid:x,y,z block:x,y,z". Unknown keys are ignored;
 * a value that does not parse leaves that field unknown (-1), never 0.
 */
#ifndef XPV_KERNEL_DETAILS_H
#define XPV_KERNEL_DETAILS_H

#include "../../store/xpv_event.h"
#include <stddef.h>

/* Fills the fields found in text into *out (others are left as they are).
 * Returns the number of fields recognised. */
int xpv_kernel_details_parse(const char *text, size_t len, xpv_launch *out);

#endif
