/*
 * kernels.c — the kernel summary (and the memcpy, memset, XLA-op and
 * HLO-category summaries) from the `kernel_stats` table, as JSON or CSV.
 *
 * Durations are stored in integer picoseconds and leave here as µs numbers;
 * a NULL column is an unknown value and is written as null (empty in CSV).
 * Without an explicit kind, a profile with no kernel rows (TPU) falls back
 * to its XLA-op summary, and the answer says which kind it shows.
 *
 * The device work of compilation inside the capture (XLA autotuning; rows
 * of kind compile_<kind>, indexer/analysis/compile.c) is left out unless
 * asked for (compile=include); the answer's "compile" object says how much
 * there is either way, so nothing is left out silently.
 */
#include "api.h"
#include "api_util.h"
#include "rows.h"
#include "../store/kernel_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xpv_api_kernel_kind_valid(const char *kind)
{
    static const char *const kinds[] = {"kernel", "memcpy", "memset", "xla_op", "hlo_category"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kind, kinds[i]) == 0) return 1;
    return 0;
}

/* The sort a query names; -1 when unknown. */
static int sort_of(const char *sort)
{
    static const struct {
        const char *name;
        enum xpv_store_kernel_sort sort;
    } SORTS[] = {{"total", XPV_STORE_KSORT_TOTAL},
                 {"count", XPV_STORE_KSORT_COUNT},
                 {"avg", XPV_STORE_KSORT_AVG},
                 {"max", XPV_STORE_KSORT_MAX},
                 {"name", XPV_STORE_KSORT_NAME}};
    if (!sort) return XPV_STORE_KSORT_TOTAL;
    for (size_t i = 0; i < sizeof SORTS / sizeof SORTS[0]; i++)
        if (strcmp(sort, SORTS[i].name) == 0) return (int)SORTS[i].sort;
    return -1;
}

/* grid/block are stored as text; a plain [x,y,z] list is embedded as JSON. */
static void put_dims(xpv_buf *b, xpv_store_text t)
{
    const char *v = t.s;
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

static int known(const xpv_store_kernel_stat *r, unsigned bit)
{
    return (r->known & bit) != 0;
}

static void put_avg(xpv_buf *b, const xpv_store_kernel_stat *r)
{
    if (!known(r, XPV_STORE_KSTAT_TOTAL) || r->count <= 0)
        xpv_buf_puts(b, "null");
    else
        xpv_buf_json_double(b, (double)r->total_ps / 1e6 / (double)r->count);
}

static void put_percent(xpv_buf *b, const xpv_store_kernel_stat *r, int64_t kernel_ps)
{
    if (known(r, XPV_STORE_KSTAT_PERCENT))
        xpv_buf_json_double(b, r->percent);
    else if (known(r, XPV_STORE_KSTAT_TOTAL) && kernel_ps > 0)
        xpv_buf_json_double(b, 100.0 * (double)r->total_ps / (double)kernel_ps);
    else
        xpv_buf_puts(b, "null");
}

/* The ps columns in the answer's order (avg apart): total, median, min,
 * max, stddev. */
static void ps_values(const xpv_store_kernel_stat *r, double v[5], int k[5])
{
    v[0] = (double)r->total_ps, k[0] = known(r, XPV_STORE_KSTAT_TOTAL);
    v[1] = r->median_ps, k[1] = known(r, XPV_STORE_KSTAT_MEDIAN);
    v[2] = (double)r->min_ps, k[2] = known(r, XPV_STORE_KSTAT_MIN);
    v[3] = (double)r->max_ps, k[3] = known(r, XPV_STORE_KSTAT_MAX);
    v[4] = r->stddev_ps, k[4] = known(r, XPV_STORE_KSTAT_STDDEV);
}

static void put_kernel_json(xpv_buf *b, const xpv_store_kernel_stat *r, int64_t kernel_ps,
                            int with_compile)
{
    static const char *const PS_KEYS[5] = {
        ",\"total_us\":", ",\"median_us\":", ",\"min_us\":", ",\"max_us\":", ",\"stddev_us\":"};
    double v[5];
    int k[5];
    ps_values(r, v, k);
    xpv_buf_puts(b, "{\"name\":");
    xpv_api_put_text_opt(b, r->name.s, r->name.n);
    xpv_buf_puts(b, ",\"count\":");
    xpv_api_put_int_opt(b, known(r, XPV_STORE_KSTAT_COUNT), r->count);
    for (int i = 0; i < 5; i++) {
        xpv_buf_puts(b, PS_KEYS[i]);
        xpv_api_put_ps_opt(b, k[i], v[i]);
        if (i == 0) xpv_buf_puts(b, ",\"avg_us\":"), put_avg(b, r);
    }
    xpv_buf_puts(b, ",\"percent\":");
    put_percent(b, r, kernel_ps);
    xpv_buf_printf(b, ",\"device\":%d,\"op\":", r->device);
    xpv_api_put_text_opt(b, r->op.s, r->op.n);
    xpv_buf_puts(b, ",\"grid\":");
    put_dims(b, r->grid);
    xpv_buf_puts(b, ",\"block\":");
    put_dims(b, r->block);
    xpv_buf_puts(b, ",\"registers_per_thread\":");
    xpv_api_put_int_opt(b, known(r, XPV_STORE_KSTAT_REGS), r->registers_per_thread);
    xpv_buf_puts(b, ",\"shared_memory_bytes\":");
    xpv_api_put_int_opt(b, known(r, XPV_STORE_KSTAT_SHMEM), r->shared_memory_bytes);
    xpv_buf_puts(b, ",\"occupancy_pct\":");
    xpv_api_put_real_opt(b, known(r, XPV_STORE_KSTAT_OCCUPANCY), r->occupancy_pct);
    xpv_buf_puts(b, ",\"category\":");
    xpv_api_put_text_opt(b, r->category.s, r->category.n);
    xpv_buf_puts(b, ",\"shapes\":");
    xpv_api_put_int_opt(b, known(r, XPV_STORE_KSTAT_SHAPES), r->shapes);
    if (with_compile) xpv_buf_puts(b, r->compile ? ",\"compile\":true" : ",\"compile\":false");
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

/* A JSON number (or null) already written to tmp, as a CSV cell: null empty. */
static void csv_number(xpv_buf *b, xpv_buf *tmp)
{
    if (strcmp(tmp->data, "null") != 0) xpv_buf_puts(b, tmp->data);
    xpv_buf_reset(tmp);
}

static void put_kernel_csv(xpv_buf *b, const xpv_store_kernel_stat *r, int64_t kernel_ps,
                           const char *kind)
{
    xpv_buf tmp = {0};
    double v[5];
    int k[5];
    ps_values(r, v, k);
    csv_field(b, r->name.s);
    xpv_buf_putc(b, ',');
    xpv_api_put_int_opt(&tmp, known(r, XPV_STORE_KSTAT_COUNT), r->count);
    csv_number(b, &tmp);
    /* total, avg, median, min, max, stddev */
    for (int i = 0; i < 5; i++) {
        xpv_buf_putc(b, ',');
        xpv_api_put_ps_opt(&tmp, k[i], v[i]);
        csv_number(b, &tmp);
        if (i == 0) xpv_buf_putc(b, ','), put_avg(&tmp, r), csv_number(b, &tmp);
    }
    xpv_buf_putc(b, ',');
    put_percent(&tmp, r, kernel_ps);
    csv_number(b, &tmp);
    xpv_buf_printf(b, ",%d,", r->device);
    csv_field(b, r->op.s);
    xpv_buf_putc(b, ',');
    csv_field(b, r->grid.s);
    xpv_buf_putc(b, ',');
    csv_field(b, r->block.s);
    xpv_buf_putc(b, ',');
    xpv_api_put_int_opt(&tmp, known(r, XPV_STORE_KSTAT_REGS), r->registers_per_thread);
    csv_number(b, &tmp);
    xpv_buf_putc(b, ',');
    xpv_api_put_int_opt(&tmp, known(r, XPV_STORE_KSTAT_SHMEM), r->shared_memory_bytes);
    csv_number(b, &tmp);
    xpv_buf_putc(b, ',');
    xpv_api_put_real_opt(&tmp, known(r, XPV_STORE_KSTAT_OCCUPANCY), r->occupancy_pct);
    csv_number(b, &tmp);
    xpv_buf_putc(b, ',');
    if (r->compile) xpv_buf_puts(b, "compile_");
    csv_field(b, kind);
    xpv_buf_putc(b, ',');
    csv_field(b, r->category.s);
    xpv_buf_putc(b, ',');
    xpv_api_put_int_opt(&tmp, known(r, XPV_STORE_KSTAT_SHAPES), r->shapes);
    csv_number(b, &tmp);
    xpv_buf_puts(b, "\r\n");
    xpv_buf_free(&tmp);
}

static void put_devices(sqlite3 *db, int64_t id, const char *kind, xpv_buf *b)
{
    int *devs;
    size_t n;
    xpv_buf_puts(b, ",\"devices\":[");
    if (xpv_store_kernel_stats_devices(db, id, kind, &devs, &n, NULL) == 0)
        for (size_t i = 0; i < n; i++)
            xpv_buf_printf(b, "%s%d", i ? "," : "", devs[i]);
    free(devs);
    xpv_buf_putc(b, ']');
}

/* The device-busy summary; -1 with err when the index cannot be read (a
 * device's damaged kernel rows among the causes: the answer must say so). */
static int put_device_busy(sqlite3 *db, int64_t id, const xpv_api_profile_state *ps, xpv_buf *b,
                           xpv_err *err)
{
    xpv_device_busy d;
    int64_t span = ps->has_span ? (ps->end_ns - ps->start_ns) * 1000 : 0;
    if (xpv_api_device_busy_get(db, id, span, &d, err) != 0) return -1;
    xpv_buf_puts(b, ",\"device_busy\":");
    xpv_api_put_device_busy(b, &d);
    return 0;
}

static int write_rows(sqlite3 *db, int64_t id, const xpv_kernels_query *q, const char *kind,
                      int64_t kernel_ps, xpv_buf *out)
{
    int desc = q->order_given ? q->desc : !(q->sort && strcmp(q->sort, "name") == 0);
    xpv_store_cursor c;
    xpv_err err = {{0}};
    if (xpv_store_kernel_stats_open_with(&c, db, id, kind, q->with_compile, q->device,
                                         sort_of(q->sort), desc, q->limit > 0 ? q->limit : -1,
                                         &err) != 0)
        return xpv_api_error(out, 500, "%s", err.msg);
    xpv_store_kernel_stat r;
    int n = 0, rc;
    while ((rc = xpv_store_kernel_stats_next(&c, &r, &err)) == 1) {
        /* the stored percent is of its own rows' sum: with both, of both */
        if (q->with_compile) r.known &= ~(unsigned)XPV_STORE_KSTAT_PERCENT;
        if (q->csv) {
            put_kernel_csv(out, &r, kernel_ps, kind);
        } else {
            if (n) xpv_buf_putc(out, ',');
            put_kernel_json(out, &r, kernel_ps, q->with_compile);
        }
        n++;
    }
    xpv_store_cursor_close(&c);
    if (rc != 0) return xpv_api_error(out, 500, "%s", err.msg);
    return 200;
}

/* The rows of kind and the device, their summed time into *count; -1 on error. */
static int64_t count_rows(sqlite3 *db, int64_t id, const char *kind, int device,
                          xpv_store_kernel_count *count)
{
    return xpv_store_kernel_stats_count(db, id, kind, device, count, NULL) == 0 ? count->rows : -1;
}

/* The rows of kind's compile-time twin (kind compile_<kind>); -1 on error. */
static int64_t count_compile(sqlite3 *db, int64_t id, const char *kind, int device,
                             xpv_store_kernel_count *count)
{
    char twin[48];
    snprintf(twin, sizeof twin, "compile_%s", kind);
    return count_rows(db, id, twin, device, count);
}

/* What compile-time work there is, and whether the rows include it: the
 * default table leaves it out, and says so here. */
static void put_compile(xpv_buf *b, const xpv_store_kernel_count *twin, int included)
{
    xpv_buf_printf(b, ",\"compile\":{\"included\":%s,\"rows\":%lld,\"count\":%lld,\"us\":",
                   included ? "true" : "false", (long long)twin->rows, (long long)twin->instances);
    xpv_buf_json_double(b, (double)twin->total_ps / 1e6);
    xpv_buf_putc(b, '}');
}

int xpv_api_kernels(sqlite3 *db, int64_t id, const xpv_kernels_query *q, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, out);
    if (status != 200) return status;
    if (sort_of(q->sort) < 0)
        return xpv_api_error(out, 400, "sort must be total, count, avg, max or name");
    const char *kind = q->kind ? q->kind : "kernel";
    if (!xpv_api_kernel_kind_valid(kind))
        return xpv_api_error(out, 400,
                             "kind must be kernel, memcpy, memset, xla_op or hlo_category");
    xpv_store_kernel_count count;
    int64_t rows = count_rows(db, id, kind, q->device, &count);
    if (rows == 0 && !q->kind) {
        int64_t ops = count_rows(db, id, "xla_op", q->device, &count);
        if (ops > 0)
            kind = "xla_op", rows = ops;
        else
            count_rows(db, id, kind, q->device, &count);
    }
    if (rows < 0) return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    xpv_store_kernel_count twin;
    if (count_compile(db, id, kind, q->device, &twin) < 0)
        return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    if (q->with_compile) {
        rows += twin.rows;
        count.instances += twin.instances;
        count.total_ps += twin.total_ps;
        count.total_known |= twin.total_known;
    }
    if (q->csv) {
        xpv_buf_puts(out, CSV_HEADER);
        return write_rows(db, id, q, kind, count.total_ps, out);
    }
    xpv_api_put_profile_head(out, id, &ps);
    xpv_buf_printf(out, ",\"kind\":\"%s\",\"device\":%d,\"kernel_time_us\":", kind, q->device);
    if (count.total_known)
        xpv_buf_json_double(out, (double)count.total_ps / 1e6);
    else
        xpv_buf_puts(out, "null");
    put_compile(out, &twin, q->with_compile);
    /* with a limit, what the rows left out add up to too (a summary's cards) */
    xpv_buf_printf(out, ",\"total_rows\":%lld,\"total_count\":%lld", (long long)rows,
                   (long long)count.instances);
    put_devices(db, id, kind, out);
    xpv_err err = {{0}};
    if (put_device_busy(db, id, &ps, out, &err) != 0) return xpv_api_error(out, 500, "%s", err.msg);
    xpv_buf_puts(out, ",\"kernels\":[");
    status = write_rows(db, id, q, kind, count.total_ps, out);
    if (status != 200) return status;
    xpv_buf_puts(out, "]}");
    return 200;
}

int xpv_api_kernel_rows(sqlite3 *db, int64_t id, const char *kind, int device,
                        xpv_api_kernel_row **rows, size_t *n, xpv_err *err)
{
    xpv_store_cursor c;
    size_t cap = 0;
    *rows = NULL;
    *n = 0;
    if (xpv_store_kernel_stats_open(&c, db, id, kind, device, XPV_STORE_KSORT_KEY, 0, -1, err) != 0)
        return -1;
    xpv_store_kernel_stat r;
    int rc;
    while ((rc = xpv_store_kernel_stats_next(&c, &r, err)) == 1) {
        const char *name = r.name.s ? r.name.s : "";
        xpv_api_kernel_row *last = *n ? &(*rows)[*n - 1] : NULL;
        if (!last || strcmp(last->name, name) != 0) {
            *rows = xpv_grow_to_index(*rows, &cap, *n, sizeof **rows, 0);
            last = &(*rows)[(*n)++];
            *last = (xpv_api_kernel_row){.name = xpv_xstrdup(name), .has_total = 1};
        }
        last->count += r.count;
        last->total_ps += r.total_ps;
        /* one unknown part: unknown sum */
        last->has_total = last->has_total && known(&r, XPV_STORE_KSTAT_TOTAL);
    }
    xpv_store_cursor_close(&c);
    if (rc != 0) {
        xpv_api_kernel_rows_free(*rows, *n);
        *rows = NULL, *n = 0;
        return -1;
    }
    return 0;
}

void xpv_api_kernel_rows_free(xpv_api_kernel_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(rows[i].name);
    free(rows);
}
