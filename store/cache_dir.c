/*
 * cache_dir.c — listing the index cache and keeping it under its cap.
 *
 * Invariants: only files named *.sqlite in the cache directory (and their
 * -wal, -shm, -journal and .lock companions) are ever removed; an index
 * that another process has open, or that the caller keeps, never is.
 * "Open in another process" is read from SQLite's own WAL locks: every
 * connection to a WAL database holds a shared lock on byte 128 of its
 * -shm file (the "dead man switch" of SQLite's unix VFS) for as long as it
 * is connected, and fcntl(F_GETLK) reports other processes' locks.
 */
#define _GNU_SOURCE
#include "cache_dir.h"
#include "index_db.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define SHM_DMS_BYTE 128
#define DEFAULT_MAX_BYTES (20LL << 30)

/* Whether another process holds SQLite's connection lock on db_path. */
static int open_elsewhere(const char *db_path)
{
    char shm[PATH_MAX + 8];
    snprintf(shm, sizeof shm, "%s-shm", db_path);
    int fd = open(shm, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0; /* no -shm: no connection in WAL mode */
    struct flock lk = {
        .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = SHM_DMS_BYTE, .l_len = 1};
    int held = fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK;
    close(fd);
    return held;
}

static int query_profile_dir(const char *name, int flags, char *out, size_t n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_open_v2(name, &db, flags, NULL) == SQLITE_OK &&
        sqlite3_busy_timeout(db, 200) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='profile_dir'", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
        snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
        found = 1;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return found;
}

/* The main file alone first (no -shm made, nothing disturbed); an index
 * whose meta row is still only in its WAL needs a real connection. */
static void read_profile_dir(const char *db_path, char *out, size_t n)
{
    char uri[PATH_MAX + 32];
    out[0] = 0;
    snprintf(uri, sizeof uri, "file:%s?immutable=1", db_path);
    if (!strchr(db_path, '?') && !strchr(db_path, '#') &&
        query_profile_dir(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, out, n))
        return;
    query_profile_dir(db_path, SQLITE_OPEN_READONLY, out, n);
}

static void measure(xpv_cache_entry *e)
{
    static const char *const sides[] = {"", "-wal", "-shm"};
    e->bytes = 0;
    e->last_use_ns = 0;
    for (size_t i = 0; i < 3; i++) {
        char p[PATH_MAX + 8];
        struct stat st;
        snprintf(p, sizeof p, "%s%s", e->path, sides[i]);
        if (stat(p, &st) != 0) continue;
        e->bytes += (int64_t)st.st_size;
        if (i < 2 && xpv_mtime_ns(&st) > e->last_use_ns) e->last_use_ns = xpv_mtime_ns(&st);
    }
}

static int newest_first(const void *a, const void *b)
{
    const xpv_cache_entry *x = a, *y = b;
    if (x->last_use_ns != y->last_use_ns) return x->last_use_ns < y->last_use_ns ? 1 : -1;
    return strcmp(x->path, y->path);
}

static int is_index_name(const char *name)
{
    size_t n = strlen(name);
    return n > 7 && strcmp(name + n - 7, ".sqlite") == 0 && name[0] != '.';
}

int xpv_cache_list(const char *dir, xpv_cache_entry **out, size_t *n, xpv_err *err)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : xpv_err_set(err, "%s: %s", dir, strerror(errno));
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_index_name(de->d_name)) continue;
        if (*n == cap) *out = xpv_xrealloc(*out, (cap = cap ? cap * 2 : 16) * sizeof **out);
        xpv_cache_entry *e = &(*out)[*n];
        memset(e, 0, sizeof *e);
        int len = snprintf(e->path, sizeof e->path, "%s/%s", dir, de->d_name);
        if (len < 0 || (size_t)len >= sizeof e->path) continue;
        measure(e);
        read_profile_dir(e->path, e->profile_dir, sizeof e->profile_dir);
        e->in_use = open_elsewhere(e->path);
        (*n)++;
    }
    closedir(d);
    if (*n) qsort(*out, *n, sizeof **out, newest_first);
    return 0;
}

void xpv_cache_touch(const char *db_path)
{
    utimensat(AT_FDCWD, db_path, NULL, 0); /* failing costs only LRU order */
}

int64_t xpv_cache_default_max(const char *dir)
{
    struct statvfs vfs;
    if (statvfs(dir, &vfs) != 0) return DEFAULT_MAX_BYTES;
    int64_t tenth = (int64_t)((unsigned long long)vfs.f_bavail * vfs.f_frsize / 10);
    return tenth < DEFAULT_MAX_BYTES ? tenth : DEFAULT_MAX_BYTES;
}

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    if (!b || stat(a, &x) != 0 || stat(b, &y) != 0) return 0;
    return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static void remove_index(const char *path)
{
    char lock[PATH_MAX + 8];
    xpv_index_remove(path);
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
}

int xpv_cache_evict(const char *dir, int64_t max_bytes, const char *keep, size_t *removed,
                    int64_t *left, xpv_err *err)
{
    xpv_cache_entry *e;
    size_t n;
    *removed = 0;
    *left = 0;
    if (keep) xpv_cache_touch(keep);
    if (xpv_cache_list(dir, &e, &n, err) != 0) return -1;
    for (size_t i = 0; i < n; i++)
        *left += e[i].bytes;
    /* Oldest first; the kept index and those in use only count. */
    for (size_t i = n; i-- > 0 && *left > max_bytes;) {
        if (e[i].in_use || same_file(e[i].path, keep)) continue;
        remove_index(e[i].path);
        *left -= e[i].bytes;
        (*removed)++;
    }
    free(e);
    return 0;
}

int xpv_cache_clear(const char *dir, const char *keep, size_t *removed, size_t *skipped,
                    xpv_err *err)
{
    xpv_cache_entry *e;
    size_t n;
    *removed = *skipped = 0;
    if (xpv_cache_list(dir, &e, &n, err) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (e[i].in_use || same_file(e[i].path, keep)) {
            (*skipped)++;
            continue;
        }
        remove_index(e[i].path);
        (*removed)++;
    }
    free(e);
    return 0;
}
