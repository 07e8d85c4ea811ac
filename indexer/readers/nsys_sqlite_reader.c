/*
 * nsys_sqlite_reader.c — the reader for `nsys export --type sqlite` files:
 * telling them from other SQLite files, then streaming GPU activity, CUDA
 * API calls and NVTX annotations into the sink (nsys_gpu.c, nsys_host.c),
 * naming GPUs, processes and threads, and recording producer facts.
 *
 * Invariants: the file is only ever opened read-only (nsys_db.c); any table
 * may be missing and any column may be absent, as nsys versions differ: a
 * capture without a kernel table is a valid profile with zero kernels.
 * Tables with a `start` column that this reader does not turn into events
 * are counted as skipped, by table name, so nothing is dropped silently.
 */
#include "readers.h"
#include "nsys_reader.h"
#include "../../common/xpv_lower_bound.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const xpv_nsys_read_tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL",
                                            "CUPTI_ACTIVITY_KIND_MEMCPY",
                                            "CUPTI_ACTIVITY_KIND_MEMSET",
                                            "CUPTI_ACTIVITY_KIND_RUNTIME",
                                            "NVTX_EVENTS",
                                            NULL};

/* ---- sniffing ---- */

static int has_bytes(const char *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0) return 1;
    return 0;
}

/* A damaged export cannot be read through SQLite, but the text of its
 * schema (CREATE TABLE statements, near the start of the file) still tells
 * what it was; claiming it lists it with SQLite's reason instead of hiding
 * it. Looks at the first MiB only. */
static int schema_text_says_nsys(const char *path)
{
    enum { SCAN_BYTES = 1 << 20 };
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char *buf = xpv_xmalloc(SCAN_BYTES);
    size_t n = fread(buf, 1, SCAN_BYTES, f);
    fclose(f);
    int found = has_bytes(buf, n, "StringIds") &&
                (has_bytes(buf, n, "CUPTI_ACTIVITY_KIND_") || has_bytes(buf, n, "NVTX_EVENTS") ||
                 has_bytes(buf, n, "TARGET_INFO_") || has_bytes(buf, n, "EXPORT_META_DATA") ||
                 has_bytes(buf, n, "META_DATA_EXPORT"));
    free(buf);
    return found;
}

/* 1 nsys tables, 0 none, -1 the catalog could not be read. */
static int catalog_says_nsys(sqlite3 *db)
{
    const char *sql =
        "SELECT (SELECT count(*) FROM sqlite_master WHERE type='table' AND name='StringIds'),"
        " (SELECT count(*) FROM sqlite_master WHERE type='table' AND"
        "  (name LIKE 'TARGET\\_INFO\\_%' ESCAPE '\\' OR"
        "   name LIKE 'CUPTI\\_ACTIVITY\\_KIND\\_%' ESCAPE '\\' OR"
        "   name IN ('NVTX_EVENTS', 'EXPORT_META_DATA', 'META_DATA_EXPORT')))";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    int found = -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        found = sqlite3_column_int(st, 0) > 0 && sqlite3_column_int(st, 1) > 0;
    sqlite3_finalize(st);
    return found;
}

/* A SQLite file is claimed only when it is an nsys export: other SQLite
 * files (an index, an app's database) are not listed at all. */
int xpv_claims_nsys_sqlite(const xpv_sniff_input *in)
{
    return xpv_sniff_is_sqlite(in) && (!in->path || xpv_nsys_sniff(in->path) != 0);
}

int xpv_nsys_sniff(const char *path)
{
    sqlite3 *db = xpv_nsys_db_open(path, NULL);
    int found = db ? catalog_says_nsys(db) : -1;
    sqlite3_close(db);
    return found >= 0 ? found : schema_text_says_nsys(path);
}

/* ---- GPU names (before events, so tracks are named on first use) ---- */

static void set_gpu_name(xpv_nsys *x, int64_t device, const char *name)
{
    if (device < 0 || device >= 65536 || !name || !*name) return;
    if ((size_t)device >= x->ngpu_names) {
        size_t n = (size_t)device + 1;
        x->gpu_names = xpv_xrealloc(x->gpu_names, n * sizeof *x->gpu_names);
        memset(x->gpu_names + x->ngpu_names, 0, (n - x->ngpu_names) * sizeof *x->gpu_names);
        x->ngpu_names = n;
    }
    if (!x->gpu_names[device]) x->gpu_names[device] = xpv_xstrdup(name);
}

/* Reads (ordinal, name) from one table: the CUDA ordinal column when the
 * version has it (CUPTI's deviceId is the CUDA ordinal), else the id. */
static int load_gpu_names_from(xpv_nsys *x, const char *table, xpv_err *err)
{
    static const char *const ordinal_cols[] = {"cuDevice", "cudaId", "deviceId", "id"};
    xpv_nsys_cols cols;
    if (xpv_nsys_cols_load(x->db, table, &cols, err) != 0) return -1;
    const char *ordinal = NULL;
    for (size_t i = 0; i < 4 && !ordinal; i++)
        if (xpv_nsys_cols_has(&cols, ordinal_cols[i])) ordinal = ordinal_cols[i];
    int has_name = xpv_nsys_cols_has(&cols, "name");
    xpv_nsys_cols_free(&cols);
    if (!ordinal || !has_name) return 0;
    const char *wanted[] = {ordinal, "name"};
    sqlite3_stmt *st;
    if (xpv_nsys_db_select(x->db, table, wanted, 2, NULL, NULL, &st, err) != 0) return -1;
    if (!st) return 0;
    int rc;
    while ((rc = xpv_nsys_step(x, st, table, err)) == SQLITE_ROW)
        if (sqlite3_column_type(st, 0) != SQLITE_NULL)
            set_gpu_name(x, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}

static int load_gpu_names(xpv_nsys *x, xpv_err *err)
{
    if (load_gpu_names_from(x, "TARGET_INFO_GPU", err) != 0) return -1;
    return load_gpu_names_from(x, "TARGET_INFO_CUDA_DEVICE", err);
}

/* 1 when the export lists CUDA streams of more than one process. */
static int detect_multi_process(xpv_nsys *x, xpv_err *err)
{
    static const char *const tables[] = {"TARGET_INFO_CUDA_STREAM", "TARGET_INFO_CUDA_NULL_STREAM"};
    static const char *const wanted[] = {"processId"};
    static const char *const required[] = {"processId", NULL};
    int64_t first = -1;
    for (size_t t = 0; t < 2 && !x->multi_process; t++) {
        sqlite3_stmt *st;
        if (xpv_nsys_db_select(x->db, tables[t], wanted, 1, required, "GROUP BY 1", &st, err) != 0)
            return -1;
        if (!st) continue;
        int rc;
        while ((rc = xpv_nsys_step(x, st, tables[t], err)) == SQLITE_ROW) {
            int64_t p = sqlite3_column_int64(st, 0);
            if (first >= 0 && p != first) x->multi_process = 1;
            first = p;
        }
        sqlite3_finalize(st);
        if (rc < 0) return -1;
    }
    return 0;
}

/* ---- host process and thread names (after events) ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int name_threads(xpv_nsys *x, xpv_err *err)
{
    static const char *const wanted[] = {"globalTid", "nameId"};
    static const char *const required[] = {"globalTid", "nameId", NULL};
    sqlite3_stmt *st;
    if (xpv_nsys_db_select(x->db, "ThreadNames", wanted, 2, required, NULL, &st, err) != 0)
        return -1;
    if (!st) return 0;
    int rc;
    while ((rc = xpv_nsys_step(x, st, "ThreadNames", err)) == SQLITE_ROW) {
        int64_t gtid = sqlite3_column_int64(st, 0);
        if (!xpv_sorted_has_i64(x->host_tids, x->nhost, gtid)) continue;
        uint32_t id = xpv_nsys_strings_column(&x->strings, st, 1);
        size_t len = 0;
        const char *name = xpv_sink_string(x->sink, id, &len);
        if (id && len)
            xpv_sink_thread_name(x->sink, xpv_nsys_pid_of(gtid), xpv_nsys_tid_of(gtid), name, len);
    }
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}

static int name_processes(xpv_nsys *x, const int64_t *gpids, size_t n, xpv_err *err)
{
    static const char *const wanted[] = {"globalPid", "pid", "name"};
    static const char *const required[] = {"globalPid", "name", NULL};
    sqlite3_stmt *st;
    if (xpv_nsys_db_select(x->db, "PROCESSES", wanted, 3, required, NULL, &st, err) != 0) return -1;
    if (!st) return 0;
    int rc;
    while ((rc = xpv_nsys_step(x, st, "PROCESSES", err)) == SQLITE_ROW) {
        int64_t gpid = sqlite3_column_int64(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 2);
        if (!name || !*name || !xpv_sorted_has_i64(gpids, n, gpid)) continue;
        char label[512];
        snprintf(label, sizeof label, "%s (pid %lld)", name, (long long)xpv_nsys_pid_of(gpid));
        xpv_sink_process_name(x->sink, xpv_nsys_pid_of(gpid), label, strlen(label));
    }
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}

/* globalPid is globalTid with the thread bits cleared. */
static int name_host_tracks(xpv_nsys *x, xpv_err *err)
{
    if (!x->nhost) return 0;
    xpv_sort(x->host_tids, x->nhost, sizeof *x->host_tids, cmp_i64);
    int64_t *gpids = xpv_xmalloc(x->nhost * sizeof *gpids);
    for (size_t i = 0; i < x->nhost; i++)
        gpids[i] = x->host_tids[i] & ~(int64_t)0xFFFFFF;
    xpv_sort(gpids, x->nhost, sizeof *gpids, cmp_i64);
    int rc = name_threads(x, err);
    if (rc == 0) rc = name_processes(x, gpids, x->nhost, err);
    free(gpids);
    return rc;
}

/* ---- facts ---- */

/* The nsys version that wrote the export, from EXPORT_META_DATA (older) or
 * META_DATA_EXPORT (newer); product version preferred over schema version. */
static void version_fact(xpv_nsys *x, const char *table)
{
    static const char *const wanted[] = {"name", "value"};
    static const char *const required[] = {"name", "value", NULL};
    sqlite3_stmt *st;
    if (xpv_nsys_db_select(x->db, table, wanted, 2, required, NULL, &st, NULL) != 0 || !st) return;
    char product[128] = "", schema[128] = "";
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        if (!k || !v) continue;
        size_t n = strlen(k);
        if (n >= 15 && strcmp(k + n - 15, "PRODUCT_VERSION") == 0)
            snprintf(product, sizeof product, "%s", v);
        else if (strcmp(k, "EXPORT_SCHEMA_VERSION") == 0 || strcmp(k, "SCHEMA_VERSION") == 0)
            snprintf(schema, sizeof schema, "%s", v);
    }
    sqlite3_finalize(st);
    if (*product) xpv_sink_fact(x->sink, "nsys_export_version", product);
    if (*schema) xpv_sink_fact(x->sink, "nsys_export_schema_version", schema);
}

/* One "device" fact per GPU the export lists, plus any GPU with activity
 * that it does not list. */
static void device_facts(xpv_nsys *x)
{
    size_t n = x->ngpu_names > x->gpu_used_cap ? x->ngpu_names : x->gpu_used_cap;
    for (size_t d = 0; d < n; d++) {
        const char *model = d < x->ngpu_names ? x->gpu_names[d] : NULL;
        int used = d < x->gpu_used_cap && x->gpu_used[d];
        char name[320];
        if (model)
            snprintf(name, sizeof name, "%s", model);
        else if (used)
            snprintf(name, sizeof name, "GPU %zu", d);
        else
            continue;
        xpv_sink_fact(x->sink, "device", name);
    }
}

static void write_facts(xpv_nsys *x)
{
    xpv_sink_fact(x->sink, "producer", "Nsight Systems");
    version_fact(x, "EXPORT_META_DATA");
    version_fact(x, "META_DATA_EXPORT");
    device_facts(x);
    if (x->negative_durations) {
        char msg[128];
        snprintf(msg, sizeof msg, "%lld activity rows end before they start (stored as 0 ns)",
                 (long long)x->negative_durations);
        xpv_sink_fact(x->sink, "warning", msg);
    }
}

/* ---- skipped tables ---- */

static int is_read_table(const char *name)
{
    for (const char *const *t = xpv_nsys_read_tables; *t; t++)
        if (strcmp(*t, name) == 0) return 1;
    return 0;
}

/* Counts the rows of every timed table (one with a `start` column) that is
 * not read into events, under the table's name. */
static int count_skipped(xpv_nsys *x, xpv_err *err)
{
    sqlite3_stmt *st;
    const char *sql = "SELECT m.name FROM sqlite_master m WHERE m.type='table' AND EXISTS"
                      " (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name='start')"
                      " ORDER BY m.name";
    if (sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "sqlite catalog: %s", sqlite3_errmsg(x->db));
    int rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name || is_read_table(name)) continue;
        xpv_buf q = {0};
        xpv_buf_puts(&q, "SELECT count(*) FROM \"");
        for (const char *p = name; *p; p++) {
            if (*p == '"') xpv_buf_putc(&q, '"');
            xpv_buf_putc(&q, *p);
        }
        xpv_buf_putc(&q, '"');
        sqlite3_stmt *cnt;
        if (sqlite3_prepare_v2(x->db, q.data, -1, &cnt, NULL) != SQLITE_OK) {
            rc = xpv_err_set(err, "counting %s: %s", name, sqlite3_errmsg(x->db));
        } else {
            int64_t rows = sqlite3_step(cnt) == SQLITE_ROW ? sqlite3_column_int64(cnt, 0) : 0;
            for (int64_t i = 0; i < rows; i++)
                xpv_sink_skipped(x->sink, name);
            sqlite3_finalize(cnt);
        }
        xpv_buf_free(&q);
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- the reader ---- */

static void nsys_free(xpv_nsys *x)
{
    xpv_nsys_strings_free(&x->strings);
    for (size_t i = 0; i < x->ngpu_names; i++)
        free(x->gpu_names[i]);
    free(x->gpu_names);
    free(x->gpu_used);
    free(x->named_tracks);
    free(x->host_tids);
    sqlite3_close(x->db);
}

static int read_all(xpv_nsys *x, xpv_err *err)
{
    if (xpv_nsys_strings_init(&x->strings, x->db, x->sink, err) != 0) return -1;
    if (load_gpu_names(x, err) != 0 || detect_multi_process(x, err) != 0) return -1;
    if (xpv_nsys_read_kernels(x, err) != 0 || xpv_nsys_read_memcpy(x, err) != 0 ||
        xpv_nsys_read_memset(x, err) != 0 || xpv_nsys_read_runtime(x, err) != 0 ||
        xpv_nsys_read_nvtx(x, err) != 0)
        return -1;
    if (name_host_tracks(x, err) != 0) return -1;
    write_facts(x);
    return count_skipped(x, err);
}

int xpv_read_nsys_sqlite(const char *path, xpv_sink *sink, xpv_err *err)
{
    xpv_nsys x;
    memset(&x, 0, sizeof x);
    x.sink = sink;
    x.db = xpv_nsys_db_open(path, err);
    if (!x.db) return -1;
    int rc = read_all(&x, err);
    if (rc != 0) {
        /* Facts still describe what was read before the failure. */
        xpv_sink_fact(sink, "producer", "Nsight Systems");
        xpv_err_prefix(err, "%s: ", path);
    }
    nsys_free(&x);
    return rc;
}
