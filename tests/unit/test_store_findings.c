/*
 * test_store_findings.c — store/findings.c: an answer comes back only
 * under the key and stamp it was kept with; a put replaces the profile's
 * answer; clearing or dropping the profile drops it; a write from a
 * transaction another connection overtook says busy; a broken query is an
 * error.
 */
#include "testutil.h"
#include "store/findings.h"
#include "store/index_db.h"

#include <stdio.h>
#include <string.h>

static sqlite3 *db;
static char dir[1024];

static void setup(void)
{
    if (db) return;
    snprintf(dir, sizeof dir, "%s", xpv_test_tmpdir());
    db = xpv_test_fresh_index(dir, 1);
}

static const char BODY[] = ",\"complete\":true,\"steps\":2,\"findings\":[]}";

static void test_key_and_stamp(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_buf b = {0};
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 7, 9, &b, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_findings_put(db, 1, 7, 9, BODY, strlen(BODY), NULL, &err), 0);
    /* the high bit survives SQLite's signed integers */
    CU_ASSERT_EQUAL(xpv_store_findings_put(db, 2, UINT64_MAX, 1ULL << 63, "x", 1, NULL, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 7, 9, &b, &err), 1);
    CU_ASSERT_EQUAL(b.len, strlen(BODY));
    CU_ASSERT_EQUAL(memcmp(b.data, BODY, b.len), 0);
    xpv_buf_reset(&b);
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 8, 9, &b, &err), 0);  /* other thresholds */
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 7, 10, &b, &err), 0); /* indexed again */
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 3, 7, 9, &b, &err), 0);  /* other profile */
    CU_ASSERT_EQUAL(b.len, 0);
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 2, UINT64_MAX, 1ULL << 63, &b, &err), 1);
    CU_ASSERT_EQUAL(b.len, 1);
    CU_ASSERT_EQUAL(xpv_store_findings_count(db, &err), 2);
    xpv_buf_free(&b);
}

static void test_put_replaces(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_buf b = {0};
    CU_ASSERT_EQUAL(xpv_store_findings_put(db, 1, 8, 9, "new", 3, NULL, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 7, 9, &b, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 8, 9, &b, &err), 1);
    CU_ASSERT_EQUAL(b.len, 3);
    CU_ASSERT_EQUAL(xpv_store_findings_count(db, &err), 2);
    xpv_buf_free(&b);
}

static void test_cleared_with_the_profile(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_buf b = {0};
    CU_ASSERT_EQUAL(xpv_index_clear_profile(db, 1, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 8, 9, &b, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_findings_count(db, &err), 1); /* profile 2's stays */
    xpv_buf_free(&b);
}

/* Connection a computes from a snapshot; b indexes the profile again
 * before a writes: a's write fails, saying busy, and keeps nothing. */
static void test_overtaken_write_is_busy(void)
{
    setup();
    xpv_err err = {{0}};
    char path[1100];
    snprintf(path, sizeof path, "%s/index.sqlite", dir);
    sqlite3 *other = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &other), SQLITE_OK);
    CU_ASSERT_EQUAL(xpv_db_exec(db, "BEGIN", &err), 0);
    xpv_buf b = {0};
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 8, 9, &b, &err), 0); /* the snapshot */
    CU_ASSERT_EQUAL(xpv_db_exec(other, "UPDATE profiles SET status='ok' WHERE id=1", &err), 0);
    int busy = 0;
    CU_ASSERT_EQUAL(xpv_store_findings_put(db, 1, 8, 9, "stale", 5, &busy, &err), -1);
    CU_ASSERT_EQUAL(busy, 1);
    xpv_db_exec(db, "ROLLBACK", NULL);
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 8, 9, &b, &err), 0);
    sqlite3_close(other);
    xpv_buf_free(&b);
}

static void test_errors(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_buf b = {0};
    int busy = 1;
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE findings RENAME TO findings_gone", &err), 0);
    CU_ASSERT_EQUAL(xpv_store_findings_get(db, 1, 8, 9, &b, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no such table"));
    CU_ASSERT_EQUAL(xpv_store_findings_put(db, 1, 8, 9, "x", 1, &busy, &err), -1);
    CU_ASSERT_EQUAL(busy, 0);
    CU_ASSERT_EQUAL(xpv_store_findings_count(db, &err), -1);
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE findings_gone RENAME TO findings", &err), 0);
    xpv_buf_free(&b);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"an answer under its key and stamp only", test_key_and_stamp},
        {"a put replaces the profile's answer", test_put_replaces},
        {"cleared with the profile's rows", test_cleared_with_the_profile},
        {"a write overtaken by another connection is busy", test_overtaken_write_is_busy},
        {"a broken query is an error", test_errors},
        {NULL, NULL},
    };
    return xpv_test_run("store_findings", tests, 0);
}
