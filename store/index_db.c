/*
 * index_db.c — opening, creating, validating and rebuilding the index.
 *
 * Invariant: a database handed out by xpv_index_open has the current schema
 * and belongs to the given profile directory. Anything else is removed first.
 * Its connection is used by one thread at a time (the indexer hands it to
 * the event store's thread and takes it back when that thread is done), so
 * it is opened without SQLite's per-call mutex.
 */
#define _GNU_SOURCE
#include "index_db.h"
#include "kernel_device_stats.h"
#include "kernel_stats.h"
#include "string_chunks.h"
#include "strings.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const SCHEMA_SQL =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE profiles("
    " id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, run TEXT, host TEXT,"
    " format TEXT, producer TEXT, size_bytes INTEGER, mtime_ns INTEGER,"
    " status TEXT NOT NULL DEFAULT 'pending', error TEXT, warnings TEXT,"
    " partial INTEGER NOT NULL DEFAULT 0, events INTEGER, start_ns INTEGER, end_ns INTEGER,"
    " devices TEXT, facts TEXT, phase_counts TEXT, step_source TEXT, step_count INTEGER,"
    " kernel_count INTEGER, companion_of INTEGER, indexed_at REAL, index_seconds REAL,"
    " kernel_totals TEXT);"
    /* A profile's strings, 64 consecutive ids a row: see string_chunks.h. */
    "CREATE TABLE strings(profile_id INTEGER NOT NULL, first_id INTEGER NOT NULL,"
    " data BLOB NOT NULL, PRIMARY KEY(profile_id, first_id)) WITHOUT ROWID;"
    "CREATE TABLE tracks(profile_id INTEGER NOT NULL, id INTEGER NOT NULL, pid INTEGER,"
    " tid INTEGER, process_name TEXT, thread_name TEXT, process_sort INTEGER,"
    " thread_sort INTEGER, process_labels TEXT, device_id INTEGER, events INTEGER,"
    " t_min INTEGER, t_max INTEGER, PRIMARY KEY(profile_id, id)) WITHOUT ROWID;"
    /* Events, packed: see event_store.c for the blob layout. lod is the
     * duration class (dur < 2^lod ns), t_max the latest end in the block,
     * kinds the OR of 1 << kind over its events, and XPV_BLOCK_COUNTERS /
     * XPV_BLOCK_FLOWS (event_store.h) when it holds counters / flow records. */
    "CREATE TABLE blocks(id INTEGER PRIMARY KEY, profile_id INTEGER NOT NULL,"
    " track INTEGER NOT NULL, lod INTEGER NOT NULL, t_min INTEGER NOT NULL,"
    " t_max INTEGER NOT NULL, n INTEGER NOT NULL, busy_ns INTEGER NOT NULL,"
    " kinds INTEGER NOT NULL DEFAULT 0, data BLOB);"
    "CREATE INDEX blocks_by_time ON blocks(profile_id, track, lod, t_min, t_max, kinds);"
    /* kind: kernel | memcpy | memset | xla_op | hlo_category, and
     * compile_kernel | compile_memcpy | compile_memset for the device work
     * of compilation inside the capture (XLA autotuning), which the program's
     * kinds leave out (indexer/analysis/compile.c). device -1 = all devices.
     * Durations in picoseconds (exact integer sums). Unknown values are NULL.
     * seq: the row's place among the profile's rows as written, which orders
     * rows of one name. op_id: the op's id in `strings` (its text is there
     * already). Keyed as queries look rows up, without a rowid or a second
     * index: most of a small profile's index is these rows. The table holds
     * the all-devices rows (device -1); each device's are packed below. */
    "CREATE TABLE kernel_stats(profile_id INTEGER NOT NULL, kind TEXT NOT NULL,"
    " device INTEGER NOT NULL, name TEXT NOT NULL, seq INTEGER NOT NULL DEFAULT 0,"
    " category TEXT, count INTEGER, total_ps INTEGER, min_ps INTEGER, max_ps INTEGER,"
    " median_ps REAL, stddev_ps REAL, percent REAL, grid TEXT, block TEXT,"
    " registers_per_thread INTEGER, shared_memory_bytes INTEGER, occupancy_pct REAL,"
    " op_id INTEGER, shapes INTEGER, top_rank INTEGER,"
    " PRIMARY KEY(profile_id, kind, device, name, seq)) WITHOUT ROWID;"
    /* top_rank: on all-devices rows, the name's place in its kind by summed
     * time, for the first XPV_KSTATS_TOP_RANKS names (NULL beyond); with
     * profiles.kernel_totals it lets a merge of many hosts read a few rows
     * per host (api/tools/tool_overview_page.c). */
    "CREATE INDEX kernel_stats_top ON kernel_stats(profile_id, kind, top_rank)"
    " WHERE top_rank IS NOT NULL;"
    /* The rows of one device (>= 0), kernel_stats' columns from name on,
     * packed in key order: read them with kernel_device_rows(data)
     * (kernel_device_stats.c). */
    "CREATE TABLE kernel_device_stats(profile_id INTEGER NOT NULL, kind TEXT NOT NULL,"
    " device INTEGER NOT NULL, data BLOB NOT NULL,"
    " PRIMARY KEY(profile_id, kind, device)) WITHOUT ROWID;"
    /* device -1 = all devices combined. Times in picoseconds. The device
     * categories (compute .. memset, autotune_ps) and idle_ps partition
     * duration_ps (indexer/analysis/step_breakdown.c); host_wait_ps,
     * kernel_wait_ps and idle_other_ps partition idle_ps; the overlap_*
     * columns say what the partition hid. compile_ps: the step's time under
     * host compile spans (indexer/analysis/compile.c). A device row's start
     * and duration are that device's window; when devices have their own
     * windows, the combined row is their mean (start: the earliest) and
     * slowest_device names the longest (NULL when all are as long or the
     * devices share one window). */
    "CREATE TABLE steps(profile_id INTEGER NOT NULL, step INTEGER NOT NULL, name TEXT,"
    " device INTEGER NOT NULL, start_ps INTEGER, duration_ps INTEGER, compute_ps INTEGER,"
    " collective_ps INTEGER, memcpy_h2d_ps INTEGER, memcpy_d2h_ps INTEGER,"
    " memcpy_d2d_ps INTEGER, memcpy_other_ps INTEGER, memset_ps INTEGER, idle_ps INTEGER,"
    " host_wait_ps INTEGER, compile_ps INTEGER, autotune_ps INTEGER, kernel_wait_ps INTEGER,"
    " idle_other_ps INTEGER, overlap_compute_collective_ps INTEGER, overlap_copy_ps INTEGER,"
    " slowest_device INTEGER);"
    "CREATE INDEX steps_by_profile ON steps(profile_id, device, step);"
    /* The findings answer, computed once (store/findings.h): key hashes the
     * thresholds and the build, stamp the profile row it was computed from. */
    "CREATE TABLE findings(profile_id INTEGER PRIMARY KEY, key INTEGER NOT NULL,"
    " stamp INTEGER NOT NULL, answer TEXT NOT NULL);"
    /* A compile window (start_ns, end_ns) or an autotuner kernel's name
     * (string id), for readers that leave compile-time device work out as
     * kernel_stats does (store/compile_marks.h). */
    "CREATE TABLE compile_marks(profile_id INTEGER NOT NULL, start_ns INTEGER,"
    " end_ns INTEGER, name INTEGER);";

static int mkdir_p(const char *path, xpv_err *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return xpv_err_set(err, "cannot create %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return xpv_err_set(err, "cannot create %s: %s", tmp, strerror(errno));
    return 0;
}

int xpv_index_cache_dir(char *out, size_t outsz, xpv_err *err)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && *xdg)
        n = snprintf(out, outsz, "%s/xprof-view", xdg);
    else if (home && *home)
        n = snprintf(out, outsz, "%s/.cache/xprof-view", home);
    else
        n = snprintf(out, outsz, "/tmp/xprof-view-%d", (int)getuid());
    if (n < 0 || (size_t)n >= outsz) return xpv_err_set(err, "cache path too long");
    return mkdir_p(out, err);
}

int xpv_index_default_path(const char *profile_dir_abs, char *out, size_t outsz, xpv_err *err)
{
    char dir[4096];
    if (xpv_index_cache_dir(dir, sizeof dir, err) != 0) return -1;
    const char *base = strrchr(profile_dir_abs, '/');
    base = (base && base[1]) ? base + 1 : "root";
    uint64_t h = xpv_hash64(profile_dir_abs, strlen(profile_dir_abs));
    int n = snprintf(out, outsz, "%s/%.40s-%016llx.sqlite", dir, base, (unsigned long long)h);
    if (n < 0 || (size_t)n >= outsz) return xpv_err_set(err, "index path too long");
    return 0;
}

void xpv_index_remove(const char *db_path)
{
    char side[4200];
    unlink(db_path);
    snprintf(side, sizeof side, "%s-wal", db_path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db_path);
    unlink(side);
    snprintf(side, sizeof side, "%s-journal", db_path);
    unlink(side);
}

int xpv_index_quick_check(sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK) return 0;
    int ok = sqlite3_step(st) == SQLITE_ROW &&
             strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
    sqlite3_finalize(st);
    return ok;
}

static int is_busy(sqlite3 *db)
{
    int code = sqlite3_errcode(db) & 0xff;
    return code == SQLITE_BUSY || code == SQLITE_LOCKED;
}

/* 1 when the open database is a current index of profile_dir, 0 when it
 * is not (stale, foreign, damaged), -1 when it cannot tell because another
 * connection holds it (a server's reader recovering the WAL): a busy
 * index is not a damaged one, and must not be deleted for it. */
static int index_is_current(sqlite3 *db, const char *profile_dir)
{
    sqlite3_stmt *st = NULL;
    int version = -1, dir_ok = 0;
    if (sqlite3_prepare_v2(db, "SELECT key, value FROM meta", -1, &st, NULL) != SQLITE_OK)
        return is_busy(db) ? -1 : 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        if (!k || !v) continue;
        if (strcmp(k, "schema_version") == 0) version = atoi(v);
        if (strcmp(k, "profile_dir") == 0) dir_ok = strcmp(v, profile_dir) == 0;
    }
    int rc = sqlite3_finalize(st);
    if (rc != SQLITE_OK) return is_busy(db) ? -1 : 0;
    if (version != XPV_SCHEMA_VERSION || !dir_ok) return 0;
    /* Deep damage found later by a query makes the caller rebuild too. */
    if (xpv_index_quick_check(db)) return 1;
    return is_busy(db) ? -1 : 0;
}

#define WRITER_BUSY_MS 10000

static int configure(sqlite3 *db, xpv_err *err)
{
    sqlite3_busy_timeout(db, WRITER_BUSY_MS);
    /* WAL lets the server read while the indexer writes; the index is a
     * cache, so durability on power loss is not worth an fsync. The rows
     * go in mostly in key order, so 16 MB of page cache write as fast as
     * 64 MB did (the 256-host pod and the PyTorch x40 trace alike), for
     * 35 MB less at the peak of an index with two workers. */
    return xpv_db_exec(db,
                       "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
                       "PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;",
                       err);
}

static int create_schema(sqlite3 *db, const char *profile_dir, xpv_err *err)
{
    if (xpv_db_exec(db, "BEGIN", err) || xpv_db_exec(db, SCHEMA_SQL, err)) return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO meta VALUES('schema_version', ?1),('profile_dir', ?2),"
                           "('created_ns', ?3)",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_db_error(err, db);
    sqlite3_bind_int(st, 1, XPV_SCHEMA_VERSION);
    sqlite3_bind_text(st, 2, profile_dir, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, xpv_now_wall_ns());
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return xpv_db_error(err, db);
    return xpv_db_exec(db, "COMMIT", err);
}

static int path_is_inside(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

static int refuse_inside_profile_dir(const char *db_path, const char *profile_dir, xpv_err *err)
{
    char parent[4096], real_parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", db_path);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = 0;
    else
        snprintf(parent, sizeof parent, "%s", slash ? "/" : ".");
    if (!realpath(parent, real_parent))
        return xpv_err_set(err, "index directory %s: %s", parent, strerror(errno));
    if (path_is_inside(real_parent, profile_dir))
        return xpv_err_set(err, "refusing to write the index %s inside the profile directory %s",
                           db_path, profile_dir);
    return 0;
}

/* Two processes on one index (two servers, or --list-only beside a
 * server) must not check, create or remove it at the same time: one would
 * take the other's half-made schema for a damaged index and delete it. A
 * lock file beside the index serialises opening; it is released once the
 * index is open, since SQLite's own locks cover the rest. */
static int open_locked(const char *db_path, const char *profile_dir_abs, sqlite3 **out,
                       int *rebuilt, xpv_err *err);

static int lock_opening(const char *db_path, xpv_err *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.lock", db_path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return xpv_err_set(err, "cannot create %s: %s", path, strerror(errno));
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            close(fd);
            return xpv_err_set(err, "cannot lock %s: %s", path, strerror(errno));
        }
    return fd;
}

int xpv_index_open(const char *db_path, const char *profile_dir_abs, sqlite3 **out, int *rebuilt,
                   xpv_err *err)
{
    if (rebuilt) *rebuilt = 0;
    if (refuse_inside_profile_dir(db_path, profile_dir_abs, err) != 0) return -1;
    int lock = lock_opening(db_path, err);
    if (lock < 0) return -1;
    int rc = open_locked(db_path, profile_dir_abs, out, rebuilt, err);
    close(lock); /* releases the lock */
    return rc;
}

static int open_locked(const char *db_path, const char *profile_dir_abs, sqlite3 **out,
                       int *rebuilt, xpv_err *err)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        sqlite3 *db = NULL;
        int exists = access(db_path, F_OK) == 0;
        int rc = sqlite3_open_v2(
            db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
        sqlite3_busy_timeout(db, 10000); /* before the checks: see index_is_current */
        if (rc == SQLITE_OK) rc = xpv_index_register_functions(db);
        int current = rc == SQLITE_OK && exists ? index_is_current(db, profile_dir_abs) : 0;
        if (current < 0) {
            xpv_err_set(err, "index %s is busy: %s", db_path, sqlite3_errmsg(db));
            sqlite3_close(db);
            return -1;
        }
        if (current) {
            if (configure(db, err) == 0) {
                *out = db;
                return 0;
            }
        } else if (rc == SQLITE_OK && !exists) {
            /* Event blocks are compressed to ~5-40 KB: 16 KB pages keep
             * their overflow chains short without leaving the small tables
             * and each chain's last page mostly empty, as 64 KB pages did
             * (bench/run_footprint.sh). Must be set before the first table. */
            if (xpv_db_exec(db, "PRAGMA page_size=16384", err) == 0 && configure(db, err) == 0 &&
                create_schema(db, profile_dir_abs, err) == 0) {
                *out = db;
                return 0;
            }
        }
        /* Stale, foreign or damaged: throw it away and start again once. */
        sqlite3_close(db);
        xpv_index_remove(db_path);
        if (rebuilt && exists) *rebuilt = 1;
    }
    if (!err || !err->msg[0]) xpv_err_set(err, "cannot create index %s", db_path);
    return -1;
}

int xpv_index_register_functions(sqlite3 *db)
{
    int rc = xpv_store_kernel_device_stats_register(db);
    return rc == SQLITE_OK ? xpv_store_string_chunks_register(db) : rc;
}

int xpv_index_open_reader(const char *db_path, sqlite3 **out, xpv_err *err)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        xpv_err_set(err, "cannot open index %s: %s", db_path, db ? sqlite3_errmsg(db) : "?");
        sqlite3_close(db);
        return -1;
    }
    if (xpv_index_register_functions(db) != SQLITE_OK) {
        xpv_err_set(err, "cannot open index %s: %s", db_path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db, 3000); /* then 503: locked by another process */
    /* Event blocks span overflow pages; mapping the file spares a read()
     * copy of every page a window touches. Failing only costs speed. */
    sqlite3_exec(db, "PRAGMA mmap_size=17179869184; PRAGMA cache_size=-16384", NULL, NULL, NULL);
    *out = db;
    return 0;
}

int64_t xpv_index_created_ns(sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='created_ns'", -1, &st, NULL) !=
        SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    int64_t ns = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : rc == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return ns;
}

int xpv_index_first_read(sqlite3 *db, xpv_err *err)
{
    int rc = sqlite3_exec(db, "PRAGMA schema_version", NULL, NULL, NULL);
    if (rc != SQLITE_OK) xpv_err_set(err, "cannot read the index: %s", sqlite3_errmsg(db));
    return rc;
}

int64_t xpv_index_data_version(sqlite3 *db, sqlite3_stmt **stmt)
{
    if (!*stmt && sqlite3_prepare_v2(db, "PRAGMA data_version", -1, stmt, NULL) != SQLITE_OK)
        return -1;
    int64_t v = sqlite3_step(*stmt) == SQLITE_ROW ? sqlite3_column_int64(*stmt, 0) : -1;
    sqlite3_reset(*stmt);
    return v;
}

const char *const xpv_index_profile_tables[] = {
    "strings", "tracks",   "blocks",       "kernel_stats", "kernel_device_stats",
    "steps",   "findings", "compile_marks"};
_Static_assert(sizeof xpv_index_profile_tables / sizeof xpv_index_profile_tables[0] ==
                   XPV_INDEX_PROFILE_TABLES,
               "XPV_INDEX_PROFILE_TABLES counts xpv_index_profile_tables");

int xpv_index_clear_profile(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    for (size_t i = 0; i < XPV_INDEX_PROFILE_TABLES; i++) {
        char sql[128];
        sqlite3_stmt *st;
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE profile_id=?1",
                 xpv_index_profile_tables[i]);
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return xpv_db_error(err, db);
        sqlite3_bind_int64(st, 1, profile_id);
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return xpv_db_error(err, db);
    }
    /* Written again with the profile's kernel rows, if it gets any. */
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "UPDATE profiles SET kernel_totals=NULL WHERE id=?1", -1, &st,
                           NULL) != SQLITE_OK)
        return xpv_db_error(err, db);
    sqlite3_bind_int64(st, 1, profile_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : xpv_db_error(err, db);
}

int xpv_index_mark_pending(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "UPDATE profiles SET status='pending', error=NULL WHERE id=?1", -1,
                           &st, NULL) != SQLITE_OK)
        return xpv_db_error(err, db);
    sqlite3_bind_int64(st, 1, profile_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : xpv_db_error(err, db);
}

int xpv_index_trim_wal(sqlite3 *db)
{
    /* Wait briefly: a reader in the middle of an answer keeps the WAL, and
     * the next run tries again. */
    sqlite3_busy_timeout(db, 100);
    int rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    sqlite3_busy_timeout(db, WRITER_BUSY_MS);
    return rc == SQLITE_OK ? 0 : -1;
}

/* ---- parts: one profile indexed apart, then moved in (index_jobs.c) ---- */

int xpv_index_part_path(const char *db_path, size_t seq, char *out, size_t outsz, xpv_err *err)
{
    int n = snprintf(out, outsz, "%s.part-%ld-%zu", db_path, (long)getpid(), seq);
    if (n < 0 || (size_t)n >= outsz) return xpv_err_set(err, "index path too long");
    return 0;
}

int xpv_index_open_part(const char *path, sqlite3 **out, xpv_err *err)
{
    sqlite3 *db = NULL;
    if (path) unlink(path);
    if (sqlite3_open_v2(path ? path : ":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        xpv_db_error(err, db);
        sqlite3_close(db);
        return -1;
    }
    /* A part lives only until it is moved into the index: no journal, no
     * sync. The page size matches the index's so blobs copy page for page. */
    if (xpv_db_exec(db,
                    "PRAGMA page_size=16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                    "PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;",
                    err) != 0 ||
        xpv_db_exec(db, SCHEMA_SQL, err) != 0 ||
        /* Nothing reads a part by time: its indexes would only be upkeep. */
        xpv_db_exec(db,
                    "DROP INDEX blocks_by_time; DROP INDEX kernel_stats_top;"
                    " DROP INDEX steps_by_profile;",
                    err) != 0) {
        sqlite3_close(db);
        if (path) unlink(path);
        return -1;
    }
    *out = db;
    return 0;
}

int xpv_index_close_part(sqlite3 *part, xpv_index_part_image *image, xpv_err *err)
{
    int rc = 0;
    if (image) {
        sqlite3_int64 size = 0;
        image->data = sqlite3_serialize(part, "main", &size, 0);
        image->size = size;
        if (!image->data) rc = xpv_err_set(err, "out of memory for a part of the index");
    }
    if (sqlite3_close(part) != SQLITE_OK && rc == 0)
        rc = xpv_err_set(err, "cannot close a part of the index");
    return rc;
}

void xpv_index_part_image_free(xpv_index_part_image *image)
{
    sqlite3_free(image->data);
    *image = (xpv_index_part_image){NULL, 0};
}

/* The profiles columns that indexing a file fills; the rest come from
 * discovery and are already in the index's row. */
#define INDEXED_COLUMNS                                                                            \
    "producer, status, error, warnings, partial, events, start_ns, end_ns, devices, facts,"        \
    " phase_counts, step_source, step_count, kernel_count, indexed_at, index_seconds,"             \
    " kernel_totals"

static int move_rows(sqlite3 *db, int64_t id, xpv_err *err)
{
    /* Rows keep their order, so block ids come out as if the profile had
     * been indexed here directly, after the profiles before it. */
    static const char *const copies[] = {
        "INSERT INTO main.tracks SELECT * FROM part.tracks",
        "INSERT INTO main.blocks(profile_id, track, lod, t_min, t_max, n, busy_ns, kinds, data)"
        " SELECT profile_id, track, lod, t_min, t_max, n, busy_ns, kinds, data FROM part.blocks"
        " ORDER BY id",
        "INSERT INTO main.steps SELECT * FROM part.steps ORDER BY rowid",
        "INSERT INTO main.compile_marks SELECT * FROM part.compile_marks",
        "UPDATE main.profiles SET (" INDEXED_COLUMNS ") = (SELECT " INDEXED_COLUMNS
        " FROM part.profiles WHERE id=?1) WHERE id=?1"};
    for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, copies[i], -1, &st, NULL) != SQLITE_OK)
            return xpv_db_error(err, db);
        if (sqlite3_bind_parameter_count(st) > 0) sqlite3_bind_int64(st, 1, id);
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return xpv_db_error(err, db);
    }
    return 0;
}

/* Attaches the part as `part`: its file, or its image, which the schema
 * then owns (freed on DETACH) and reads in place. Not read-only: BEGIN
 * IMMEDIATE takes a write lock on every attached schema. */
static int attach_part(sqlite3 *db, const char *part_path, xpv_index_part_image *image,
                       xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "ATTACH ?1 AS part", -1, &st, NULL) != SQLITE_OK)
        return xpv_db_error(err, db);
    sqlite3_bind_text(st, 1, image && image->data ? ":memory:" : part_path, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : xpv_db_error(err, db);
    sqlite3_finalize(st);
    if (!image || !image->data) return rc;
    unsigned char *data = image->data;
    image->data = NULL; /* deserialize frees it, even when it fails */
    if (rc == 0 && sqlite3_deserialize(db, "part", data, image->size, image->size,
                                       SQLITE_DESERIALIZE_FREEONCLOSE) != SQLITE_OK) {
        rc = xpv_db_error(err, db);
        xpv_db_exec(db, "DETACH part", NULL);
    } else if (rc != 0)
        sqlite3_free(data);
    return rc;
}

void xpv_index_part_rows_free(xpv_index_part_rows *rows)
{
    xpv_store_kernel_rows_free(&rows->kernel);
    xpv_store_string_rows_free(&rows->strings);
}

int xpv_index_move_part(sqlite3 *db, const char *part_path, xpv_index_part_image *image, int64_t id,
                        xpv_index_part_rows *rows, xpv_err *err)
{
    if (attach_part(db, part_path, image, err) != 0) return -1;
    int rc = xpv_db_exec(db, "BEGIN IMMEDIATE", err);
    if (rc == 0) rc = xpv_index_clear_profile(db, id, err);
    if (rc == 0) rc = move_rows(db, id, err);
    if (rc == 0) rc = xpv_store_strings_write(db, id, &rows->strings, err);
    if (rc == 0) rc = xpv_store_kernel_stats_write(db, id, &rows->kernel, err);
    if (rc == 0) rc = xpv_db_exec(db, "COMMIT", err);
    if (rc != 0) xpv_db_exec(db, "ROLLBACK", NULL);
    xpv_db_exec(db, "DETACH part", rc == 0 ? err : NULL);
    return rc;
}

/* Parts of a process that died (killed while indexing) are never moved in. */
void xpv_index_remove_stale_parts(const char *db_path)
{
    char dir[4096], prefix[512];
    const char *slash = strrchr(db_path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - db_path) : 1, slash ? db_path : ".");
    snprintf(prefix, sizeof prefix, "%s.part-", slash ? slash + 1 : db_path);
    DIR *d = opendir(dir);
    if (!d) return;
    size_t plen = strlen(prefix);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, plen) != 0) continue;
        long pid = strtol(e->d_name + plen, NULL, 10);
        if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}
