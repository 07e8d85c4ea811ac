/*
 * testutil.c — the helpers declared in testutil.h.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "store/index_db.h"
#include "store/strings.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

const char *xpv_test_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char cmd[600];
    if (tmpdir[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmpdir);
    }
    snprintf(tmpdir, sizeof tmpdir, "%s/xpv-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        abort();
    }
    return tmpdir;
}

static void cleanup(void)
{
    if (!tmpdir[0]) return;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmpdir);
}

int xpv_test_write(const char *dir, const char *rel, const void *data, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *p = path + strlen(dir) + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

sqlite3 *xpv_test_fresh_index(const char *dir, int64_t profile_id)
{
    char db_path[1024], profiles[1024], sql[128];
    snprintf(db_path, sizeof db_path, "%s/index.sqlite", dir);
    snprintf(profiles, sizeof profiles, "%s/profiles", dir);
    xpv_test_write(dir, "profiles/.keep", "", 0);
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_index_open(db_path, profiles, &db, NULL, &err), 0);
    snprintf(sql, sizeof sql, "INSERT INTO profiles(id, path) VALUES(%lld, 'p')",
             (long long)profile_id);
    CU_ASSERT_EQUAL(xpv_db_exec(db, sql, &err), 0);
    return db;
}

sqlite3 *xpv_test_index_with(int64_t profile_id, const char *sql)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), profile_id);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_db_exec(db, sql, &err), 0);
    return db;
}

void xpv_test_put_strings(sqlite3 *db, int64_t profile_id, const char *const *values, size_t n)
{
    xpv_store_string_rows rows = {0};
    for (size_t i = 0; i < n; i++)
        xpv_store_string_rows_add(&rows, values[i] ? values[i] : "",
                                  values[i] ? strlen(values[i]) : 0);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_store_strings_write(db, profile_id, &rows, &err), 0);
    xpv_store_string_rows_free(&rows);
}

const char *xpv_test_fixtures(void)
{
    static char path[4096];
    const char *env = getenv("XPV_FIXTURES");
    struct stat st;
    if (!env || stat(env, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
    snprintf(path, sizeof path, "%s", env);
    return path;
}

int xpv_test_run(const char *suite_name, const xpv_test_case *tests, int needs_fixtures)
{
    if (needs_fixtures && !xpv_test_fixtures()) {
        printf("SKIP %s: ../shared/fixtures not found (set XPV_FIXTURES); fixture tests skipped\n",
               suite_name);
        return 77;
    }
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite suite = CU_add_suite(suite_name, NULL, NULL);
    for (const xpv_test_case *t = tests; t->name; t++)
        CU_add_test(suite, t->name, t->fn);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    cleanup();
    return failed ? 1 : 0;
}

int64_t xpv_test_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}
