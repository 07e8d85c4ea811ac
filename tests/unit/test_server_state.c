/*
 * test_server_state.c — each serving thread's index connection follows the
 * index's generation: kept while it stands, reopened when it moves on, and
 * refused (so the request is a 503) while a rebuild is under way, when the
 * file at the index's path may not list its profiles yet.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "server/server_state.h"
#include "store/index_db.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static xpv_server server;
static char dir[1024]; /* the index's folder, for every test */

static void setup(void)
{
    char db_path[1024], profiles[1024];
    const char *d = xpv_test_tmpdir();
    snprintf(dir, sizeof dir, "%s", d);
    snprintf(db_path, sizeof db_path, "%s/index.sqlite", d);
    snprintf(profiles, sizeof profiles, "%s/profiles", d);
    xpv_test_write(d, "profiles/run.nsys-rep", "NSYS", 4);
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    CU_ASSERT_FATAL(xpv_index_open(db_path, profiles, &db, NULL, &err) == 0);
    sqlite3_close(db);
    xpv_server_options o;
    memset(&o, 0, sizeof o);
    xpv_server_init(&server, &o, db_path, profiles, profiles);
}

/* A TEMP table lives and dies with its connection: it tells a kept
 * connection from a new one at the same address. */
static int marked(sqlite3 *db)
{
    return sqlite3_exec(db, "SELECT * FROM temp.mark", NULL, NULL, NULL) == SQLITE_OK;
}

static void test_connection_follows_generation(void)
{
    setup();
    xpv_err err = {{0}};
    sqlite3 *first = xpv_server_db(&server, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(first, "CREATE TEMP TABLE mark(x)", NULL, NULL, NULL),
                          SQLITE_OK);
    CU_ASSERT(marked(xpv_server_db(&server, &err))); /* kept */
    server.index_generation = 2;
    sqlite3 *second = xpv_server_db(&server, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(second);
    CU_ASSERT(!marked(second)); /* reopened on the new file */
}

static void test_refused_while_rebuilt(void)
{
    xpv_err err = {{0}};
    CU_ASSERT_PTR_NOT_NULL_FATAL(xpv_server_db(&server, &err));
    server.index_generation = 3; /* odd: the file is being made anew */
    CU_ASSERT_PTR_NULL(xpv_server_db(&server, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "being rebuilt"));
    memset(&err, 0, sizeof err);
    CU_ASSERT_PTR_NULL(xpv_server_db(&server, &err)); /* no connection kept meanwhile */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "being rebuilt"));
    server.index_generation = 4;
    memset(&err, 0, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(xpv_server_db(&server, &err));
    CU_ASSERT_STRING_EQUAL(err.msg, "");
}

/* A thread whose first open failed tries again on its next request at the
 * same generation, rather than hand back the NULL it was left with. */
static void *first_open_fails(void *arg)
{
    (void)arg;
    xpv_err err = {{0}};
    char saved[sizeof server.db_path];
    memcpy(saved, server.db_path, sizeof saved);
    snprintf(server.db_path, sizeof server.db_path, "%s/missing/index.sqlite", dir);
    CU_ASSERT_PTR_NULL(xpv_server_db(&server, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot open index"));
    memcpy(server.db_path, saved, sizeof saved);
    memset(&err, 0, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(xpv_server_db(&server, &err));
    return NULL;
}

static void test_failed_open_is_retried(void)
{
    pthread_t t; /* a thread of its own: no connection yet */
    int saved = server.index_generation;
    server.index_generation = 0; /* as at start-up */
    CU_ASSERT_FATAL(pthread_create(&t, NULL, first_open_fails, NULL) == 0);
    pthread_join(t, NULL);
    server.index_generation = saved;
}

/* A file that is not an index cannot be read: refused at once, and
 * reported so that the indexer checks it. */
static int reports;
static void count_report(void *ctx)
{
    (void)ctx;
    reports++;
}

static void test_unreadable_file_is_reported(void)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/garbage.sqlite", dir);
    xpv_test_write(dir, "garbage.sqlite", "this is not an SQLite database, just text", 41);
    char saved[sizeof server.db_path];
    memcpy(saved, server.db_path, sizeof saved);
    snprintf(server.db_path, sizeof server.db_path, "%s", path);
    server.on_index_damaged = count_report;
    server.index_generation = 8;
    xpv_err err = {{0}};
    CU_ASSERT_PTR_NULL(xpv_server_db(&server, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot read the index"));
    CU_ASSERT_EQUAL(reports, 1);
    memcpy(server.db_path, saved, sizeof saved);
    server.on_index_damaged = NULL;
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"a connection follows the index's generation", test_connection_follows_generation},
        {"refused while the index is made anew", test_refused_while_rebuilt},
        {"a failed open is tried again", test_failed_open_is_retried},
        {"a file that is not an index is reported", test_unreadable_file_is_reported},
        {NULL, NULL},
    };
    return xpv_test_run("server_state", tests, 0);
}
