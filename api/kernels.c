/*
 * kernels.c — the kernel summary (and the memcpy, memset, XLA-op and
 * HLO-category summaries) from the `kernel_stats` table, as JSON or CSV.
 *
 * Durations are stored in integer picoseconds and leave here as µs numbers;
 * a NULL column is an unknown value and is written as null (empty in CSV).
 * Without an explicit kind, a profile with no kernel rows (TPU) falls back
 * to its XLA-op summary, and the answer says which kind it shows.
 */
#include "api.h"
#include "api_util.h"
#include "rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    C_NAME,
    C_CATEGORY,
    C_COUNT,
    C_TOTAL,
    C_MIN,
    C_MAX,
    C_MEDIAN,
    C_STDDEV,
    C_PERCENT,
    C_GRID,
    C_BLOCK,
    C_REGS,
    C_SHMEM,
    C_OCC,
    C_OP,
    C_SHAPES,
    C_DEVICE
};

static const char *const KERNEL_COLUMNS =
    "name, category, count, total_ps, min_ps, max_ps, median_ps, stddev_ps, percent, grid, block,"
    " registers_per_thread, shared_memory_bytes, occupancy_pct, (SELECT value FROM strings WHERE"
    " profile_id=kernel_stats.profile_id AND id=op_id), shapes, device";

int xpv_api_kernel_kind_valid(const char *kind)
{
    static const char *const kinds[] = {"kernel", "memcpy", "memset", "xla_op", "hlo_category"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kind, kinds[i]) == 0) return 1;
    return 0;
}

static const char *sort_expr(const char *sort)
{
    if (!sort || strcmp(sort, "total") == 0) return "total_ps";
    if (strcmp(sort, "count") == 0) return "count";
    if (strcmp(sort, "avg") == 0) return "CAST(total_ps AS REAL) / NULLIF(count, 0)";
    if (strcmp(sort, "max") == 0) return "max_ps";
    if (strcmp(sort, "name") == 0) return "name";
    return NULL;
}

static int64_t count_rows(sqlite3 *db, int64_t id, const char *kind, int device, int64_t *total_ps,
                          int *total_known)
{
    sqlite3_stmt *st;
    int64_t n = 0;
    *total_ps = 0;
    *total_known = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*), sum(total_ps), count(total_ps) FROM kernel_stats"
                           " WHERE profile_id=?1 AND kind=?2 AND device=?3",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, device);
    if (sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int64(st, 0);
        *total_ps = sqlite3_column_int64(st, 1);
        *total_known = sqlite3_column_int64(st, 2) > 0;
    }
    sqlite3_finalize(st);
    return n;
}

/* grid/block are stored as text; a plain [x,y,z] list is embedded as JSON. */
static void put_dims(xpv_buf *b, sqlite3_stmt *st, int col)
{
    const char *v = (const char *)sqlite3_column_text(st, col);
    if (!v) {
        xpv_buf_puts(b, "null");
        return;
    }
    size_t n = strlen(v);
    int list = n >= 2 && v[0] == '[' && v[n - 1] == ']' && strspn(v + 1, "-0123456789, ") == n - 2;
    if (list)
        xpv_buf_puts(b, v);
    else
        xpv_buf_json_str(b, v, n);
}

static void put_avg(xpv_buf *b, sqlite3_stmt *st)
{
    int64_t count = sqlite3_column_int64(st, C_COUNT);
    if (sqlite3_column_type(st, C_TOTAL) == SQLITE_NULL || count <= 0)
        xpv_buf_puts(b, "null");
    else
        xpv_buf_json_double(b, (double)sqlite3_column_int64(st, C_TOTAL) / 1e6 / (double)count);
}

static void put_percent(xpv_buf *b, sqlite3_stmt *st, int64_t kernel_ps)
{
    if (sqlite3_column_type(st, C_PERCENT) != SQLITE_NULL)
        xpv_buf_json_double(b, sqlite3_column_double(st, C_PERCENT));
    else if (sqlite3_column_type(st, C_TOTAL) != SQLITE_NULL && kernel_ps > 0)
        xpv_buf_json_double(b,
                            100.0 * (double)sqlite3_column_int64(st, C_TOTAL) / (double)kernel_ps);
    else
        xpv_buf_puts(b, "null");
}

static void put_kernel_json(xpv_buf *b, sqlite3_stmt *st, int64_t kernel_ps)
{
    xpv_buf_puts(b, "{\"name\":");
    xpv_api_put_text_col(b, st, C_NAME);
    xpv_buf_puts(b, ",\"count\":");
    xpv_api_put_int_col(b, st, C_COUNT);
    xpv_buf_puts(b, ",\"total_us\":");
    xpv_api_put_ps_col(b, st, C_TOTAL);
    xpv_buf_puts(b, ",\"avg_us\":");
    put_avg(b, st);
    xpv_buf_puts(b, ",\"median_us\":");
    xpv_api_put_ps_col(b, st, C_MEDIAN);
    xpv_buf_puts(b, ",\"min_us\":");
    xpv_api_put_ps_col(b, st, C_MIN);
    xpv_buf_puts(b, ",\"max_us\":");
    xpv_api_put_ps_col(b, st, C_MAX);
    xpv_buf_puts(b, ",\"stddev_us\":");
    xpv_api_put_ps_col(b, st, C_STDDEV);
    xpv_buf_puts(b, ",\"percent\":");
    put_percent(b, st, kernel_ps);
    xpv_buf_puts(b, ",\"device\":");
    xpv_api_put_int_col(b, st, C_DEVICE);
    xpv_buf_puts(b, ",\"op\":");
    xpv_api_put_text_col(b, st, C_OP);
    xpv_buf_puts(b, ",\"grid\":");
    put_dims(b, st, C_GRID);
    xpv_buf_puts(b, ",\"block\":");
    put_dims(b, st, C_BLOCK);
    xpv_buf_puts(b, ",\"registers_per_thread\":");
    xpv_api_put_int_col(b, st, C_REGS);
    xpv_buf_puts(b, ",\"shared_memory_bytes\":");
    xpv_api_put_int_col(b, st, C_SHMEM);
    xpv_buf_puts(b, ",\"occupancy_pct\":");
    xpv_api_put_real_col(b, st, C_OCC);
    xpv_buf_puts(b, ",\"category\":");
    xpv_api_put_text_col(b, st, C_CATEGORY);
    xpv_buf_puts(b, ",\"shapes\":");
    xpv_api_put_int_col(b, st, C_SHAPES);
    xpv_buf_putc(b, '}');
}

/* ---- CSV: same columns, RFC 4180 quoting, unknown values empty ---- */

static void csv_field(xpv_buf *b, const char *v)
{
    if (!v) return;
    if (!strpbrk(v, ",\"\r\n")) {
        xpv_buf_puts(b, v);
        return;
    }
    xpv_buf_putc(b, '"');
    for (; *v; v++) {
        if (*v == '"') xpv_buf_putc(b, '"');
        xpv_buf_putc(b, *v);
    }
    xpv_buf_putc(b, '"');
}

static const char *const CSV_HEADER =
    "name,count,total_us,avg_us,median_us,min_us,max_us,stddev_us,percent,device,op,grid,block,"
    "registers_per_thread,shared_memory_bytes,occupancy_pct,kind,category,shapes\r\n";

/* Writes one JSON value as a CSV cell: strings unquoted, null empty. */
static void csv_from_json(xpv_buf *b, void (*put)(xpv_buf *, sqlite3_stmt *, int), sqlite3_stmt *st,
                          int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL) return;
    xpv_buf tmp = {0};
    put(&tmp, st, col);
    csv_field(b, tmp.data);
    xpv_buf_free(&tmp);
}

static void put_kernel_csv(xpv_buf *b, sqlite3_stmt *st, int64_t kernel_ps, const char *kind)
{
    xpv_buf tmp = {0};
    csv_field(b, (const char *)sqlite3_column_text(st, C_NAME));
    xpv_buf_putc(b, ',');
    csv_from_json(b, xpv_api_put_int_col, st, C_COUNT);
    static const int ps_cols[] = {C_TOTAL, -1, C_MEDIAN, C_MIN, C_MAX, C_STDDEV};
    for (size_t i = 0; i < sizeof ps_cols / sizeof ps_cols[0]; i++) {
        xpv_buf_putc(b, ',');
        if (ps_cols[i] >= 0) {
            csv_from_json(b, xpv_api_put_ps_col, st, ps_cols[i]);
            continue;
        }
        xpv_buf_reset(&tmp);
        put_avg(&tmp, st);
        if (strcmp(tmp.data, "null") != 0) xpv_buf_puts(b, tmp.data);
    }
    xpv_buf_putc(b, ',');
    xpv_buf_reset(&tmp);
    put_percent(&tmp, st, kernel_ps);
    if (strcmp(tmp.data, "null") != 0) xpv_buf_puts(b, tmp.data);
    xpv_buf_putc(b, ',');
    csv_from_json(b, xpv_api_put_int_col, st, C_DEVICE);
    xpv_buf_putc(b, ',');
    csv_field(b, (const char *)sqlite3_column_text(st, C_OP));
    xpv_buf_putc(b, ',');
    csv_field(b, (const char *)sqlite3_column_text(st, C_GRID));
    xpv_buf_putc(b, ',');
    csv_field(b, (const char *)sqlite3_column_text(st, C_BLOCK));
    xpv_buf_putc(b, ',');
    csv_from_json(b, xpv_api_put_int_col, st, C_REGS);
    xpv_buf_putc(b, ',');
    csv_from_json(b, xpv_api_put_int_col, st, C_SHMEM);
    xpv_buf_putc(b, ',');
    csv_from_json(b, xpv_api_put_real_col, st, C_OCC);
    xpv_buf_putc(b, ',');
    csv_field(b, kind);
    xpv_buf_putc(b, ',');
    csv_field(b, (const char *)sqlite3_column_text(st, C_CATEGORY));
    xpv_buf_putc(b, ',');
    csv_from_json(b, xpv_api_put_int_col, st, C_SHAPES);
    xpv_buf_puts(b, "\r\n");
    xpv_buf_free(&tmp);
}

static void put_devices(sqlite3 *db, int64_t id, const char *kind, xpv_buf *b)
{
    sqlite3_stmt *st;
    xpv_buf_puts(b, ",\"devices\":[");
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT device FROM kernel_stats WHERE profile_id=?1 AND"
                           " kind=?2 AND device>=0 ORDER BY device",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
        for (int n = 0; sqlite3_step(st) == SQLITE_ROW; n++)
            xpv_buf_printf(b, "%s%d", n ? "," : "", sqlite3_column_int(st, 0));
        sqlite3_finalize(st);
    }
    xpv_buf_putc(b, ']');
}

static int write_rows(sqlite3 *db, int64_t id, const xpv_kernels_query *q, const char *kind,
                      int64_t kernel_ps, xpv_buf *out)
{
    const char *expr = sort_expr(q->sort);
    int desc = q->order_given ? q->desc : !(q->sort && strcmp(q->sort, "name") == 0);
    char sql[640];
    snprintf(sql, sizeof sql,
             "SELECT %s FROM kernel_stats WHERE profile_id=?1 AND kind=?2 AND device=?3"
             " ORDER BY %s %s NULLS LAST, name, seq LIMIT ?4",
             KERNEL_COLUMNS, expr, desc ? "DESC" : "ASC");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, q->device);
    sqlite3_bind_int64(st, 4, q->limit > 0 ? q->limit : -1);
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (q->csv) {
            put_kernel_csv(out, st, kernel_ps, kind);
        } else {
            if (n) xpv_buf_putc(out, ',');
            put_kernel_json(out, st, kernel_ps);
        }
        n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    return 200;
}

int xpv_api_kernels(sqlite3 *db, int64_t id, const xpv_kernels_query *q, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, out);
    if (status != 200) return status;
    if (!sort_expr(q->sort))
        return xpv_api_error(out, 400, "sort must be total, count, avg, max or name");
    const char *kind = q->kind ? q->kind : "kernel";
    if (!xpv_api_kernel_kind_valid(kind))
        return xpv_api_error(out, 400,
                             "kind must be kernel, memcpy, memset, xla_op or hlo_category");
    int64_t total_ps;
    int total_known;
    int64_t rows = count_rows(db, id, kind, q->device, &total_ps, &total_known);
    if (rows == 0 && !q->kind) {
        int64_t ops = count_rows(db, id, "xla_op", q->device, &total_ps, &total_known);
        if (ops > 0)
            kind = "xla_op", rows = ops;
        else
            count_rows(db, id, kind, q->device, &total_ps, &total_known);
    }
    if (rows < 0) return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    if (q->csv) {
        xpv_buf_puts(out, CSV_HEADER);
        return write_rows(db, id, q, kind, total_ps, out);
    }
    xpv_api_put_profile_head(out, id, &ps);
    xpv_buf_printf(out, ",\"kind\":\"%s\",\"device\":%d,\"kernel_time_us\":", kind, q->device);
    if (total_known)
        xpv_buf_json_double(out, (double)total_ps / 1e6);
    else
        xpv_buf_puts(out, "null");
    xpv_buf_printf(out, ",\"total_rows\":%lld", (long long)rows);
    put_devices(db, id, kind, out);
    xpv_buf_puts(out, ",\"kernels\":[");
    status = write_rows(db, id, q, kind, total_ps, out);
    if (status != 200) return status;
    xpv_buf_puts(out, "]}");
    return 200;
}

int xpv_api_kernel_rows(sqlite3 *db, int64_t id, const char *kind, int device,
                        xpv_api_kernel_row **rows, size_t *n, xpv_err *err)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT %s FROM kernel_stats WHERE profile_id=?1 AND kind=?2 AND device=?3"
             " ORDER BY name, seq",
             KERNEL_COLUMNS);
    sqlite3_stmt *st;
    size_t cap = 0;
    *rows = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, device);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, C_NAME);
        int has_total = sqlite3_column_type(st, C_TOTAL) != SQLITE_NULL;
        xpv_api_kernel_row *last = *n ? &(*rows)[*n - 1] : NULL;
        if (!last || strcmp(last->name, name ? name : "") != 0) {
            *rows = xpv_grow_to_index(*rows, &cap, *n, sizeof **rows, 0);
            last = &(*rows)[(*n)++];
            *last = (xpv_api_kernel_row){.name = xpv_xstrdup(name ? name : ""), .has_total = 1};
        }
        last->count += sqlite3_column_int64(st, C_COUNT);
        last->total_ps += sqlite3_column_int64(st, C_TOTAL);
        last->has_total = last->has_total && has_total; /* one unknown part: unknown sum */
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        xpv_api_kernel_rows_free(*rows, *n);
        *rows = NULL, *n = 0;
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    }
    return 0;
}

void xpv_api_kernel_rows_free(xpv_api_kernel_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(rows[i].name);
    free(rows);
}
