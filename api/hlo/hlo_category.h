/*
 * hlo_category.h — the category of an HLO op from its name alone (the
 * rules are listed in hlo_category.c). Apart from hlo_ops.h because the
 * op scan calls it: the rules need nothing of the scan.
 */
#ifndef XPV_HLO_CATEGORY_H
#define XPV_HLO_CATEGORY_H

#include <stddef.h>

/* The category of an HLO op from its name alone, for profiles that do not
 * carry hlo_category. */
const char *xpv_hlo_category(const char *name, size_t n);
/* `name` without its trailing ".<digits>" groups: "cudnn-conv.1.0" -> 10
 * ("cudnn-conv"). Returns the length kept. */
size_t xpv_hlo_base_len(const char *name, size_t n);

#endif
