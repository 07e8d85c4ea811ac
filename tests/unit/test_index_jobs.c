/*
 * test_index_jobs.c — indexing with several jobs writes the same index as
 * one job (every table, block ids included), commits in the same order,
 * leaves no part behind, stops cleanly, and clears the parts of dead
 * processes only; a worker runs a file's stages itself only while the
 * workers fill the CPUs and the files after it can keep the others busy.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "indexer/discover.h"
#include "store/index_db.h"
#include "indexer/index_jobs.h"
#include "indexer/indexer.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NFILES 7

static char profiles[1024];

/* Traces of very different sizes, so parallel workers finish out of order. */
static void write_traces(const char *dir)
{
    snprintf(profiles, sizeof profiles, "%s/profiles", dir);
    for (int f = 0; f < NFILES; f++) {
        size_t cap = 1 << 22, len = 0;
        char *buf = malloc(cap);
        len += (size_t)snprintf(buf + len, cap - len, "{\"traceEvents\":[");
        int events = f % 2 ? 20 : 20000 / (f + 1);
        for (int i = 0; i < events; i++)
            len += (size_t)snprintf(buf + len, cap - len,
                                    "%s{\"ph\":\"X\",\"name\":\"k%d\",\"pid\":%d,\"tid\":%d,"
                                    "\"ts\":%d,\"dur\":%d,\"args\":{\"i\":%d}}",
                                    i ? "," : "", i % 13, f, i % 3, i * 10, 1 + i % 7, i);
        len += (size_t)snprintf(buf + len, cap - len, "]}");
        char rel[64];
        snprintf(rel, sizeof rel, "profiles/run/host%d.trace.json", f);
        CU_ASSERT_EQUAL(xpv_test_write(dir, rel, buf, len), 0);
        free(buf);
    }
}

typedef struct {
    char order[NFILES][64];
    int finished;
} commit_log;

static void log_commit(void *ctx, const xpv_index_progress *p)
{
    commit_log *log = ctx;
    if (p->finished && log->finished < NFILES)
        snprintf(log->order[log->finished++], sizeof log->order[0], "%s", p->finished->rel_path);
}

static sqlite3 *index_with(const char *db_path, int jobs, commit_log *log, volatile int *stop)
{
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    xpv_found_list l;
    CU_ASSERT_EQUAL_FATAL(xpv_index_open(db_path, profiles, &db, NULL, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_discover(profiles, &l, &err), 0);
    CU_ASSERT_EQUAL(xpv_indexer_register(db, &l, &err), NFILES);
    xpv_index_options o = {jobs, log_commit, log, stop};
    CU_ASSERT_EQUAL(xpv_indexer_run(db, &l, &o, &err), 0);
    xpv_found_list_free(&l);
    return db;
}

static int parts_left(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".part-") != NULL;
    if (d) closedir(d);
    return n;
}

/* Rows of `table` in one index and not the other, both ways. */
static int64_t differing_rows(sqlite3 *db, const char *table, const char *columns)
{
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SELECT (SELECT count(*) FROM (SELECT %s FROM main.%s EXCEPT SELECT %s FROM"
             " other.%s)) + (SELECT count(*) FROM (SELECT %s FROM other.%s EXCEPT SELECT %s"
             " FROM main.%s))",
             columns, table, columns, table, columns, table, columns, table);
    return xpv_test_int(db, sql);
}

static void test_parallel_equals_serial(void)
{
    const char *dir = xpv_test_tmpdir();
    write_traces(dir);
    char serial_path[1200], parallel_path[1200], sql[1400];
    snprintf(serial_path, sizeof serial_path, "%s/one.sqlite", dir);
    snprintf(parallel_path, sizeof parallel_path, "%s/three.sqlite", dir);
    commit_log one = {0}, three = {0};
    sqlite3_close(index_with(parallel_path, 3, &three, NULL));
    sqlite3 *db = index_with(serial_path, 1, &one, NULL);
    CU_ASSERT_EQUAL(one.finished, NFILES);
    CU_ASSERT_EQUAL(three.finished, NFILES);
    for (int i = 0; i < NFILES; i++)
        CU_ASSERT_STRING_EQUAL(one.order[i], three.order[i]);
    CU_ASSERT_EQUAL(parts_left(dir), 0);
    snprintf(sql, sizeof sql, "ATTACH '%s' AS other", parallel_path);
    CU_ASSERT_EQUAL(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    CU_ASSERT(xpv_test_int(db, "SELECT count(*) FROM other.blocks") > NFILES);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM other.profiles WHERE status='ok'"),
                    NFILES);
    CU_ASSERT_EQUAL(differing_rows(db, "blocks", "*"), 0);
    CU_ASSERT_EQUAL(differing_rows(db, "strings", "*"), 0);
    CU_ASSERT_EQUAL(differing_rows(db, "tracks", "*"), 0);
    CU_ASSERT_EQUAL(differing_rows(db, "kernel_stats", "*"), 0); /* seq orders a name's rows */
    CU_ASSERT_EQUAL(differing_rows(db, "steps", "rowid, *"), 0);
    CU_ASSERT_EQUAL(differing_rows(db, "profiles",
                                   "id, path, run, host, format, producer, status, error, warnings,"
                                   " partial, events, start_ns, end_ns, devices, facts,"
                                   " phase_counts, step_source, step_count, kernel_count,"
                                   " kernel_totals"),
                    0);
    sqlite3_close(db);
}

static void test_stop_leaves_rest_pending(void)
{
    const char *dir = xpv_test_tmpdir();
    write_traces(dir);
    char path[1200];
    snprintf(path, sizeof path, "%s/stopped.sqlite", dir);
    volatile int stop = 1;
    commit_log log = {0};
    sqlite3 *db = index_with(path, 4, &log, &stop);
    CU_ASSERT_EQUAL(log.finished, 0);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM profiles WHERE status='pending'"),
                    NFILES);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM blocks"), 0);
    CU_ASSERT_EQUAL(parts_left(dir), 0);
    sqlite3_close(db);
}

static void test_stale_parts_of_dead_processes_removed(void)
{
    const char *dir = xpv_test_tmpdir();
    pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);
    char dead[256], mine[256], db_path[1200];
    snprintf(dead, sizeof dead, "index.sqlite.part-%ld-3", (long)child);
    snprintf(mine, sizeof mine, "index.sqlite.part-%ld-0", (long)getpid());
    CU_ASSERT_EQUAL(xpv_test_write(dir, dead, "x", 1), 0);
    CU_ASSERT_EQUAL(xpv_test_write(dir, mine, "x", 1), 0);
    CU_ASSERT_EQUAL(xpv_test_write(dir, "other.sqlite.part-1-1", "x", 1), 0);
    snprintf(db_path, sizeof db_path, "%s/index.sqlite", dir);
    xpv_index_remove_stale_parts(db_path);
    char path[1600];
    snprintf(path, sizeof path, "%s/%s", dir, dead);
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/%s", dir, mine);
    CU_ASSERT_EQUAL(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/other.sqlite.part-1-1", dir);
    CU_ASSERT_EQUAL(access(path, F_OK), 0);
}

static void test_inline_stages_only_while_the_queue_fills_the_cpus(void)
{
    enum { MB = 1 << 20 };
    /* a pod: 256 equal hosts on 2 workers, 2 CPUs: inline but for the last */
    CU_ASSERT_TRUE(xpv_index_jobs_inline(4 * MB, 255 * 4 * (int64_t)MB, 2, 2));
    CU_ASSERT_TRUE(xpv_index_jobs_inline(4 * MB, 4 * MB, 2, 2));
    CU_ASSERT_FALSE(xpv_index_jobs_inline(4 * MB, 0, 2, 2));
    /* a big file before a small one: its tail would run alone */
    CU_ASSERT_FALSE(xpv_index_jobs_inline(60 * MB, 2 * MB, 2, 2));
    CU_ASSERT_TRUE(xpv_index_jobs_inline(2 * MB, 60 * MB, 2, 2));
    /* workers that leave CPUs free keep their consumer threads */
    CU_ASSERT_FALSE(xpv_index_jobs_inline(4 * MB, 255 * 4 * (int64_t)MB, 2, 16));
    /* four workers need three times the file's bytes after it */
    CU_ASSERT_TRUE(xpv_index_jobs_inline(4 * MB, 12 * MB, 4, 4));
    CU_ASSERT_FALSE(xpv_index_jobs_inline(4 * MB, 12 * MB - 1, 4, 4));
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"parallel indexing writes the serial index", test_parallel_equals_serial},
        {"a stopped run leaves the rest pending", test_stop_leaves_rest_pending},
        {"stale parts of dead processes removed", test_stale_parts_of_dead_processes_removed},
        {"inline stages only while the queue fills the CPUs",
         test_inline_stages_only_while_the_queue_fills_the_cpus},
        {NULL, NULL},
    };
    return xpv_test_run("index_jobs", tests, 0);
}
