/*
 * sink_testutil.h — opening and finishing a real sink in the unit tests
 * that write through one (kept apart from testutil.c: test_xplane.c stubs
 * the sink, and linking these would pull in the real one).
 */
#ifndef XPV_SINK_TESTUTIL_H
#define XPV_SINK_TESTUTIL_H

#include "testutil.h"
#include "store/index_db.h"
#include "indexer/ingest.h"

#include <stdio.h>

/* A sink writing profile_id of db: the profiles row is added when missing
 * (path "p<id>"), and its format set when format is not NULL. */
static inline xpv_sink *xpv_test_sink(sqlite3 *db, int64_t profile_id, const char *format)
{
    char sql[200];
    xpv_err err = {{0}};
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO profiles(id, path) VALUES(%lld, 'p%lld')",
             (long long)profile_id, (long long)profile_id);
    CU_ASSERT_EQUAL(xpv_db_exec(db, sql, &err), 0);
    if (format) {
        snprintf(sql, sizeof sql, "UPDATE profiles SET format='%s' WHERE id=%lld", format,
                 (long long)profile_id);
        CU_ASSERT_EQUAL(xpv_db_exec(db, sql, &err), 0);
    }
    xpv_sink *s = xpv_sink_open(db, profile_id, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    return s;
}

/* Finishes and frees the sink, asserting that finishing worked. */
static inline void xpv_test_sink_finish(xpv_sink *s)
{
    xpv_err err = {{0}};
    int rc = xpv_sink_finish(s, NULL, &err);
    if (rc != 0) fprintf(stderr, "finish: %s\n", err.msg);
    CU_ASSERT_EQUAL(rc, 0);
    xpv_sink_free(s);
}

#endif
