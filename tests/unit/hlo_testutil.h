/*
 * hlo_testutil.h — collecting the HLO tools' ops in the unit tests and
 * comparing two collections op for op, field for field (a cached or warmed
 * answer must be the one a scan gives).
 */
#ifndef XPV_HLO_TESTUTIL_H
#define XPV_HLO_TESTUTIL_H

#include "testutil.h"
#include "api/hlo/hlo_cache.h"
#include "api/hlo/hlo_ops.h"

#include <stdio.h>
#include <string.h>

static inline void xpv_test_hlo_collect(sqlite3 *db, const int64_t *ids, size_t n, xpv_hlo_cache *c,
                                        xpv_hlo_ops *o)
{
    xpv_err err = {{0}};
    xpv_tool_scope scope = {.ids = ids, .n = n, .hlo_cache = c};
    int rc = xpv_hlo_ops_collect(db, &scope, o, &err);
    if (rc) fprintf(stderr, "collect: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static inline int xpv_test_same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Two collections agree op for op (both sorted the same way). */
static inline void xpv_test_hlo_assert_same(const xpv_hlo_ops *a, const xpv_hlo_ops *b)
{
    CU_ASSERT_EQUAL_FATAL(a->n, b->n);
    CU_ASSERT_EQUAL(a->total_self_ps, b->total_self_ps);
    CU_ASSERT_EQUAL(a->from_xla_ops, b->from_xla_ops);
    CU_ASSERT_EQUAL(a->from_kernels, b->from_kernels);
    CU_ASSERT_EQUAL(a->unattributed_ps, b->unattributed_ps);
    for (size_t i = 0; i < a->n; i++) {
        const xpv_hlo_op *x = &a->ops[i], *y = &b->ops[i];
        CU_ASSERT_STRING_EQUAL(x->name, y->name);
        CU_ASSERT(xpv_test_same_text(x->category, y->category) &&
                  xpv_test_same_text(x->module, y->module));
        CU_ASSERT(xpv_test_same_text(x->framework_op, y->framework_op));
        CU_ASSERT(x->program_id == y->program_id && x->has_program == y->has_program);
        CU_ASSERT(x->occurrences == y->occurrences && x->total_ps == y->total_ps);
        CU_ASSERT(x->self_ps == y->self_ps && x->category_carried == y->category_carried);
        CU_ASSERT(x->flops == y->flops && x->bytes == y->bytes && x->has_flops == y->has_flops);
    }
}

#endif
