/*
 * test_index_db.c — the index is a cache that is never trusted blindly:
 * created fresh, kept when current, rebuilt when of another schema version,
 * of another profile directory or damaged; never placed inside the profile
 * directory. Registration is incremental: unchanged files are not re-read,
 * changed ones are, vanished ones are dropped.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "indexer/discover.h"
#include "indexer/readers/readers.h"
#include "store/index_db.h"
#include "indexer/indexer.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char db_path[1024], profiles[1024];

static void setup_paths(void)
{
    const char *d = xpv_test_tmpdir();
    snprintf(db_path, sizeof db_path, "%s/cache/index.sqlite", d);
    snprintf(profiles, sizeof profiles, "%s/profiles", d);
    xpv_test_write(d, "cache/.keep", "", 0);
    xpv_test_write(d, "profiles/a/run.nsys-rep", "NSYS", 4);
    xpv_test_write(d, "profiles/b/empty.trace.json", "", 0);
}

static sqlite3 *open_ok(int *rebuilt)
{
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_index_open(db_path, profiles, &db, rebuilt, &err), 0);
    return db;
}

static void test_fresh_then_kept(void)
{
    setup_paths();
    int rebuilt = -1;
    sqlite3 *db = open_ok(&rebuilt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(db);
    CU_ASSERT_EQUAL(rebuilt, 0);
    int64_t created = xpv_index_created_ns(db);
    CU_ASSERT(created > 0);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_db_exec(db, "INSERT INTO profiles(id, path) VALUES(1, 'x')", &err), 0);
    sqlite3_close(db);
    db = open_ok(&rebuilt);
    CU_ASSERT_EQUAL(rebuilt, 0);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM profiles"), 1);
    CU_ASSERT_EQUAL(xpv_index_created_ns(db), created); /* the same file: the same mark */
    sqlite3_close(db);
}

static void *release_after_300ms(void *holder)
{
    usleep(300 * 1000);
    sqlite3_close(holder);
    return NULL;
}

/* A server's reader can hold the file for a moment (recovering the WAL)
 * just when the indexer opens it: that is busy, not damaged. */
static void test_busy_index_kept(void)
{
    setup_paths();
    sqlite3 *db = open_ok(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(db);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_db_exec(db, "INSERT INTO profiles(id, path) VALUES(1, 'x')", &err), 0);
    sqlite3_close(db);
    sqlite3 *holder = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(db_path, &holder), SQLITE_OK);
    CU_ASSERT_EQUAL(xpv_db_exec(holder,
                                "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE;"
                                " SELECT count(*) FROM meta; COMMIT;",
                                &err),
                    0);
    pthread_t t;
    pthread_create(&t, NULL, release_after_300ms, holder);
    int rebuilt = -1;
    db = open_ok(&rebuilt);
    pthread_join(t, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(db);
    CU_ASSERT_EQUAL(rebuilt, 0);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM profiles"), 1);
    sqlite3_close(db);
}

static void test_other_version_rebuilt(void)
{
    setup_paths();
    int rebuilt;
    sqlite3 *db = open_ok(&rebuilt);
    int64_t created = xpv_index_created_ns(db);
    xpv_err err = {{0}};
    xpv_db_exec(db,
                "INSERT INTO profiles(id, path) VALUES(1, 'x');"
                "UPDATE meta SET value='999' WHERE key='schema_version'",
                &err);
    sqlite3_close(db);
    db = open_ok(&rebuilt);
    CU_ASSERT_EQUAL(rebuilt, 1);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM profiles"), 0);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT value FROM meta WHERE key='schema_version'"),
                    XPV_SCHEMA_VERSION);
    /* a rebuilt file is told apart from the one it replaced */
    CU_ASSERT(xpv_index_created_ns(db) > created);
    sqlite3_close(db);
}

static void test_other_directory_rebuilt(void)
{
    setup_paths();
    int rebuilt;
    sqlite3 *db = open_ok(&rebuilt);
    xpv_err err = {{0}};
    xpv_db_exec(db, "UPDATE meta SET value='/somewhere/else' WHERE key='profile_dir'", &err);
    sqlite3_close(db);
    db = open_ok(&rebuilt);
    CU_ASSERT_EQUAL(rebuilt, 1);
    sqlite3_close(db);
}

static void test_garbage_rebuilt(void)
{
    setup_paths();
    FILE *f = fopen(db_path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int i = 0; i < 4096; i++)
        fputc(i * 7 & 0xff, f);
    fclose(f);
    int rebuilt;
    sqlite3 *db = open_ok(&rebuilt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(db);
    CU_ASSERT_EQUAL(rebuilt, 1);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM profiles"), 0);
    sqlite3_close(db);
}

static void test_damaged_pages_rebuilt(void)
{
    setup_paths();
    int rebuilt;
    sqlite3 *db = open_ok(&rebuilt);
    xpv_err err = {{0}};
    xpv_db_exec(db, "PRAGMA journal_mode=DELETE", &err);
    xpv_db_exec(db, "INSERT INTO profiles(id, path) VALUES(1, 'x')", &err);
    sqlite3_close(db);
    /* Overwrite the second page (the first table's root) with noise; the
     * page size is in the file header (bytes 16-17, big-endian, 1 = 65536). */
    int fd = open(db_path, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    unsigned char header[100];
    CU_ASSERT_EQUAL_FATAL(pread(fd, header, sizeof header, 0), (ssize_t)sizeof header);
    size_t page = (size_t)header[16] << 8 | header[17];
    if (page == 1) page = 65536;
    static char noise[65536];
    memset(noise, 0xA5, sizeof noise);
    CU_ASSERT_EQUAL(pwrite(fd, noise, page, (off_t)page), (ssize_t)page);
    close(fd);
    db = open_ok(&rebuilt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(db);
    CU_ASSERT_EQUAL(rebuilt, 1);
    sqlite3_close(db);
}

static void test_refuses_inside_profile_dir(void)
{
    setup_paths();
    char inside[2048];
    snprintf(inside, sizeof inside, "%s/a/index.sqlite", profiles);
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_index_open(inside, profiles, &db, NULL, &err), -1);
    CU_ASSERT(strstr(err.msg, "inside the profile directory") != NULL);
    CU_ASSERT_EQUAL(access(inside, F_OK), -1);
}

static int register_and_run(sqlite3 *db)
{
    xpv_found_list l;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(profiles, &l, &err), 0);
    int pending = xpv_indexer_register(db, &l, &err);
    CU_ASSERT(pending >= 0);
    CU_ASSERT_EQUAL(xpv_indexer_run(db, &l, NULL, &err), 0);
    xpv_found_list_free(&l);
    return pending;
}

static void test_incremental(void)
{
    setup_paths();
    int rebuilt;
    sqlite3 *db = open_ok(&rebuilt);
    CU_ASSERT_EQUAL(register_and_run(db), 2);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM profiles WHERE status='unsupported'"),
                    1);
    CU_ASSERT_EQUAL(
        xpv_test_int(db, "SELECT count(*) FROM profiles WHERE status='error' AND error LIKE "
                         "'%empty%'"),
        1);
    CU_ASSERT_EQUAL(register_and_run(db), 0); /* nothing changed: nothing re-read */
    char path[2048];
    snprintf(path, sizeof path, "%s/a/run.nsys-rep", profiles);
    struct timespec times[2] = {{2000000000, 0}, {2000000000, 0}};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, times, 0), 0);
    CU_ASSERT_EQUAL(register_and_run(db), 1); /* touched: re-read */
    snprintf(path, sizeof path, "%s/b/empty.trace.json", profiles);
    CU_ASSERT_EQUAL(unlink(path), 0);
    CU_ASSERT_EQUAL(register_and_run(db), 0);
    CU_ASSERT_EQUAL(xpv_test_int(db, "SELECT count(*) FROM profiles"),
                    1); /* vanished file dropped */
    sqlite3_close(db);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"fresh index, then kept", test_fresh_then_kept},
        {"busy index kept, not rebuilt", test_busy_index_kept},
        {"other schema version rebuilt", test_other_version_rebuilt},
        {"other profile directory rebuilt", test_other_directory_rebuilt},
        {"garbage file rebuilt", test_garbage_rebuilt},
        {"damaged pages rebuilt", test_damaged_pages_rebuilt},
        {"never inside the profile directory", test_refuses_inside_profile_dir},
        {"incremental registration", test_incremental},
        {NULL, NULL},
    };
    return xpv_test_run("index_db", tests, 0);
}
