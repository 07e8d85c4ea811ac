/*
 * kernel_stats.c — every read of the `kernel_stats` table and of
 * profiles.kernel_totals, and the insert of its rows (see kernel_stats.h).
 *
 * The row queries select the same columns in the same order, so one
 * reader fills a row for each; the op's name is looked up in `strings` by
 * the query itself, so a row arrives whole.
 */
#include "kernel_stats.h"
#include "kernel_device_stats.h"
#include "db.h"
#include "string_chunks.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW_VALUES(owner)                                                                          \
    "SELECT name, category, count, total_ps, min_ps, max_ps, median_ps, stddev_ps, percent, grid," \
    " block, registers_per_thread, shared_memory_bytes, occupancy_pct, (SELECT r.value FROM"       \
    " strings g, string_rows(g.first_id, g.data) r WHERE g.profile_id=" owner ".profile_id AND"    \
    " g.first_id=op_id & " XPV_STORE_STRINGS_CHUNK_MASK " AND r.id=op_id), shapes, device,"        \
    " substr(kind, 1, 8) = 'compile_'"
#define ROW_COLUMNS ROW_VALUES("kernel_stats") " FROM kernel_stats"
/* One device's rows: kernel_stats' columns from the blob, the key's from b. */
#define DEVICE_ROWS " FROM kernel_device_stats b, kernel_device_rows(b.data)"
#define DEVICE_ROW_COLUMNS ROW_VALUES("b") DEVICE_ROWS

#define IN_IDS " profile_id IN (SELECT value FROM json_each(?1))"

/* The ORDER BY expression of a sort other than KEY. */
static const char *sort_expr(enum xpv_store_kernel_sort sort)
{
    switch (sort) {
    case XPV_STORE_KSORT_COUNT:
        return "count";
    case XPV_STORE_KSORT_AVG:
        return "CAST(total_ps AS REAL) / NULLIF(count, 0)";
    case XPV_STORE_KSORT_MAX:
        return "max_ps";
    case XPV_STORE_KSORT_NAME:
        return "name";
    default:
        return "total_ps";
    }
}

int xpv_store_kernel_stats_open(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                const char *kind, int device, enum xpv_store_kernel_sort sort,
                                int desc, int64_t limit, xpv_err *err)
{
    return xpv_store_kernel_stats_open_with(c, db, profile_id, kind, 0, device, sort, desc, limit,
                                            err);
}

int xpv_store_kernel_stats_open_with(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                     const char *kind, int with_compile, int device,
                                     enum xpv_store_kernel_sort sort, int desc, int64_t limit,
                                     xpv_err *err)
{
    char sql[800];
    /* ?5 is kind's compile-time twin, or kind again */
    const char *rows = device < 0 ? ROW_COLUMNS " WHERE profile_id=?1 AND kind IN (?2, ?5)"
                                                " AND device=?3"
                                  : DEVICE_ROW_COLUMNS " WHERE b.profile_id=?1"
                                                       " AND b.kind IN (?2, ?5) AND b.device=?3";
    if (sort == XPV_STORE_KSORT_KEY)
        snprintf(sql, sizeof sql, "%s ORDER BY name, seq", rows);
    else
        snprintf(sql, sizeof sql, "%s ORDER BY %s %s NULLS LAST, name, kind, seq LIMIT ?4", rows,
                 sort_expr(sort), desc ? "DESC" : "ASC");
    if (xpv_store_cursor_open(c, db, sql, err) != 0) return -1;
    char twin[48];
    snprintf(twin, sizeof twin, "compile_%s", kind);
    sqlite3_bind_int64(c->st, 1, profile_id);
    sqlite3_bind_text(c->st, 2, kind, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(c->st, 3, device);
    if (sort != XPV_STORE_KSORT_KEY) sqlite3_bind_int64(c->st, 4, limit);
    sqlite3_bind_text(c->st, 5, with_compile ? twin : kind, -1, SQLITE_TRANSIENT);
    return 0;
}

int xpv_store_kernel_stats_open_top(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids, size_t n,
                                    const char *kind, int64_t limit, xpv_err *err)
{
    if (xpv_store_cursor_open(c, db,
                              ROW_COLUMNS " WHERE" IN_IDS " AND kind=?2 AND device=-1"
                                          " ORDER BY total_ps DESC, name LIMIT ?3",
                              err) != 0)
        return -1;
    xpv_store_bind_ids(c->st, 1, ids, n);
    sqlite3_bind_text(c->st, 2, kind, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(c->st, 3, limit);
    return 0;
}

static int64_t int_col(sqlite3_stmt *st, int col, unsigned bit, unsigned *known)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL) return 0;
    *known |= bit;
    return sqlite3_column_int64(st, col);
}

static double real_col(sqlite3_stmt *st, int col, unsigned bit, unsigned *known)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL) return 0;
    *known |= bit;
    return sqlite3_column_double(st, col);
}

int xpv_store_kernel_stats_next(xpv_store_cursor *c, xpv_store_kernel_stat *r, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    sqlite3_stmt *st = c->st;
    unsigned *k = &r->known;
    *k = 0;
    r->name = xpv_store_column_text(st, 0);
    r->category = xpv_store_column_text(st, 1);
    r->count = int_col(st, 2, XPV_STORE_KSTAT_COUNT, k);
    r->total_ps = int_col(st, 3, XPV_STORE_KSTAT_TOTAL, k);
    r->min_ps = int_col(st, 4, XPV_STORE_KSTAT_MIN, k);
    r->max_ps = int_col(st, 5, XPV_STORE_KSTAT_MAX, k);
    r->median_ps = real_col(st, 6, XPV_STORE_KSTAT_MEDIAN, k);
    r->stddev_ps = real_col(st, 7, XPV_STORE_KSTAT_STDDEV, k);
    r->percent = real_col(st, 8, XPV_STORE_KSTAT_PERCENT, k);
    r->grid = xpv_store_column_text(st, 9);
    r->block = xpv_store_column_text(st, 10);
    r->registers_per_thread = int_col(st, 11, XPV_STORE_KSTAT_REGS, k);
    r->shared_memory_bytes = int_col(st, 12, XPV_STORE_KSTAT_SHMEM, k);
    r->occupancy_pct = real_col(st, 13, XPV_STORE_KSTAT_OCCUPANCY, k);
    /* an index built before 0 meant "not measured" (kernel_stats.c) may hold it */
    if (r->occupancy_pct <= 0) *k &= ~(unsigned)XPV_STORE_KSTAT_OCCUPANCY;
    r->op = xpv_store_column_text(st, 14);
    r->shapes = int_col(st, 15, XPV_STORE_KSTAT_SHAPES, k);
    r->device = sqlite3_column_int(st, 16);
    r->compile = sqlite3_column_int(st, 17);
    return 1;
}

int xpv_store_kernel_stats_count(sqlite3 *db, int64_t profile_id, const char *kind, int device,
                                 xpv_store_kernel_count *out, xpv_err *err)
{
    xpv_store_cursor c;
    *out = (xpv_store_kernel_count){0, 0, 0, 0};
    if (xpv_store_cursor_open(
            &c, db,
            device < 0 ? "SELECT count(*), sum(total_ps), count(total_ps), sum(count)"
                         " FROM kernel_stats WHERE profile_id=?1 AND kind=?2 AND device=?3"
                       : "SELECT count(*), sum(total_ps), count(total_ps), sum(count)" DEVICE_ROWS
                         " WHERE b.profile_id=?1 AND b.kind=?2 AND b.device=?3",
            err) != 0)
        return -1;
    sqlite3_bind_int64(c.st, 1, profile_id);
    sqlite3_bind_text(c.st, 2, kind, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(c.st, 3, device);
    int rc = xpv_store_cursor_step(&c, err);
    if (rc == 1)
        *out = (xpv_store_kernel_count){
            sqlite3_column_int64(c.st, 0), sqlite3_column_int64(c.st, 1),
            sqlite3_column_int64(c.st, 2) > 0, sqlite3_column_int64(c.st, 3)};
    xpv_store_cursor_close(&c);
    return rc < 0 ? -1 : 0;
}

int xpv_store_kernel_stats_devices(sqlite3 *db, int64_t profile_id, const char *kind, int **devs,
                                   size_t *n, xpv_err *err)
{
    xpv_store_cursor c;
    *devs = NULL, *n = 0;
    if (xpv_store_cursor_open_id(&c, db,
                                 "SELECT device FROM kernel_device_stats WHERE profile_id=?1"
                                 " AND kind=?2 ORDER BY device",
                                 profile_id, err) != 0)
        return -1;
    sqlite3_bind_text(c.st, 2, kind, -1, SQLITE_TRANSIENT);
    return xpv_store_cursor_ints(&c, devs, n, err);
}

int xpv_store_kernel_stats_has_kind(sqlite3 *db, const int64_t *ids, size_t n, const char *kind,
                                    xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_cursor_open(
            &c, db, "SELECT 1 FROM kernel_stats WHERE" IN_IDS " AND kind=?2 LIMIT 1", err) != 0)
        return -1;
    xpv_store_bind_ids(c.st, 1, ids, n);
    sqlite3_bind_text(c.st, 2, kind, -1, SQLITE_TRANSIENT);
    return xpv_store_cursor_first_int(&c, NULL, err);
}

/* ---- top ops ---- */

#define TIME_COLUMNS "SELECT profile_id, kind='xla_op', top_rank, name, total_ps FROM"

int xpv_store_kernel_stats_open_times(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                      size_t n, xpv_err *err)
{
    return xpv_store_cursor_open_ids(c, db,
                                     TIME_COLUMNS " kernel_stats WHERE" IN_IDS
                                                  " AND kind IN ('kernel', 'xla_op')"
                                                  " AND device=-1",
                                     ids, n, err);
}

/* The partial index holds exactly the ranked rows, in this order. */
int xpv_store_kernel_stats_open_ranked(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                       size_t n, xpv_err *err)
{
    return xpv_store_cursor_open_ids(c, db,
                                     TIME_COLUMNS
                                     " kernel_stats INDEXED BY kernel_stats_top WHERE" IN_IDS
                                     " AND kind IN ('kernel', 'xla_op') AND top_rank IS NOT NULL"
                                     " ORDER BY profile_id, kind, top_rank",
                                     ids, n, err);
}

int xpv_store_kernel_stats_times_next(xpv_store_cursor *c, xpv_store_kernel_time *row, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    sqlite3_stmt *st = c->st;
    if (rc == 1)
        *row = (xpv_store_kernel_time){sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1),
                                       sqlite3_column_int64(st, 2), xpv_store_column_text(st, 3),
                                       sqlite3_column_int64(st, 4)};
    return rc;
}

int xpv_store_kernel_stats_open_totals(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                       size_t n, xpv_err *err)
{
    return xpv_store_cursor_open_ids(
        c, db,
        "SELECT id, kernel_totals IS NULL AND EXISTS(SELECT 1 FROM kernel_stats k WHERE"
        " k.profile_id=p.id), ifnull(json_extract(kernel_totals, '$.kernel[0]'), 0),"
        " ifnull(json_extract(kernel_totals, '$.kernel[1]'), 0),"
        " ifnull(json_extract(kernel_totals, '$.xla_op[0]'), 0),"
        " ifnull(json_extract(kernel_totals, '$.xla_op[1]'), 0) FROM profiles p WHERE id IN"
        " (SELECT value FROM json_each(?1))",
        ids, n, err);
}

int xpv_store_kernel_stats_totals_next(xpv_store_cursor *c, xpv_store_kernel_totals *row,
                                       xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    row->profile_id = sqlite3_column_int64(c->st, 0);
    row->unranked = sqlite3_column_int(c->st, 1);
    for (int kind = 0; kind < 2; kind++) {
        row->total_ps[kind] = sqlite3_column_int64(c->st, 2 + 2 * kind);
        row->names[kind] = sqlite3_column_int64(c->st, 3 + 2 * kind);
    }
    return 1;
}

int xpv_store_kernel_stats_open_name_time(xpv_store_cursor *c, sqlite3 *db, xpv_err *err)
{
    return xpv_store_cursor_open(c, db,
                                 "SELECT ifnull(sum(total_ps), 0) FROM kernel_stats WHERE"
                                 " profile_id=?1 AND kind=?2 AND device=-1 AND name=?3",
                                 err);
}

int xpv_store_kernel_stats_name_time(xpv_store_cursor *c, int64_t profile_id, int xla_op,
                                     const char *name, int64_t *ps, xpv_err *err)
{
    sqlite3_bind_int64(c->st, 1, profile_id);
    sqlite3_bind_text(c->st, 2, xla_op ? "xla_op" : "kernel", -1, SQLITE_STATIC);
    sqlite3_bind_text(c->st, 3, name, -1, SQLITE_STATIC);
    int rc = xpv_store_cursor_step(c, err);
    if (rc == 1) *ps = sqlite3_column_int64(c->st, 0);
    sqlite3_reset(c->st);
    if (rc == 0) xpv_err_set(err, "index: no sum for a name");
    return rc == 1 ? 0 : -1;
}

/* ---- findings ---- */

int xpv_store_kernel_stats_open_hot(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                    int64_t limit, xpv_err *err)
{
    if (xpv_store_cursor_open_id(
            c, db,
            "WITH k AS (SELECT CASE WHEN EXISTS(SELECT 1 FROM kernel_stats WHERE profile_id=?1 AND"
            " kind='kernel' AND device=-1) THEN 'kernel' ELSE 'xla_op' END AS kind)"
            " SELECT s.name, s.total_ps, (SELECT SUM(total_ps) FROM kernel_stats t WHERE"
            " t.profile_id=?1 AND t.kind=s.kind AND t.device=-1), (SELECT r.id FROM strings g,"
            " string_rows(g.first_id, g.data) r WHERE g.profile_id=?1 AND r.value=s.name),"
            " s.kind FROM kernel_stats s, k WHERE s.profile_id=?1 AND s.kind=k.kind AND"
            " s.device=-1 AND s.total_ps IS NOT NULL ORDER BY s.total_ps DESC, s.name LIMIT ?2",
            profile_id, err) == 0)
        sqlite3_bind_int64(c->st, 2, limit);
    return c->st ? 0 : -1;
}

int xpv_store_kernel_stats_hot_next(xpv_store_cursor *c, xpv_store_kernel_hot *row, xpv_err *err)
{
    /* a NULL kind total or name id reads as 0 */
    int rc = xpv_store_cursor_step(c, err);
    if (rc == 1)
        *row =
            (xpv_store_kernel_hot){xpv_store_column_text(c->st, 0), sqlite3_column_int64(c->st, 1),
                                   sqlite3_column_int64(c->st, 2), sqlite3_column_int64(c->st, 3)};
    return rc;
}

int xpv_store_kernel_stats_open_device_busy(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                            const char *extra_kind, xpv_err *err)
{
    if (xpv_store_cursor_open(
            c, db,
            "SELECT d.device_id, (SELECT SUM(total_ps)" DEVICE_ROWS " WHERE b.profile_id=?1"
            " AND b.device=d.device_id AND b.kind IN ('kernel','memcpy','memset','compile_kernel',"
            " 'compile_memcpy','compile_memset', ?2)) FROM"
            " (SELECT DISTINCT device_id FROM tracks WHERE profile_id=?1 AND device_id IS NOT NULL"
            " AND events > 0) d ORDER BY d.device_id",
            err) != 0)
        return -1;
    sqlite3_bind_int64(c->st, 1, profile_id);
    sqlite3_bind_text(c->st, 2, extra_kind, -1, SQLITE_TRANSIENT);
    return 0;
}

int xpv_store_kernel_stats_device_busy_next(xpv_store_cursor *c, int64_t *device, int64_t *busy_ps,
                                            xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    *device = sqlite3_column_int64(c->st, 0);
    *busy_ps = sqlite3_column_int64(c->st, 1); /* NULL: 0, no work */
    return 1;
}

/* ---- writing: rows gathered in memory, inserted once ---- */

xpv_store_kernel_row *xpv_store_kernel_rows_add(xpv_store_kernel_rows *rows)
{
    if (rows->n == rows->cap) {
        rows->cap = rows->cap ? 2 * rows->cap : 256;
        rows->v = xpv_xrealloc(rows->v, rows->cap * sizeof *rows->v);
    }
    rows->ordered = 0;
    xpv_store_kernel_row *r = &rows->v[rows->n++];
    memset(r, 0, sizeof *r);
    for (int c = 0; c < XPV_STORE_KCOL_TEXTS; c++)
        r->text[c].off = SIZE_MAX;
    return r;
}

void xpv_store_kernel_rows_text(xpv_store_kernel_rows *rows, int col, const char *s, size_t n)
{
    assert(rows->n > 0 && col >= 0 && col < XPV_STORE_KCOL_TEXTS);
    rows->v[rows->n - 1].text[col] = (xpv_store_kernel_text){rows->text.len, n};
    xpv_buf_append(&rows->text, s, n);
}

void xpv_store_kernel_rows_free(xpv_store_kernel_rows *rows)
{
    free(rows->v);
    free(rows->order);
    xpv_buf_free(&rows->text);
    memset(rows, 0, sizeof *rows);
}

/* ---- key order: texts compared once per run of rows of one name ---- */

typedef struct {
    const char *s;
    size_t len;
} text_ref;

/* SQLite's BINARY collation: bytes, then the shorter first. */
static int text_cmp(text_ref a, text_ref b)
{
    int c = memcmp(a.s, b.s, a.len < b.len ? a.len : b.len);
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

typedef struct {
    text_ref kind, name;
    size_t first, n; /* the run's rows in v */
} name_run;

static int by_kind_name(const void *pa, const void *pb)
{
    const name_run *a = pa, *b = pb;
    int c = text_cmp(a->kind, b->kind);
    return c ? c : text_cmp(a->name, b->name);
}

typedef struct {
    uint32_t kind, name; /* ranks of the row's kind, and of its (kind, name) */
    int32_t device;
    uint32_t row;
    int64_t seq;
} row_key;

static int by_key(const void *pa, const void *pb)
{
    const row_key *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;
    if (a->name != b->name) return a->name < b->name ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static text_ref row_text(const xpv_store_kernel_rows *rows, const xpv_store_kernel_row *r, int col)
{
    xpv_store_kernel_text t = r->text[col];
    assert(t.off != SIZE_MAX); /* kind and name are NOT NULL */
    return (text_ref){t.len ? rows->text.data + t.off : "", t.len};
}

/* Rows arrive in runs of one name over its devices: the runs are sorted
 * by their texts and ranked, equal texts equal ranks, so that the rows are
 * then sorted by integers only; keys[i] gets row i's key. */
static void rank_runs(const xpv_store_kernel_rows *rows, row_key *keys)
{
    name_run *runs = xpv_xcalloc(rows->n ? rows->n : 1, sizeof *runs);
    size_t nruns = 0;
    for (size_t i = 0; i < rows->n; i++) {
        text_ref kind = row_text(rows, &rows->v[i], XPV_STORE_KCOL_KIND);
        text_ref name = row_text(rows, &rows->v[i], XPV_STORE_KCOL_NAME);
        name_run *last = nruns ? &runs[nruns - 1] : NULL;
        if (last && text_cmp(last->kind, kind) == 0 && text_cmp(last->name, name) == 0)
            last->n++;
        else
            runs[nruns++] = (name_run){kind, name, i, 1};
    }
    xpv_sort(runs, nruns, sizeof *runs, by_kind_name);
    uint32_t kind_rank = 0, name_rank = 0;
    for (size_t r = 0; r < nruns; r++) {
        if (r && text_cmp(runs[r - 1].kind, runs[r].kind) != 0)
            kind_rank++, name_rank++;
        else if (r && text_cmp(runs[r - 1].name, runs[r].name) != 0)
            name_rank++;
        for (size_t i = runs[r].first; i < runs[r].first + runs[r].n; i++)
            keys[i] =
                (row_key){kind_rank, name_rank, rows->v[i].device, (uint32_t)i, rows->v[i].seq};
    }
    free(runs);
}

void xpv_store_kernel_rows_order(xpv_store_kernel_rows *rows)
{
    if (rows->ordered == rows->n && (rows->order || rows->n == 0)) return;
    assert(rows->n <= UINT32_MAX);
    size_t n = rows->n;
    row_key *keys = xpv_xcalloc(n ? n : 1, sizeof *keys);
    rank_runs(rows, keys);
    xpv_sort(keys, n, sizeof *keys, by_key);
    free(rows->order);
    rows->order = xpv_xcalloc(n ? n : 1, sizeof *rows->order);
    for (size_t i = 0; i < n; i++)
        rows->order[i] = keys[i].row;
    rows->ordered = n;
    free(keys);
}

/* ---- insert ---- */

static void bind_text(sqlite3_stmt *st, int col, const xpv_store_kernel_rows *rows,
                      xpv_store_kernel_text t)
{
    if (t.off == SIZE_MAX)
        sqlite3_bind_null(st, col);
    else
        sqlite3_bind_text(st, col, t.len ? rows->text.data + t.off : "", (int)t.len, SQLITE_STATIC);
}

static void bind_int(sqlite3_stmt *st, int col, int64_t v, unsigned known, unsigned bit)
{
    if (known & bit)
        sqlite3_bind_int64(st, col, v);
    else
        sqlite3_bind_null(st, col);
}

static void bind_real(sqlite3_stmt *st, int col, double v, unsigned known, unsigned bit)
{
    if (known & bit)
        sqlite3_bind_double(st, col, v);
    else
        sqlite3_bind_null(st, col);
}

/* A row's values but profile_id (?1), from parameter 2 on. */
static void bind_row(sqlite3_stmt *st, const xpv_store_kernel_rows *rows,
                     const xpv_store_kernel_row *r)
{
    enum { at = 2 };
    for (int c = 0; c < XPV_STORE_KCOL_TEXTS; c++)
        bind_text(st, at + c, rows, r->text[c]);
    sqlite3_bind_int(st, at + 5, r->device);
    sqlite3_bind_int64(st, at + 6, r->seq);
    sqlite3_bind_int64(st, at + 7, r->count);
    sqlite3_bind_int64(st, at + 8, r->total_ps);
    sqlite3_bind_int64(st, at + 9, r->min_ps);
    sqlite3_bind_int64(st, at + 10, r->max_ps);
    sqlite3_bind_double(st, at + 11, r->median_ps);
    sqlite3_bind_double(st, at + 12, r->stddev_ps);
    bind_real(st, at + 13, r->percent, r->known, XPV_STORE_KSTAT_PERCENT);
    bind_int(st, at + 14, r->registers_per_thread, r->known, XPV_STORE_KSTAT_REGS);
    bind_int(st, at + 15, r->shared_memory_bytes, r->known, XPV_STORE_KSTAT_SHMEM);
    bind_real(st, at + 16, r->occupancy_pct, r->known, XPV_STORE_KSTAT_OCCUPANCY);
    bind_int(st, at + 17, r->op_id, r->known, XPV_STORE_KSTAT_OP);
    bind_int(st, at + 18, r->shapes, r->known, XPV_STORE_KSTAT_SHAPES);
    bind_int(st, at + 19, r->top_rank, r->known, XPV_STORE_KSTAT_RANK);
}

/* The end of the run of rows from order[i] that share its kind and device. */
static size_t device_run_end(const xpv_store_kernel_rows *rows, size_t i)
{
    const xpv_store_kernel_row *first = &rows->v[rows->order[i]];
    text_ref kind = row_text(rows, first, XPV_STORE_KCOL_KIND);
    size_t end = i + 1;
    while (end < rows->n) {
        const xpv_store_kernel_row *r = &rows->v[rows->order[end]];
        if (r->device != first->device ||
            text_cmp(row_text(rows, r, XPV_STORE_KCOL_KIND), kind) != 0)
            break;
        end++;
    }
    return end;
}

/* One device's rows order[from .. to) as one kernel_device_stats row. */
static int write_device_rows(sqlite3_stmt *st, const xpv_store_kernel_rows *rows, size_t from,
                             size_t to, xpv_buf *blob, xpv_err *err)
{
    const xpv_store_kernel_row *first = &rows->v[rows->order[from]];
    text_ref kind = row_text(rows, first, XPV_STORE_KCOL_KIND);
    xpv_buf_reset(blob);
    xpv_store_kernel_device_stats_encode(rows, from, to, blob);
    sqlite3_bind_text(st, 2, kind.s, (int)kind.len, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, first->device);
    sqlite3_bind_blob(st, 4, blob->data, (int)blob->len, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : xpv_db_error(err, sqlite3_db_handle(st));
    sqlite3_reset(st);
    return rc;
}

static int prepare_writes(sqlite3 *db, sqlite3_stmt **all, sqlite3_stmt **device, xpv_err *err)
{
    *all = *device = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO kernel_stats(profile_id, kind, name, category, grid, block,"
                           " device, seq, count, total_ps, min_ps, max_ps, median_ps, stddev_ps,"
                           " percent, registers_per_thread, shared_memory_bytes, occupancy_pct,"
                           " op_id, shapes, top_rank) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,"
                           "?12,?13,?14,?15,?16,?17,?18,?19,?20,?21)",
                           -1, all, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO kernel_device_stats(profile_id, kind, device, data)"
                           " VALUES(?1, ?2, ?3, ?4)",
                           -1, device, NULL) != SQLITE_OK) {
        xpv_db_error(err, db);
        sqlite3_finalize(*all);
        return -1;
    }
    return 0;
}

int xpv_store_kernel_stats_write(sqlite3 *db, int64_t profile_id, xpv_store_kernel_rows *rows,
                                 xpv_err *err)
{
    if (rows->n == 0) return 0;
    xpv_store_kernel_rows_order(rows);
    sqlite3_stmt *all, *device;
    if (prepare_writes(db, &all, &device, err) != 0) return -1;
    sqlite3_bind_int64(all, 1, profile_id);
    sqlite3_bind_int64(device, 1, profile_id);
    xpv_buf blob = {0};
    int rc = 0;
    for (size_t i = 0; i < rows->n && rc == 0;) {
        const xpv_store_kernel_row *r = &rows->v[rows->order[i]];
        assert(r->device >= -1);
        if (r->device >= 0) {
            size_t end = device_run_end(rows, i);
            rc = write_device_rows(device, rows, i, end, &blob, err);
            i = end;
            continue;
        }
        bind_row(all, rows, r);
        if (sqlite3_step(all) != SQLITE_DONE) rc = xpv_db_error(err, db);
        sqlite3_reset(all);
        i++;
    }
    xpv_buf_free(&blob);
    sqlite3_finalize(all);
    sqlite3_finalize(device);
    return rc;
}
