/*
 * test_cache_dir.c — the index cache's cap (store/cache_dir.c): eviction
 * removes the least recently used indexes until the cache is under its
 * cap, never the caller's own index nor one another process has open;
 * listing reads each index's directory and sorts by last use.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "store/cache_dir.h"
#include "store/index_db.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAD (256 * 1024)

static char cache[3072];

/* An index of profile directory /profiles/<name>, padded to > PAD bytes,
 * last used `minutes` ago. */
static void make_index(const char *name, int minutes, char *path, size_t n)
{
    char prof[256], sql[128];
    snprintf(path, n, "%s/%s.sqlite", cache, name);
    snprintf(prof, sizeof prof, "/profiles/%s", name);
    sqlite3 *db;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_index_open(path, prof, &db, NULL, &err), 0);
    snprintf(sql, sizeof sql, "CREATE TABLE pad(x); INSERT INTO pad VALUES(zeroblob(%d))", PAD);
    CU_ASSERT_EQUAL(xpv_db_exec(db, sql, &err), 0);
    sqlite3_close(db);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= minutes * 60;
    t[1] = t[0];
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, t, 0), 0);
}

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static int64_t cache_bytes(size_t *count)
{
    xpv_cache_entry *e;
    size_t n;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_cache_list(cache, &e, &n, &err), 0);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += e[i].bytes;
    free(e);
    *count = n;
    return total;
}

static void fresh_cache(void)
{
    snprintf(cache, sizeof cache, "%s/cache", xpv_test_tmpdir());
    CU_ASSERT_EQUAL_FATAL(mkdir(cache, 0755), 0);
}

/* Another process with a connection open on path, until release(). */
typedef struct {
    pid_t pid;
    int go;
} holder;

static holder hold_open(const char *path)
{
    int ready[2], go[2];
    CU_ASSERT_EQUAL_FATAL(pipe(ready), 0);
    CU_ASSERT_EQUAL_FATAL(pipe(go), 0);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        sqlite3 *db;
        char c = 1;
        close(ready[0]);
        close(go[1]);
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
            sqlite3_exec(db, "SELECT count(*) FROM meta", NULL, NULL, NULL) != SQLITE_OK)
            c = 0;
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0) _exit(1);
        sqlite3_close(db);
        _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    char c = 0;
    CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1);
    CU_ASSERT_EQUAL(c, 1);
    close(ready[0]);
    return (holder){pid, go[1]};
}

static void release(holder h)
{
    int status;
    close(h.go);
    waitpid(h.pid, &status, 0);
}

static void test_list_reads_dirs_newest_first(void)
{
    fresh_cache();
    char a[4096], b[4096];
    make_index("old", 60, a, sizeof a);
    make_index("new", 5, b, sizeof b);
    xpv_cache_entry *e;
    size_t n;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_cache_list(cache, &e, &n, &err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(e[0].profile_dir, "/profiles/new");
    CU_ASSERT_STRING_EQUAL(e[1].profile_dir, "/profiles/old");
    CU_ASSERT(e[0].last_use_ns > e[1].last_use_ns);
    CU_ASSERT(e[1].bytes > PAD);
    CU_ASSERT(!e[0].in_use && !e[1].in_use);
    free(e);
}

/* Five indexes; the caller keeps the oldest. The cap allows about two:
 * the oldest others go, newest stay, and the kept one is untouched. */
static void test_eviction_keeps_the_cap(void)
{
    fresh_cache();
    char p[5][4096];
    static const char *const names[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++)
        make_index(names[i], 50 - 10 * i, p[i], sizeof p[i]); /* a oldest, e newest */
    size_t n, removed;
    int64_t total = cache_bytes(&n), left, cap = total * 2 / 5 + total / 20;
    CU_ASSERT_EQUAL(n, 5);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_cache_evict(cache, cap, p[0], &removed, &left, &err), 0);
    CU_ASSERT_EQUAL(removed, 3);
    CU_ASSERT(left <= cap);
    CU_ASSERT_EQUAL(cache_bytes(&n), left); /* what it says is what is there */
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT(exists(p[0])); /* kept, although least recently used */
    CU_ASSERT(!exists(p[1]) && !exists(p[2]) && !exists(p[3]));
    CU_ASSERT(exists(p[4]));
    /* A cap no index fits under leaves only the kept one. */
    CU_ASSERT_EQUAL(xpv_cache_evict(cache, 1, p[0], &removed, &left, &err), 0);
    CU_ASSERT_EQUAL(removed, 1);
    CU_ASSERT(exists(p[0]) && !exists(p[4]));
    CU_ASSERT(left > 1);
}

/* An index another process has open is neither evicted nor cleared. */
static void test_index_in_use_stays(void)
{
    fresh_cache();
    char busy[4096], idle[4096], mine[4096];
    make_index("busy", 90, busy, sizeof busy);
    make_index("idle", 30, idle, sizeof idle);
    make_index("mine", 1, mine, sizeof mine);
    holder h = hold_open(busy);
    xpv_cache_entry *e;
    size_t n, removed, skipped;
    int64_t left;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_cache_list(cache, &e, &n, &err), 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < n; i++) /* opening it made its -wal: in use is also used */
        CU_ASSERT_EQUAL(e[i].in_use, strcmp(e[i].profile_dir, "/profiles/busy") == 0);
    free(e);
    CU_ASSERT_EQUAL(xpv_cache_evict(cache, 1, mine, &removed, &left, &err), 0);
    CU_ASSERT_EQUAL(removed, 1);
    CU_ASSERT(exists(busy) && !exists(idle) && exists(mine));
    CU_ASSERT_EQUAL(xpv_cache_clear(cache, NULL, &removed, &skipped, &err), 0);
    CU_ASSERT_EQUAL(removed, 1);
    CU_ASSERT_EQUAL(skipped, 1);
    CU_ASSERT(exists(busy) && !exists(mine));
    release(h);
    /* Once closed it is just another index. */
    CU_ASSERT_EQUAL(xpv_cache_clear(cache, NULL, &removed, &skipped, &err), 0);
    CU_ASSERT_EQUAL(removed, 1);
    CU_ASSERT(!exists(busy));
}

static void test_default_cap(void)
{
    fresh_cache();
    int64_t cap = xpv_cache_default_max(cache);
    CU_ASSERT(cap > 0);
    CU_ASSERT(cap <= 20LL << 30);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"list reads directories, newest first", test_list_reads_dirs_newest_first},
        {"eviction keeps the cap, never the kept index", test_eviction_keeps_the_cap},
        {"an index in use stays", test_index_in_use_stays},
        {"default cap", test_default_cap},
        {NULL, NULL},
    };
    return xpv_test_run("cache_dir", tests, 0);
}
