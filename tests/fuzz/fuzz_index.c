/*
 * fuzz_index.c — indexing fuzz inputs as profile files, the way the server
 * would, into a private index in a private temporary folder (on tmpfs when
 * there is one; removed at exit).
 *
 * The index is opened once per process and reused: each input is written
 * into the profile folder, discovered (so the format registry sniffs it),
 * forced pending and indexed by the real indexer (reader, sink, analysis).
 * Whether an input indexes or fails does not matter; only crashes,
 * sanitizer reports and hangs do. A failure of the harness aborts.
 */
#define _GNU_SOURCE
#include "fuzz.h"

#include "indexer/discover.h"
#include "store/index_db.h"
#include "indexer/indexer.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[512];
static sqlite3 *db;
static char db_dir[600];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_tmpdir(void)
{
    if (db) sqlite3_close(db);
    db = NULL;
    nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *xpv_fuzz_tmpdir(void)
{
    if (tmpdir[0]) return tmpdir;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/xpv-fuzz-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        abort();
    }
    atexit(remove_tmpdir);
    return tmpdir;
}

static void die(const char *what, const xpv_err *err)
{
    fprintf(stderr, "fuzz harness: %s: %s\n", what, err->msg);
    abort();
}

static void open_index(void)
{
    xpv_err err = {{0}};
    char db_path[700];
    snprintf(db_dir, sizeof db_dir, "%s/profiles", xpv_fuzz_tmpdir());
    if (mkdir(db_dir, 0700) != 0) die("mkdir profiles", &err);
    snprintf(db_path, sizeof db_path, "%s/index.sqlite", xpv_fuzz_tmpdir());
    if (xpv_index_open(db_path, db_dir, &db, NULL, &err) != 0) die("index open", &err);
}

const char *xpv_fuzz_profiles_dir(void)
{
    if (!db) open_index();
    return db_dir;
}

void xpv_fuzz_write(const char *file_name, const uint8_t *data, size_t size)
{
    char path[800];
    size_t root = strlen(xpv_fuzz_profiles_dir());
    snprintf(path, sizeof path, "%s/%s", db_dir, file_name);
    for (char *slash = strchr(path + root + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        mkdir(path, 0700);
        *slash = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

/* What each input became, for checking that seeds reach the readers. */
static void print_profiles(void)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT path, format, status, events, error FROM profiles", -1, &st,
                           NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(st) == SQLITE_ROW)
        fprintf(stderr, "%s: %s %s, %lld events%s%s\n", sqlite3_column_text(st, 0),
                sqlite3_column_text(st, 1), sqlite3_column_text(st, 2),
                (long long)sqlite3_column_int64(st, 3), sqlite3_column_text(st, 4) ? ": " : "",
                sqlite3_column_text(st, 4) ? (const char *)sqlite3_column_text(st, 4) : "");
    sqlite3_finalize(st);
}

void xpv_fuzz_index_all(void)
{
    xpv_found_list found = {0};
    xpv_err err = {{0}};
    if (xpv_discover(xpv_fuzz_profiles_dir(), &found, &err) != 0) die("discover", &err);
    if (xpv_indexer_register(db, &found, &err) < 0) die("register", &err);
    if (xpv_db_exec(db, "UPDATE profiles SET status='pending'", &err) != 0) die("pending", &err);
    if (xpv_indexer_run(db, &found, NULL, &err) != 0) die("index", &err);
    xpv_found_list_free(&found);
    if (getenv("XPV_FUZZ_VERBOSE")) print_profiles();
}

void xpv_fuzz_index_file(const char *file_name, const uint8_t *data, size_t size)
{
    char path[800];
    xpv_fuzz_write(file_name, data, size);
    xpv_fuzz_index_all();
    snprintf(path, sizeof path, "%s/%s", db_dir, file_name);
    unlink(path);
}
