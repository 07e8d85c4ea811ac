/*
 * test_compare.c — xpv_api_compare on hand-made steps and kernel_stats
 * rows: the statistics' definitions (median of an even count, nearest-rank
 * p10/p90), unknown values giving null deltas (never 0), new and vanished
 * names, the gate's figure, a self-comparison of zeros, totals compared
 * per step (and as they are, with a note, when a side has no steps), and
 * the sides refused: missing, unread, pending, empty, without device work.
 */
#include "testutil.h"
#include "api/api.h"
#include "store/index_db.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static sqlite3 *db;
static const char *const ROWS =
    "UPDATE profiles SET status='ok';"
    "INSERT INTO profiles(id, path, status) VALUES(2, 'q', 'ok');"
    /* profile 1: steps of 10, 20, 30, 40 ns; profile 2: 60, 10, 20 ns with one idle unknown */
    "INSERT INTO steps(profile_id, step, device, duration_ps, compute_ps, idle_ps) VALUES"
    " (1, 0, -1, 10000, 8000, 2000), (1, 1, -1, 20000, 8000, 2000),"
    " (1, 2, -1, 30000, 8000, 2000), (1, 3, -1, 40000, 8000, 2000),"
    " (2, 0, -1, 60000, 9000, 1000), (2, 1, -1, 10000, 9000, NULL),"
    " (2, 2, -1, 20000, 9000, 1000);"
    "INSERT INTO kernel_stats(profile_id, kind, device, name, count, total_ps) VALUES"
    " (1, 'kernel', -1, 'same', 2, 100), (1, 'kernel', -1, 'gone', 1, 50),"
    " (2, 'kernel', -1, 'same', 2, 300), (2, 'kernel', -1, 'added', 3, NULL),"
    " (7, 'kernel', -1, 'same', 1, 40), (5, 'cpu_op', -1, 'host', 1, 40);"
    /* sides to refuse (3-6), and 7: device work but no steps */
    "INSERT INTO profiles(id, path, status, error, events) VALUES"
    " (3, 'broken.json', 'error', 'truncated gzip data', NULL),"
    " (4, 'empty.json', 'ok', NULL, 0), (5, 'cpu.json', 'ok', NULL, 10),"
    " (6, 'later.json', 'pending', NULL, NULL), (7, 'nosteps.json', 'ok', NULL, 5);";

/* The index, made by the first test that asks (asserts need a running suite). */
static void setup(void)
{
    if (db) return;
    db = xpv_test_fresh_index(xpv_test_tmpdir(), 1);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_db_exec(db, ROWS, &err), 0);
}

static cJSON *compare(int64_t a, int64_t b, int want_status)
{
    xpv_buf out = {0};
    setup();
    CU_ASSERT_EQUAL(xpv_api_compare(db, a, db, b, &out), want_status);
    cJSON *c = cJSON_Parse(out.data);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    xpv_buf_free(&out);
    return c;
}

static cJSON *at(const cJSON *o, const char *path)
{
    char key[64];
    const cJSON *cur = o;
    while (cur && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        cur = cJSON_GetObjectItem(cur, key);
        path += n + (path[n] == '.');
    }
    return (cJSON *)cur;
}

static double num(const cJSON *o, const char *path)
{
    const cJSON *v = at(o, path);
    CU_ASSERT_TRUE(cJSON_IsNumber(v));
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int is_null(const cJSON *o, const char *path)
{
    return cJSON_IsNull(at(o, path));
}

static const char *str(const cJSON *o, const char *path)
{
    const char *s = cJSON_GetStringValue(at(o, path));
    return s ? s : "(none)";
}

static const cJSON *row(const cJSON *c, const char *name)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, at(c, "kernels.rows"))
    {
        if (strcmp(str(r, "name"), name) == 0) return r;
    }
    CU_FAIL("row missing");
    return NULL;
}

static void test_statistics(void)
{
    cJSON *c = compare(1, 2, 200);
    CU_ASSERT_DOUBLE_EQUAL(num(c, "step_time.median_us.a"), 0.025, 1e-12); /* (20 + 30) / 2 */
    CU_ASSERT_DOUBLE_EQUAL(num(c, "step_time.median_us.b"), 0.020, 1e-12);
    CU_ASSERT_STRING_EQUAL(str(c, "step_time.median_us.direction"), "faster");
    CU_ASSERT_DOUBLE_EQUAL(num(c, "step_time.median_us.relative"), -0.2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(c, "step_time.p10_us.a"), 0.010, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(c, "step_time.p90_us.a"), 0.040, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(c, "step_time.p90_us.b"), 0.060, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(c, "step_time.mean_us.b"), 0.030, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(c, "step_time.max_us.delta"), 0.020, 1e-12);
    CU_ASSERT_EQUAL(num(c, "step_time.count.delta"), -1);
    CU_ASSERT_STRING_EQUAL(str(c, "step_time.count.direction"), "fewer");
    CU_ASSERT_DOUBLE_EQUAL(num(c, "breakdown.compute_us.delta"), 0.001, 1e-12);
    CU_ASSERT_STRING_EQUAL(str(c, "gate.metric"), "median_step_time");
    CU_ASSERT_DOUBLE_EQUAL(num(c, "gate.value.delta"), -0.005, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(c, "device_busy_fraction.a"), 0.92, 1e-12);
    cJSON_Delete(c);
}

/* Profile 2 does not know one step's idle time nor one kernel's total. */
static void test_unknown_is_null(void)
{
    cJSON *c = compare(1, 2, 200);
    CU_ASSERT_TRUE(is_null(c, "breakdown.idle_us.b"));
    CU_ASSERT_TRUE(is_null(c, "breakdown.idle_us.delta"));
    CU_ASSERT_TRUE(is_null(c, "breakdown.idle_us.direction"));
    CU_ASSERT_TRUE(is_null(c, "device_busy_fraction.b"));
    CU_ASSERT_TRUE(is_null(c, "device_busy_fraction.sign"));
    CU_ASSERT_TRUE(is_null(c, "breakdown.host_wait_us.a")); /* no step has it */
    CU_ASSERT_TRUE(is_null(c, "device_time_us.b"));
    CU_ASSERT_TRUE(is_null(c, "kernels.total_us.delta"));
    const cJSON *added = row(c, "added");
    CU_ASSERT_STRING_EQUAL(str(added, "status"), "new");
    CU_ASSERT_EQUAL(num(added, "count.b"), 3);
    CU_ASSERT_EQUAL(num(added, "total_us.a"), 0);
    CU_ASSERT_TRUE(is_null(added, "total_us.b"));
    CU_ASSERT_TRUE(is_null(added, "total_us.delta"));
    CU_ASSERT_TRUE(is_null(added, "avg_us.a"));
    cJSON_Delete(c);
}

static void test_joined_rows(void)
{
    cJSON *c = compare(1, 2, 200);
    CU_ASSERT_EQUAL(num(c, "kernels.new"), 1);
    CU_ASSERT_EQUAL(num(c, "kernels.vanished"), 1);
    const cJSON *same = row(c, "same"), *gone = row(c, "gone");
    CU_ASSERT_STRING_EQUAL(str(same, "status"), "both");
    CU_ASSERT_DOUBLE_EQUAL(num(same, "total_us.delta"), 0.0002, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(same, "total_us.relative"), 2, 1e-12);
    CU_ASSERT_STRING_EQUAL(str(same, "total_us.direction"), "slower");
    CU_ASSERT_STRING_EQUAL(str(gone, "status"), "vanished");
    CU_ASSERT_DOUBLE_EQUAL(num(gone, "total_us.relative"), -1, 1e-12);
    CU_ASSERT_TRUE(is_null(gone, "avg_us.b"));
    /* Largest known |delta| first; unknown last. */
    const cJSON *first = cJSON_GetArrayItem(at(c, "kernels.rows"), 0);
    const cJSON *last = cJSON_GetArrayItem(at(c, "kernels.rows"), 2);
    CU_ASSERT_STRING_EQUAL(str(first, "name"), "same");
    CU_ASSERT_STRING_EQUAL(str(last, "name"), "added");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(at(c, "ops.rows")), 0);
    cJSON_Delete(c);
}

/* Every delta object with a known delta of a self-comparison is zero. */
static void check_zero(const cJSON *node)
{
    const cJSON *d = cJSON_GetObjectItem(node, "delta");
    if (d && cJSON_GetObjectItem(node, "direction")) {
        if (!cJSON_IsNull(d)) {
            CU_ASSERT_EQUAL(d->valuedouble, 0);
            CU_ASSERT_STRING_EQUAL(str(node, "direction"), "same");
        }
    }
    const cJSON *kid;
    cJSON_ArrayForEach(kid, node)
    {
        if (cJSON_IsObject(kid) || cJSON_IsArray(kid)) check_zero(kid);
    }
}

static void test_self_and_missing(void)
{
    cJSON *c = compare(2, 2, 200);
    check_zero(c);
    CU_ASSERT_EQUAL(num(c, "kernels.new") + num(c, "kernels.vanished"), 0);
    cJSON_Delete(c);
    c = compare(1, 77, 404);
    CU_ASSERT_PTR_NOT_NULL(strstr(str(c, "error"), "B ("));
    cJSON_Delete(c);
}

/* Profile 1 has 4 steps, profile 2 has 3: tables compare per step. */
static void test_per_step(void)
{
    cJSON *c = compare(1, 2, 200);
    CU_ASSERT_TRUE(cJSON_IsTrue(at(c, "per_step.normalised")));
    CU_ASSERT_TRUE(is_null(c, "per_step.note"));
    const cJSON *same = row(c, "same");
    CU_ASSERT_DOUBLE_EQUAL(num(same, "per_step_us.a"), 25e-6, 1e-15); /* 100 ps / 4 */
    CU_ASSERT_DOUBLE_EQUAL(num(same, "per_step_us.b"), 100e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(num(same, "per_step_us.relative"), 3, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(same, "count_per_step.a"), 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(c, "kernels.per_step_us.a"), 37.5e-6, 1e-15);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(at(c, "devices")), 0); /* only device -1 rows */
    cJSON_Delete(c);
    c = compare(7, 1, 200);
    CU_ASSERT_FALSE(cJSON_IsTrue(at(c, "per_step.normalised")));
    CU_ASSERT_PTR_NOT_NULL(strstr(str(c, "per_step.note"), "A has no steps"));
    CU_ASSERT_TRUE(is_null(c, "device_time_per_step_us.delta"));
    CU_ASSERT_DOUBLE_EQUAL(num(c, "device_time_us.delta"), 110e-6, 1e-15);
    CU_ASSERT_STRING_EQUAL(str(c, "gate.metric"), "device_time");
    cJSON_Delete(c);
}

static void refused(int64_t a, int64_t b, int status, const char *want)
{
    cJSON *c = compare(a, b, status);
    const char *got = str(c, "error");
    CU_ASSERT_PTR_NOT_NULL(strstr(got, want));
    if (!strstr(got, want)) fprintf(stderr, "\n  want \"%s\" in \"%s\"\n", want, got);
    cJSON_Delete(c);
}

static void test_refused_sides(void)
{
    refused(1, 3, 422, "B (broken.json) could not be read: truncated gzip data");
    refused(3, 1, 422, "A (broken.json) could not be read");
    refused(4, 1, 422, "A (empty.json) is empty");
    refused(1, 5, 422, "B (cpu.json) has no device work");
    refused(6, 1, 409, "A (later.json) is not indexed yet");
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"median, nearest-rank percentiles, gate", test_statistics},
        {"unknown values give null deltas", test_unknown_is_null},
        {"tables joined by name, new and vanished", test_joined_rows},
        {"self-comparison zero; missing profile 404", test_self_and_missing},
        {"totals per step, or as they are with a note", test_per_step},
        {"broken, empty, pending and host-only sides refused", test_refused_sides},
        {NULL, NULL},
    };
    int rc = xpv_test_run("compare", tests, 0);
    sqlite3_close(db);
    return rc;
}
