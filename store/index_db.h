/*
 * index_db.h — the SQLite index: where it lives, its schema, and the rule
 * that an index of another schema version, for another profile directory, or
 * that SQLite reports as damaged is deleted and rebuilt, never trusted.
 *
 * Tables (all keyed by profile_id = xpv_profile_id_for(relative path)):
 *   meta          schema_version, profile_dir
 *   profiles      one row per discovered file: where, what format, status
 *   strings       interned names and arg values per profile
 *   tracks        (pid, tid) tracks with names, sort order, device, counts
 *   blocks        events, packed in blocks per (track, duration class)
 *   kernel_stats  per-name kernel / memcpy / memset / XLA-op summaries
 *   kernel_device_stats  the same per device, one packed blob per device
 *   steps         step timelines with per-category device time
 *   findings      each profile's findings answer, computed once
 *   compile_marks compile windows and autotuner kernel names (compile-time work)
 * The index is a cache: deleting the file loses nothing. The tables named
 * in scripts/checksrc.sh's STORE_TABLES are read only through their module,
 * store/<table>.c (steps.c, kernel_stats.c, profiles.c, tracks.c,
 * findings.c, compile_marks.c).
 */
#ifndef XPV_INDEX_DB_H
#define XPV_INDEX_DB_H

#include "db.h"
#include "kernel_rows.h"
#include "strings.h"

/* Bump when any table's meaning changes: older indexes are rebuilt. */
#define XPV_SCHEMA_VERSION 17

/* kernel_stats.top_rank is set for this many names of each kind. */
#define XPV_KSTATS_TOP_RANKS 32

/* Writes the cache directory, $XDG_CACHE_HOME/xprof-view (or
 * ~/.cache/xprof-view), into out, creating it. */
int xpv_index_cache_dir(char *out, size_t outsz, xpv_err *err);

/* Writes the default index path for a profile directory into out:
 * $XDG_CACHE_HOME/xprof-view/<basename>-<hash>.sqlite (or ~/.cache/...).
 * Creates the cache directory. */
int xpv_index_default_path(const char *profile_dir_abs, char *out, size_t outsz, xpv_err *err);

/* Opens (creating or rebuilding as needed) the index for profile_dir_abs.
 * Refuses a db path inside the profile directory. *rebuilt is set when an
 * existing file was discarded (may be NULL). */
int xpv_index_open(const char *db_path, const char *profile_dir_abs, sqlite3 **out, int *rebuilt,
                   xpv_err *err);

/* 1 when SQLite's quick check finds the file's structure sound. */
int xpv_index_quick_check(sqlite3 *db);
/* Removes the index file and its -wal, -shm and -journal companions. */
void xpv_index_remove(const char *db_path);
/* Makes the index's table-valued functions (kernel_device_rows,
 * string_rows) known to db; every connection that reads the index does
 * this when it opens. SQLite's result code. */
int xpv_index_register_functions(sqlite3 *db);
/* Opens an existing index read-only for a serving thread. */
int xpv_index_open_reader(const char *db_path, sqlite3 **out, xpv_err *err);

/* When this index file was created (ns since the epoch): two connections
 * on the same path read the same file when it is equal. 0 for an index
 * made before it was kept, -1 when it cannot be read. */
int64_t xpv_index_created_ns(sqlite3 *db);

/* The connection's first read (the schema version), which opens the -wal
 * and -shm files beside the index. Returns SQLite's result code, with err
 * set when it is not SQLITE_OK. */
int xpv_index_first_read(sqlite3 *db, xpv_err *err);
/* SQLite's data_version of db: it changes when another connection commits,
 * which is when answers cached for db go stale. *stmt keeps the prepared
 * statement between calls (NULL at first; sqlite3_finalize it with db).
 * -1 on error. */
int64_t xpv_index_data_version(sqlite3 *db, sqlite3_stmt **stmt);

/* The tables that hold rows of a profile (all but meta and profiles). */
#define XPV_INDEX_PROFILE_TABLES 8
extern const char *const xpv_index_profile_tables[];

/* Deletes every row that belongs to one profile except its profiles row. */
int xpv_index_clear_profile(sqlite3 *db, int64_t profile_id, xpv_err *err);

/* Copies the WAL into the index and cuts it to nothing, when no reader
 * holds it: while requests are answered during indexing, checkpoints
 * cannot finish and the WAL grows to the size of what was written (466 MB
 * for 16 hosts of 64 MB xplanes), and SQLite keeps that file. Returns 0, or
 * -1 when readers held it (nothing lost). */
int xpv_index_trim_wal(sqlite3 *db);

/* Sets a profile's status to pending, so the next indexing run reads its
 * file again (its blocks were found damaged). Returns 0 or -1 with err. */
int xpv_index_mark_pending(sqlite3 *db, int64_t profile_id, xpv_err *err);

/* Parts (see index_jobs.c): a private database with the index's schema
 * that one profile is indexed into by a worker thread, then moved into
 * the index by its one writer. part_path names the seq-th part of this
 * process beside db_path. open_part creates it afresh: a file at path, or
 * with path NULL a database in memory, which close_part hands over as an
 * image (sqlite3_serialize; a file's image stays NULL). move_part replaces
 * profile id's rows in db with the part's (its file, or its image, which
 * it frees) and the rows the worker gathered in memory (xpv_index_part_rows:
 * the part's own tables for them stay empty, each row is inserted once,
 * here), in one transaction; a part's file is left for the caller to
 * remove. remove_stale_parts deletes the parts of processes that are gone. */
typedef struct {
    unsigned char *data; /* sqlite3_malloc'ed */
    int64_t size;
} xpv_index_part_image;
int xpv_index_part_path(const char *db_path, size_t seq, char *out, size_t outsz, xpv_err *err);
int xpv_index_open_part(const char *path, sqlite3 **out, xpv_err *err);
/* Closes the part; with image (in-memory parts only) keeps its image. */
int xpv_index_close_part(sqlite3 *part, xpv_index_part_image *image, xpv_err *err);
void xpv_index_part_image_free(xpv_index_part_image *image);
/* The rows a worker keeps in memory for the writer: SQLite costs about as
 * much to insert a row into a part as to copy it out again, and these are
 * the most numerous (kernel rows and strings: ~10 k a pod host). */
typedef struct xpv_index_part_rows {
    xpv_store_kernel_rows kernel;
    xpv_store_string_rows strings;
} xpv_index_part_rows;
void xpv_index_part_rows_free(xpv_index_part_rows *rows);
int xpv_index_move_part(sqlite3 *db, const char *part_path, xpv_index_part_image *image, int64_t id,
                        xpv_index_part_rows *rows, xpv_err *err);
void xpv_index_remove_stale_parts(const char *db_path);

#endif
