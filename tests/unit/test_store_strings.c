/*
 * test_store_strings.c — store/strings.c on hand-made rows: lookups by id
 * (a missing id reads as not found, an empty value as found), within one
 * chunk of ids and across many, the ids of a list of values, whether
 * profiles hold a value, the candidate and containing rows, the greatest
 * id; a broken query and a damaged chunk reported as errors.
 */
#include "testutil.h"
#include "store/event_store.h"
#include "store/index_db.h"
#include "store/strings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *db;
/* Profile 3: ids 0 .. MANY - 1, over several chunks, value "s<id>". */
enum { MANY = 3 * XPV_STORE_STRINGS_PER_CHUNK + 5 };

static void setup(void)
{
    static const char *const one[] = {NULL,   "hlo_op", "ncclAllReduce", NULL, "MyDataLoader",
                                      "next", NULL,     "say \"hi\""};
    static const char *const two[] = {NULL, "other"};
    if (db) return;
    db = xpv_test_fresh_index(xpv_test_tmpdir(), 1);
    xpv_test_put_strings(db, 1, one, 8);
    xpv_test_put_strings(db, 2, two, 2);
    static char text[MANY][16];
    const char *many[MANY];
    for (int i = 0; i < MANY; i++)
        snprintf(text[i], sizeof text[i], "s%d", i), many[i] = text[i];
    xpv_test_put_strings(db, 3, many, MANY);
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
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_lookup_get(&l, 3, &v, &n, &err), 1); /* empty */
    CU_ASSERT_TRUE(n == 0 && strcmp(v, "") == 0);
    free(v);
    CU_ASSERT_EQUAL(xpv_store_strings_lookup_get(&l, 8, &v, &n, &err), 0); /* past the last */
    CU_ASSERT_TRUE(v == NULL && n == 0);
    CU_ASSERT_EQUAL(xpv_store_strings_lookup_get(&l, 200, &v, &n, &err), 0);     /* no chunk */
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_lookup_get(&l, 1, &v, &n, &err), 1); /* reused */
    CU_ASSERT_STRING_EQUAL(v, "hlo_op");
    free(v);
    xpv_store_strings_lookup_close(&l);
    xpv_store_strings_lookup_close(&l);
    /* across chunks, in and out of order */
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_lookup_open(&l, db, 3, &err), 0);
    static const uint32_t order[] = {
        MANY - 1, 0, XPV_STORE_STRINGS_PER_CHUNK, XPV_STORE_STRINGS_PER_CHUNK - 1, 130, 131, 64};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        char want[16];
        snprintf(want, sizeof want, "s%u", order[i]);
        CU_ASSERT_EQUAL_FATAL(xpv_store_strings_lookup_get(&l, order[i], &v, &n, &err), 1);
        CU_ASSERT_TRUE(n == strlen(want) && strcmp(v, want) == 0);
        free(v);
    }
    CU_ASSERT_EQUAL(xpv_store_strings_lookup_get(&l, MANY, &v, &n, &err), 0);
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
        CU_ASSERT_STRING_EQUAL(v.s, id == 1 ? "other" : "");
    }
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(seen, (1 << 0) | (1 << 1));
    int64_t rows = 0;
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_open_all(&c, db, 3, &err), 0);
    while (xpv_store_strings_next(&c, &id, &v, &err) == 1) {
        char want[16];
        snprintf(want, sizeof want, "s%lld", (long long)id);
        CU_ASSERT_TRUE(v.n == strlen(want) && memcmp(v.s, want, v.n) == 0);
        rows++;
    }
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(rows, MANY);
    static const char *const far[] = {"s190", "s63", "s64"};
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_ids(db, 3, far, 3, ids, &err), 0);
    CU_ASSERT_TRUE(ids[0] == 190 && ids[1] == 63 && ids[2] == 64);
    CU_ASSERT_TRUE(xpv_store_strings_max_id(db, 1, &max, &err) == 1 && max == 7);
    CU_ASSERT_TRUE(xpv_store_strings_max_id(db, 3, &max, &err) == 1 && max == MANY - 1);
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

/* Profile 4's first chunk (of two: ids 0 .. 69) replaced by data (SQL),
 * then read every way; the second chunk still reads. */
static void expect_damage(const char *data_sql)
{
    const char *four[70] = {NULL, "a", "bb"};
    four[65] = "s65";
    xpv_err err = {{0}};
    char sql[256];
    CU_ASSERT_EQUAL(xpv_db_exec(db, "DELETE FROM strings WHERE profile_id=4", &err), 0);
    xpv_test_put_strings(db, 4, four, 70);
    snprintf(sql, sizeof sql, "UPDATE strings SET data=%s WHERE profile_id=4 AND first_id=0",
             data_sql);
    CU_ASSERT_EQUAL_FATAL(xpv_db_exec(db, sql, &err), 0);
    xpv_store_strings_lookup l;
    char *v = NULL;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_lookup_open(&l, db, 4, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_strings_lookup_get(&l, 1, &v, &n, &err), -1);
    CU_ASSERT_TRUE(v == NULL && xpv_store_damage_in(err.msg));
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_lookup_get(&l, 65, &v, &n, &err), 1);
    CU_ASSERT_STRING_EQUAL(v, "s65");
    free(v);
    CU_ASSERT_EQUAL(xpv_store_strings_lookup_get(&l, 2, &v, &n, &err), -1); /* not cached */
    xpv_store_strings_lookup_close(&l);
    xpv_store_cursor c;
    int64_t id;
    xpv_store_text t;
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL_FATAL(xpv_store_strings_open_all(&c, db, 4, &err), 0);
    int rc;
    while ((rc = xpv_store_strings_next(&c, &id, &t, &err)) == 1) {
    }
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_TRUE(xpv_store_damage_in(err.msg));
    CU_ASSERT_EQUAL(xpv_store_string_chunks_verify(db, 4, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, XPV_STORE_STRINGS_DAMAGED));
}

static void test_damage(void)
{
    setup();
    expect_damage("substr(data, 1, length(data) - 1)"); /* cut short */
    expect_damage("data || x'00'");                     /* a byte more */
    expect_damage("x'02' || substr(data, 2)");          /* another version */
    expect_damage("x'0141'");                           /* 65 values */
    expect_damage("x'010301610162'");                   /* count 3, two values */
    expect_damage("x''");                               /* empty */
    expect_damage("x'01020161ff'");                     /* a length past the end */
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_db_exec(db,
                                "UPDATE strings SET data=x'01010161' WHERE profile_id=4"
                                " AND first_id=0",
                                &err),
                    0);
    CU_ASSERT_EQUAL(xpv_store_string_chunks_verify(db, 4, &err), 0); /* sound again */
    CU_ASSERT_EQUAL(
        xpv_db_exec(db, "UPDATE strings SET first_id=1 WHERE profile_id=4 AND first_id=0", &err),
        0);
    CU_ASSERT_EQUAL(xpv_store_string_chunks_verify(db, 4, &err), 1); /* a first id off 64 */
    CU_ASSERT_EQUAL(xpv_store_string_chunks_verify(db, 1, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_string_chunks_verify(db, 3, &err), 0);
    CU_ASSERT_EQUAL(xpv_store_string_chunks_verify(db, 9, &err), 0); /* no rows */
    CU_ASSERT_EQUAL(xpv_db_exec(db, "DELETE FROM strings WHERE profile_id=4", &err), 0);
}

/* string_rows(first_id, data) WHERE id = ?: one row for an integer id of
 * the chunk, none for any other value. */
static void test_one_id(void)
{
    setup();
    static const struct {
        const char *id;
        int64_t rows;
    } cases[] = {{"70", 1}, {"64", 1},   {"127", 1},  {"128", 0},   {"63", 0},
                 {"-1", 0}, {"NULL", 0}, {"70.5", 0}, {"'70x'", 0}, {"'70'", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM strings c, string_rows(c.first_id, c.data) r"
                 " WHERE c.profile_id=3 AND c.first_id=64 AND r.id=%s",
                 cases[i].id);
        CU_ASSERT_EQUAL(xpv_test_int(db, sql), cases[i].rows);
    }
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM string_rows(NULL, x'01010161')"), 0);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM string_rows(0, x'01010161')"), 1);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"lookups by id", test_lookup},
        {"ids of values, candidates, the greatest id", test_lists},
        {"a broken query is an error", test_errors},
        {"a damaged chunk is damage", test_damage},
        {"one id of a chunk", test_one_id},
        {NULL, NULL},
    };
    return xpv_test_run("store_strings", tests, 0); /* the index goes with the process */
}
