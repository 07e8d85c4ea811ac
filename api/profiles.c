/*
 * profiles.c — the profile list and profile objects.
 *
 * Profiles are listed newest first: by file modification time, then by run
 * name (XProf run names are timestamps), then by path. "latest" ranks by
 * outcome before age: ok, then partial, then anything else.
 */
#define _POSIX_C_SOURCE 200809L
#include "api.h"
#include "api_util.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define PROFILE_COLUMNS                                                                            \
    "id, path, run, host, format, producer, size_bytes, mtime_ns, status, error, partial,"         \
    " events, start_ns, end_ns, devices, facts, phase_counts, step_source, step_count,"            \
    " kernel_count, warnings, companion_of, index_seconds"
#define PROFILE_ORDER " ORDER BY mtime_ns DESC, run DESC, path"
#define LATEST_ORDER                                                                               \
    " ORDER BY " XPV_API_BEST_INDEXED ","                                                          \
    " mtime_ns DESC, run DESC, path"

static void put_key(xpv_buf *b, const char *key)
{
    xpv_buf_printf(b, ",\"%s\":", key);
}

static void put_text_col(xpv_buf *b, const char *key, sqlite3_stmt *st, int col)
{
    put_key(b, key);
    const char *v = (const char *)sqlite3_column_text(st, col);
    if (v)
        xpv_buf_json_str(b, v, (size_t)sqlite3_column_bytes(st, col));
    else
        xpv_buf_puts(b, "null");
}

static void put_int_col(xpv_buf *b, const char *key, sqlite3_stmt *st, int col)
{
    put_key(b, key);
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        xpv_buf_puts(b, "null");
    else
        xpv_buf_printf(b, "%lld", (long long)sqlite3_column_int64(st, col));
}

/* Columns that hold JSON text are embedded as JSON, with a fallback. */
static void put_json_col(xpv_buf *b, const char *key, sqlite3_stmt *st, int col, const char *dflt)
{
    put_key(b, key);
    const char *v = (const char *)sqlite3_column_text(st, col);
    xpv_buf_puts(b, v && *v ? v : dflt);
}

static void put_profile_object(xpv_buf *b, sqlite3_stmt *st)
{
    char hex[17];
    xpv_profile_id_hex(sqlite3_column_int64(st, 0), hex);
    xpv_buf_printf(b, "{\"id\":\"%s\"", hex);
    put_text_col(b, "path", st, 1);
    put_text_col(b, "run", st, 2);
    put_text_col(b, "host", st, 3);
    put_text_col(b, "format", st, 4);
    put_text_col(b, "producer", st, 5);
    put_int_col(b, "size_bytes", st, 6);
    int64_t mtime_ns = sqlite3_column_int64(st, 7);
    time_t secs = (time_t)(mtime_ns / 1000000000LL);
    struct tm tm;
    char iso[40];
    gmtime_r(&secs, &tm);
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
    xpv_buf_printf(b, ",\"mtime\":\"%s\",\"mtime_ns\":%lld", iso, (long long)mtime_ns);
    put_text_col(b, "status", st, 8);
    put_text_col(b, "error", st, 9);
    xpv_buf_printf(b, ",\"partial\":%s", sqlite3_column_int(st, 10) ? "true" : "false");
    put_int_col(b, "events", st, 11);
    put_key(b, "start_us");
    int has_span = sqlite3_column_type(st, 12) != SQLITE_NULL;
    int64_t start = sqlite3_column_int64(st, 12), end = sqlite3_column_int64(st, 13);
    if (has_span)
        xpv_buf_json_double(b, (double)start / 1000.0);
    else
        xpv_buf_puts(b, "null");
    put_key(b, "duration_us");
    if (has_span)
        xpv_buf_json_double(b, (double)(end - start) / 1000.0);
    else
        xpv_buf_puts(b, "null");
    put_json_col(b, "devices", st, 14, "[]");
    put_json_col(b, "facts", st, 15, "{}");
    put_json_col(b, "phase_counts", st, 16, "{}");
    put_text_col(b, "step_source", st, 17);
    put_int_col(b, "step_count", st, 18);
    put_int_col(b, "kernel_count", st, 19);
    put_json_col(b, "warnings", st, 20, "[]");
    put_key(b, "companion_of");
    if (sqlite3_column_type(st, 21) == SQLITE_NULL) {
        xpv_buf_puts(b, "null");
    } else {
        xpv_profile_id_hex(sqlite3_column_int64(st, 21), hex);
        xpv_buf_printf(b, "\"%s\"", hex);
    }
    put_key(b, "index_seconds");
    if (sqlite3_column_type(st, 22) == SQLITE_NULL)
        xpv_buf_puts(b, "null");
    else
        xpv_buf_json_double(b, sqlite3_column_double(st, 22));
    xpv_buf_putc(b, '}');
}

int xpv_api_profile(sqlite3 *db, int64_t id, xpv_buf *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT " PROFILE_COLUMNS " FROM profiles WHERE id=?1", -1, &st,
                           NULL) != SQLITE_OK)
        return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    int status = 200;
    if (sqlite3_step(st) == SQLITE_ROW)
        put_profile_object(out, st);
    else
        status = xpv_api_error(out, 404, "no such profile");
    sqlite3_finalize(st);
    return status;
}

int xpv_api_latest_id(sqlite3 *db, int64_t *id, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(
            db, "SELECT id FROM profiles WHERE companion_of IS NULL" LATEST_ORDER " LIMIT 1", -1,
            &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (found)
        *id = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_DONE)
        found = xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return found;
}

int xpv_api_status_counts(sqlite3 *db, xpv_buf *out, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT status, count(*) FROM profiles WHERE companion_of IS NULL"
                           " GROUP BY status ORDER BY status",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    int64_t total = 0;
    xpv_buf counts = {0};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *status = (const char *)sqlite3_column_text(st, 0);
        int64_t n = sqlite3_column_int64(st, 1);
        if (counts.len) xpv_buf_putc(&counts, ',');
        xpv_buf_json_str(&counts, status ? status : "", status ? strlen(status) : 0);
        xpv_buf_printf(&counts, ":%lld", (long long)n);
        total += n;
    }
    if (rc != SQLITE_DONE) xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        xpv_buf_printf(out, "\"profiles\":%lld,\"status_counts\":{%s}", (long long)total,
                       counts.data ? counts.data : "");
    xpv_buf_free(&counts);
    return rc == SQLITE_DONE ? 0 : -1;
}

int xpv_api_profile_latest(sqlite3 *db, xpv_buf *out)
{
    xpv_err err = {{0}};
    int64_t id = 0;
    int found = xpv_api_latest_id(db, &id, &err);
    if (found < 0) return xpv_api_error(out, 500, "%s", err.msg);
    if (!found) return xpv_api_error(out, 404, "no profiles found");
    return xpv_api_profile(db, id, out);
}

int xpv_api_profile_array(sqlite3 *db, int include_companions, xpv_buf *out)
{
    sqlite3_stmt *st;
    const char *sql = include_companions
                          ? "SELECT " PROFILE_COLUMNS " FROM profiles" PROFILE_ORDER
                          : "SELECT " PROFILE_COLUMNS
                            " FROM profiles WHERE companion_of IS NULL" PROFILE_ORDER;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    xpv_buf_putc(out, '[');
    int rc, n = 0;
    for (; (rc = sqlite3_step(st)) == SQLITE_ROW; n++) {
        if (n) xpv_buf_putc(out, ',');
        put_profile_object(out, st);
    }
    xpv_buf_putc(out, ']');
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return 200;
    /* A list cut short by an error would pass for the whole list. */
    return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
}

int xpv_api_profiles(sqlite3 *db, xpv_buf *out)
{
    xpv_buf_puts(out, "{\"profiles\":");
    int status = xpv_api_profile_array(db, 0, out);
    if (status != 200) return status;
    xpv_buf_putc(out, '}');
    return 200;
}
