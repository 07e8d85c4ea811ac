/*
 * test_nsys.c — the NVTX step-name matcher (step markers found, look-alikes
 * rejected) and the nsys export sniff (nsys tables claimed, any other
 * SQLite file or non-SQLite file not claimed, the file left unchanged).
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "indexer/readers/nsys_step_name.h"
#include "indexer/readers/readers.h"
#include "indexer/readers/nsys_reader.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int step_of(const char *name, int64_t *step)
{
    *step = -12345;
    return xpv_nsys_step_number(name, strlen(name), step);
}

static void test_step_names_found(void)
{
    static const struct {
        const char *name;
        int64_t step;
    } cases[] = {
        {"step 12", 12},
        {"train_step_12", 12},
        {"Step#3", 3},
        {"iteration 7", 7},
        {"ProfilerStep#5", 5},
        {"epoch_1_step_200", 200},
        {"STEP_0", 0},
        {"trainStep42", 42},
        {"iter 9", 9},
        {"step: 4", 4},
        {"step=8", 8},
        {"[step 6]", 6},
        {"Step 3/100", 3},
        {"step_12_fwd", 12},
        {"train step 77 (bf16)", 77},
        {"Iteration-15", 15},
        {"step 5.", 5},
        {"step12", 12},
        {"epoch 2 iteration 31", 31},
        {"train#step_num=5,_r=1#", 5},
        {"train_step#step_num=3#", 3},
        {"stepNum 11", 11},
        {"step number 7", 7},
        {"iteration_number: 4", 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t step;
        int ok = step_of(cases[i].name, &step);
        CU_ASSERT_EQUAL(ok, 1);
        CU_ASSERT_EQUAL(step, cases[i].step);
        if (!ok || step != cases[i].step)
            fprintf(stderr, "\n  %s -> ok=%d step=%lld\n", cases[i].name, ok, (long long)step);
    }
}

static void test_step_lookalikes_rejected(void)
{
    static const char *const names[] = {
        "conv2d_1x1",
        "steps 4",
        "stepping 3",
        "backstep 3",
        "laststep 9",
        "step 1.5",
        "step 1x1",
        "iterator 2",
        "iterations 10",
        "forward",
        "step",
        "step size",
        "gradient_step",
        "sweep 3",
        "Conv2d::__init__(2)",
        "",
        "stepA1",
        "istep 3",
        "step 1234567890123456789",
        "XlaModule:#hlo_module=jit_train_step,program_id=23#",
        "step_numbers 3",
        "step_num",
        "Optimizer.step#SGD.step",
        /* long annotation strings (DLProf-style) are never step markers */
        "{'traceMarker': ['train.py:34'], 'funcStack': '/<module>/train_step 12/Conv2d::forward', "
        "'op': 'conv2d'}",
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        int64_t step;
        int ok = step_of(names[i], &step);
        CU_ASSERT_EQUAL(ok, 0);
        CU_ASSERT_EQUAL(step, -12345); /* untouched on no match */
        if (ok) fprintf(stderr, "\n  false positive: %s -> %lld\n", names[i], (long long)step);
    }
}

static void test_step_name_not_nul_terminated(void)
{
    const char buf[] = "step 12345";
    int64_t step;
    CU_ASSERT_EQUAL(xpv_nsys_step_number(buf, 7, &step), 1); /* "step 12" */
    CU_ASSERT_EQUAL(step, 12);
    CU_ASSERT_EQUAL(xpv_nsys_step_number(buf, 4, &step), 0); /* "step" */
    CU_ASSERT_EQUAL(xpv_nsys_step_number(NULL, 0, &step), 0);
}

/* Creates dir/name as a SQLite database from sql; returns its path. */
static const char *make_db(const char *name, const char *sql)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", xpv_test_tmpdir(), name);
    sqlite3 *db = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) fprintf(stderr, "\n  %s: %s\n", name, msg ? msg : "?");
    sqlite3_free(msg);
    CU_ASSERT_EQUAL(rc, SQLITE_OK);
    sqlite3_close(db);
    return path;
}

static void test_sniff_claims_nsys_exports(void)
{
    static const char *const cases[][2] = {
        {"kernels.sqlite", "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                           "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT);"},
        {"nvtx.sqlite", "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                        "CREATE TABLE NVTX_EVENTS(start INT, end INT, text TEXT);"},
        {"gpu.sqlite", "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                       "CREATE TABLE TARGET_INFO_GPU(id INT, name TEXT);"},
        {"meta_old.sqlite", "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                            "CREATE TABLE EXPORT_META_DATA(name TEXT, value TEXT);"},
        {"meta_new.sqlite", "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                            "CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = make_db(cases[i][0], cases[i][1]);
        CU_ASSERT_EQUAL(xpv_nsys_sniff(path), 1);
    }
}

static void test_sniff_rejects_other_files(void)
{
    static const char *const cases[][2] = {
        {"strings_only.sqlite", "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"},
        {"no_strings.sqlite", "CREATE TABLE NVTX_EVENTS(start INT, end INT);"
                              "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT);"},
        {"app.sqlite", "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT);"},
        {"lookalike.sqlite", "CREATE TABLE StringIds(id INT, value TEXT);"
                             "CREATE TABLE TARGETXINFO_GPU(id INT);"
                             "CREATE TABLE CUPTIXACTIVITY(id INT);"},
        {"empty.sqlite", "PRAGMA user_version=1;"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = make_db(cases[i][0], cases[i][1]);
        CU_ASSERT_EQUAL(xpv_nsys_sniff(path), 0);
    }
    const char *dir = xpv_test_tmpdir(); /* a new folder on each call */
    char path[4200];
    snprintf(path, sizeof path, "%s/not_sqlite.sqlite", dir);
    const char junk[] = "SQLite format 3\0 but then nothing a database would hold";
    CU_ASSERT_EQUAL(xpv_test_write(dir, "not_sqlite.sqlite", junk, sizeof junk), 0);
    CU_ASSERT_EQUAL(access(path, R_OK), 0);
    CU_ASSERT_EQUAL(xpv_nsys_sniff(path), 0);
    snprintf(path, sizeof path, "%s/missing.sqlite", dir);
    CU_ASSERT_EQUAL(xpv_nsys_sniff(path), 0);
}

/* A damaged export (SQLite cannot read its catalog) is still claimed when
 * its schema text names nsys tables, so it is listed with the reason. */
static void test_sniff_claims_damaged_exports(void)
{
    char damaged[512];
    memset(damaged, 0xEE, sizeof damaged);
    memcpy(damaged, "SQLite format 3", 16);
    const char *schema = "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT)"
                         "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT)";
    memcpy(damaged + 120, schema, strlen(schema));
    const char *dir = xpv_test_tmpdir();
    CU_ASSERT_EQUAL(xpv_test_write(dir, "damaged.sqlite", damaged, sizeof damaged), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/damaged.sqlite", dir);
    CU_ASSERT_EQUAL(xpv_nsys_sniff(path), 1);
    memcpy(damaged + 120, "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT)", 59);
    memset(damaged + 179, 0xEE, sizeof damaged - 179);
    CU_ASSERT_EQUAL(xpv_test_write(dir, "damaged2.sqlite", damaged, sizeof damaged), 0);
    snprintf(path, sizeof path, "%s/damaged2.sqlite", dir);
    CU_ASSERT_EQUAL(access(path, R_OK), 0);
    CU_ASSERT_EQUAL(xpv_nsys_sniff(path), 0);
}

/* Sniffing opens read-only: the file, its size and mtime stay as they were,
 * and no journal or WAL file appears next to it. */
static void test_sniff_leaves_file_unchanged(void)
{
    const char *p =
        make_db("odd ?#%name.sqlite", "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                                      "CREATE TABLE NVTX_EVENTS(start INT, end INT, text TEXT);");
    char path[4200];
    snprintf(path, sizeof path, "%s", p);
    CU_ASSERT_EQUAL(chmod(path, 0444), 0);
    struct stat before, after;
    CU_ASSERT_EQUAL_FATAL(stat(path, &before), 0);
    CU_ASSERT_EQUAL(xpv_nsys_sniff(path), 1);
    CU_ASSERT_EQUAL_FATAL(stat(path, &after), 0);
    CU_ASSERT_EQUAL(before.st_size, after.st_size);
    CU_ASSERT_EQUAL(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
    CU_ASSERT_EQUAL(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
    char side[4300];
    snprintf(side, sizeof side, "%s-journal", path);
    CU_ASSERT_NOT_EQUAL(access(side, F_OK), 0);
    snprintf(side, sizeof side, "%s-wal", path);
    CU_ASSERT_NOT_EQUAL(access(side, F_OK), 0);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"step names found", test_step_names_found},
        {"step look-alikes rejected", test_step_lookalikes_rejected},
        {"step names bounded by length", test_step_name_not_nul_terminated},
        {"sniff claims nsys exports", test_sniff_claims_nsys_exports},
        {"sniff rejects other files", test_sniff_rejects_other_files},
        {"sniff claims damaged exports", test_sniff_claims_damaged_exports},
        {"sniff leaves the file unchanged", test_sniff_leaves_file_unchanged},
        {NULL, NULL},
    };
    return xpv_test_run("nsys", tests, 0);
}
