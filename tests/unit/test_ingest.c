/*
 * test_ingest.c — the sink's process and thread tables (indexer/ingest.c):
 * naming and sorting threads the sink has not seen yet, past the growth of
 * its track array, lands on the right track (under ASan, a stale array
 * would be caught as a use after free).
 */
#include "testutil.h"
#include "indexer/ingest.h"

#include <stdio.h>
#include <string.h>

#define PROFILE 7

static void test_new_threads_named_and_sorted(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), PROFILE);
    xpv_err err = {{0}};
    xpv_sink *s = xpv_sink_open(db, PROFILE, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    enum { N = 300 }; /* well past the first growth of the track array (64) */
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "thread %d", i);
        xpv_sink_thread_name(s, 1, i, name, strlen(name));
        xpv_sink_thread_sort(s, 2, i, 1000 + i);
    }
    CU_ASSERT_EQUAL(xpv_sink_finish(s, NULL, &err), 0);
    xpv_sink_free(s);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM tracks WHERE profile_id=7"), 2 * N);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM tracks WHERE profile_id=7 AND pid=1 AND"
                                     " thread_name = 'thread ' || tid"),
                    N);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM tracks WHERE profile_id=7 AND pid=2 AND"
                                     " thread_sort = 1000 + tid"),
                    N);
    sqlite3_close(db);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"threads named and sorted before their first event", test_new_threads_named_and_sorted},
        {NULL, NULL},
    };
    return xpv_test_run("ingest", tests, 0);
}
