/*
 * kernel_stats.h — the `kernel_stats` table (schema in index_db.c): per
 * profile, kind (kernel, memcpy, memset, xla_op, hlo_category; and
 * compile_kernel, compile_memcpy, compile_memset: the device work of
 * compilation inside the capture, which the program's kinds leave out) and device
 * (-1: all devices), one summary row per name (several when one name has
 * several shapes, ordered by seq), with profiles.kernel_totals beside it.
 * The table holds the all-devices rows; each device's are packed into
 * `kernel_device_stats` (kernel_device_stats.h) and read back as rows.
 * Every query that reads them is here (kernel_stats.c), as typed rows and
 * the few aggregates the answers need; nothing outside store/ names the
 * table in SQL (scripts/checksrc.sh).
 *
 * The rows' values are computed by indexer/analysis/kernel_rows.c, which
 * gathers them in memory (xpv_store_kernel_rows) and writes them here
 * (xpv_store_kernel_stats_write): at once when indexing into the index, or, for a worker's
 * part, handed to the index's writer, which inserts them once
 * (xpv_index_move_part) instead of into the part and again out of it.
 *
 * Invariant: durations are integer picoseconds (median and stddev real); a
 * NULL column is unknown (its bit in `known` clear, its text NULL), never 0.
 */
#ifndef XPV_STORE_KERNEL_STATS_H
#define XPV_STORE_KERNEL_STATS_H

#include "cursor.h"
#include "kernel_rows.h"

typedef struct {
    xpv_store_text name, category, grid, block;
    xpv_store_text op; /* the op's name (from `strings`) */
    int device;
    int64_t count, total_ps, min_ps, max_ps;
    double median_ps, stddev_ps, percent;
    int64_t registers_per_thread, shared_memory_bytes;
    double occupancy_pct;
    int64_t shapes;
    int compile; /* a row of compile-time work (kind compile_<kind>) */
    unsigned known;
} xpv_store_kernel_stat;

/* A new row at the end, its texts NULL and nothing known. */
xpv_store_kernel_row *xpv_store_kernel_rows_add(xpv_store_kernel_rows *rows);
/* Sets text column col (XPV_STORE_KCOL_*) of the last row added. */
void xpv_store_kernel_rows_text(xpv_store_kernel_rows *rows, int col, const char *s, size_t n);
void xpv_store_kernel_rows_free(xpv_store_kernel_rows *rows);
/* Puts the rows in the table's key order (kind, device, name, seq) for
 * xpv_store_kernel_stats_write, which does it itself when not done: a
 * worker calls it so that the index's writer need not. */
void xpv_store_kernel_rows_order(xpv_store_kernel_rows *rows);
/* Inserts the rows as profile_id's, in key order: the all-devices rows
 * into kernel_stats with one statement (a run of rows then fills its
 * b-tree pages one after another instead of touching a page per row: 6%
 * fewer instructions on the 32-host pod; a statement of many rows saved no
 * more than its coroutine cost), each device's as one packed row of
 * kernel_device_stats. */
int xpv_store_kernel_stats_write(sqlite3 *db, int64_t profile_id, xpv_store_kernel_rows *rows,
                                 xpv_err *err);

/* Row orders: by key (name, seq), or by a column (then name, seq), unknown
 * values last. */
enum xpv_store_kernel_sort {
    XPV_STORE_KSORT_KEY,
    XPV_STORE_KSORT_TOTAL,
    XPV_STORE_KSORT_COUNT,
    XPV_STORE_KSORT_AVG, /* total / count */
    XPV_STORE_KSORT_MAX,
    XPV_STORE_KSORT_NAME,
};

/* The rows of one profile, kind and device in `sort` order (desc: largest
 * first; ignored for KEY), at most limit of them (< 0: all). */
int xpv_store_kernel_stats_open(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                const char *kind, int device, enum xpv_store_kernel_sort sort,
                                int desc, int64_t limit, xpv_err *err);
/* Like xpv_store_kernel_stats_open; with_compile adds the rows of kind's
 * compile-time twin, `compile_<kind>` (XLA autotuning inside the capture,
 * indexer/analysis/compile.c), in the same order. */
int xpv_store_kernel_stats_open_with(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                     const char *kind, int with_compile, int device,
                                     enum xpv_store_kernel_sort sort, int desc, int64_t limit,
                                     xpv_err *err);
/* The all-devices rows of one kind over several profiles, the most total
 * time first (then by name), at most limit of them. */
int xpv_store_kernel_stats_open_top(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids, size_t n,
                                    const char *kind, int64_t limit, xpv_err *err);
/* The next row of either: 1 (row filled), 0 at the end, -1 with err. */
int xpv_store_kernel_stats_next(xpv_store_cursor *c, xpv_store_kernel_stat *row, xpv_err *err);

/* One profile, kind and device: its rows, and their summed total time
 * (total_known 0 when no row knows its total). */
typedef struct {
    int64_t rows, total_ps;
    int total_known;
    int64_t instances; /* the rows' summed count */
} xpv_store_kernel_count;
int xpv_store_kernel_stats_count(sqlite3 *db, int64_t profile_id, const char *kind, int device,
                                 xpv_store_kernel_count *out, xpv_err *err);
/* The devices (>= 0) with rows of kind, ascending; *devs malloc'ed. */
int xpv_store_kernel_stats_devices(sqlite3 *db, int64_t profile_id, const char *kind, int **devs,
                                   size_t *n, xpv_err *err);
/* 1 when any of the profiles has a row of kind, 0 when none, -1 on error. */
int xpv_store_kernel_stats_has_kind(sqlite3 *db, const int64_t *ids, size_t n, const char *kind,
                                    xpv_err *err);

/* ---- the top ops of several hosts (api/top_ops.c) ---- */

/* An all-devices kernel or XLA-op row, reduced to its time. */
typedef struct {
    int64_t profile_id;
    int xla_op;   /* 0: kind kernel, 1: kind xla_op */
    int64_t rank; /* top_rank; 0 when unranked */
    xpv_store_text name;
    int64_t total_ps; /* unknown: 0 */
} xpv_store_kernel_time;
/* Every all-devices kernel and XLA-op row of the profiles. */
int xpv_store_kernel_stats_open_times(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                      size_t n, xpv_err *err);
/* Only the ranked ones, by profile, kind (kernels first) and rank. */
int xpv_store_kernel_stats_open_ranked(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                       size_t n, xpv_err *err);
int xpv_store_kernel_stats_times_next(xpv_store_cursor *c, xpv_store_kernel_time *row,
                                      xpv_err *err);

/* Each profile's kernel_totals: per kind (0 kernel, 1 xla_op) the summed
 * time of its all-devices rows and their count of names; unranked when it
 * has rows but no totals (indexed before them). */
typedef struct {
    int64_t profile_id;
    int unranked;
    int64_t total_ps[2], names[2];
} xpv_store_kernel_totals;
int xpv_store_kernel_stats_open_totals(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                       size_t n, xpv_err *err);
int xpv_store_kernel_stats_totals_next(xpv_store_cursor *c, xpv_store_kernel_totals *row,
                                       xpv_err *err);

/* One name's all-devices time on one profile (0 when it has no row), by a
 * statement prepared once for many lookups: open, then name_time as often
 * as needed, then xpv_store_cursor_close. */
int xpv_store_kernel_stats_open_name_time(xpv_store_cursor *c, sqlite3 *db, xpv_err *err);
int xpv_store_kernel_stats_name_time(xpv_store_cursor *c, int64_t profile_id, int xla_op,
                                     const char *name, int64_t *ps, xpv_err *err);

/* ---- findings (api/findings/) ---- */

/* The profile's all-devices kernels (XLA ops when it has no kernel row)
 * with a known time, the most first (then by name), at most limit; with
 * the kind's summed time and the name's id in `strings` (0: none). */
typedef struct {
    xpv_store_text name;
    int64_t total_ps, kind_total_ps;
    int64_t name_id;
} xpv_store_kernel_hot;
int xpv_store_kernel_stats_open_hot(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                    int64_t limit, xpv_err *err);
int xpv_store_kernel_stats_hot_next(xpv_store_cursor *c, xpv_store_kernel_hot *row, xpv_err *err);

/* Per device that has a track with events (tracks.device_id), ascending:
 * the summed time of its kernel, memcpy and memset rows (compile-time ones
 * too: autotuning occupies the device) and those of extra_kind (0 when it
 * has none). */
int xpv_store_kernel_stats_open_device_busy(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                            const char *extra_kind, xpv_err *err);
int xpv_store_kernel_stats_device_busy_next(xpv_store_cursor *c, int64_t *device, int64_t *busy_ps,
                                            xpv_err *err);

#endif
