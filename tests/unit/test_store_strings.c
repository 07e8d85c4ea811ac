/*
 * test_store_strings.c — store/strings.c on hand-made rows: lookups by id
 * (a NULL value and a missing id read as not found), the ids of a list of
 * values, whether profiles hold a value, the candidate and containing
 * rows, the greatest id; and a broken query reported as an error.
 */
#include "testutil.h"
#include "store/index_db.h"
#include "store/strings.h"

#include <stdlib.h>
#include <string.h>

static sqlite3 *db;
static const char *const ROWS =
    "INSERT INTO strings(profile_id, id, value) VALUES (1, 1, 'hlo_op'), (1, 2, 'ncclAllReduce'),"
    " (1, 3, NULL), (1, 4, 'MyDataLoader'), (1, 5, 'next'), (1, 7, 'say \"hi\"'),"
    " (2, 1, 'other');";

static void setup(void)
{
    if (!db) db = xpv_test_index_with(1, ROWS);
}

static void test_lookup(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_strings_lookup l;
    char *v;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_lookup_open(&l, db, 1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_lookup_get(&l, 2, &v, &n, &err), 1);
    CU_ASSERT_TRUE(n == 13 && strcmp(v, "ncclAllReduce") == 0);
    free(v);
    CU_ASSERT_EQUAL(xpv_store_strings_lookup_get(&l, 3, &v, &n, &err), 0); /* NULL value */
    CU_ASSERT_TRUE(v == NULL && n == 0);
    CU_ASSERT_EQUAL(xpv_store_strings_lookup_get(&l, 6, &v, &n, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_lookup_get(&l, 1, &v, &n, &err), 1); /* reused */
    CU_ASSERT_STRING_EQUAL(v, "hlo_op");
    free(v);
    xpv_store_strings_lookup_close(&l);
    xpv_store_strings_lookup_close(&l);
}

static void test_lists(void)
{
    setup();
    xpv_err err = {{0}};
    static const char *const want[] = {"next", "absent", "say \"hi\"", "hlo_op"};
    uint32_t ids[4];
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_ids(db, 1, want, 4, ids, &err), 0);
    CU_ASSERT_TRUE(ids[0] == 5 && ids[1] == 0 && ids[2] == 7 && ids[3] == 1);
    static const int64_t both[] = {2, 1}, two[] = {2};
    CU_ASSERT_EQUAL(xpv_store_strings_any(db, both, 2, want, 4, &err), 1);
    CU_ASSERT_EQUAL(xpv_store_strings_any(db, two, 1, want, 4, &err), 0);

    xpv_store_cursor c;
    int64_t id, seen = 0, max = -1;
    xpv_store_text v;
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_open_work_names(&c, db, 1, &err), 0);
    while (xpv_store_strings_next(&c, &id, &v, &err) == 1)
        seen |= 1 << id;
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(seen, (1 << 2) | (1 << 4) | (1 << 5));
    seen = 0;
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_open_input_names(&c, db, 1, &err), 0);
    while (xpv_store_strings_next(&c, &id, &v, &err) == 1)
        seen |= 1 << id;
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(seen, (1 << 4) | (1 << 5));
    seen = 0;
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_open_containing(&c, db, 1, "ALLRED", &err), 0);
    while (xpv_store_strings_next(&c, &id, &v, &err) == 1) {
        seen |= 1 << id;
        CU_ASSERT_STRING_EQUAL(v.s, "ncclAllReduce");
    }
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(seen, 1 << 2);
    seen = 0;
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_open_all(&c, db, 2, &err), 0);
    while (xpv_store_strings_next(&c, &id, &v, &err) == 1) {
        seen |= 1 << id;
        CU_ASSERT_STRING_EQUAL(v.s, "other");
    }
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(seen, 1 << 1);
    CU_ASSERT_TRUE(xpv_store_strings_max_id(db, 1, &max, &err) == 1 && max == 7);
    CU_ASSERT_TRUE(xpv_store_strings_max_id(db, 9, &max, &err) == 0 && max == 0);
}

static void test_errors(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_strings_lookup l;
    xpv_store_cursor c;
    static const char *const want[] = {"next"};
    static const int64_t one[] = {1};
    uint32_t ids[1];
    int64_t max;
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE strings RENAME TO strings_gone", &err), 0);
    CU_ASSERT_EQUAL(xpv_store_strings_lookup_open(&l, db, 1, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no such table"));
    CU_ASSERT_PTR_NULL(l.st);
    CU_ASSERT_EQUAL(xpv_store_strings_ids(db, 1, want, 1, ids, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_strings_any(db, one, 1, want, 1, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_strings_open_all(&c, db, 1, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_strings_open_work_names(&c, db, 1, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_strings_open_input_names(&c, db, 1, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_strings_open_containing(&c, db, 1, "x", &err), -1);
    CU_ASSERT_EQUAL(xpv_store_strings_max_id(db, 1, &max, &err), -1);
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE strings_gone RENAME TO strings", &err), 0);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"lookups by id", test_lookup},
        {"ids of values, candidates, the greatest id", test_lists},
        {"a broken query is an error", test_errors},
        {NULL, NULL},
    };
    return xpv_test_run("store_strings", tests, 0); /* the index goes with the process */
}
