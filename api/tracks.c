/*
 * tracks.c — a profile's processes and their threads (tracks) with names,
 * sort order, device, event counts and time span, in display order:
 * by sort index (the pid/tid when none was given), then pid/tid.
 *
 * Each process also gets a `title` that tells it apart from the others, as
 * Perfetto does: Kineto names the host and every GPU `python` and tells
 * them apart by process_labels ("CPU", "GPU 0"). A name no other process
 * has is its own title; a shared (or missing) name gives way to the labels
 * and, for a device, the device's name from the profile ("GPU 0 · Tesla
 * V100-DGXS-32GB"); a host keeps its name and pid ("CPU · python 25738").
 */
#include "api.h"
#include "api_util.h"

#include <string.h>

static const char *const TRACK_SQL =
    "WITH names AS (SELECT process_name AS name, count(DISTINCT pid) AS processes FROM tracks"
    " WHERE profile_id=?1 GROUP BY process_name),"
    " devs AS (SELECT CASE WHEN json_valid(devices) THEN devices END AS list FROM profiles"
    " WHERE id=?1)"
    " SELECT t.id, pid, tid, process_name, thread_name, process_sort, thread_sort, process_labels,"
    " device_id, events, t_min, t_max, names.processes,"
    " (SELECT json_extract(list, '$[' || t.device_id || ']') FROM devs WHERE t.device_id >= 0)"
    " FROM tracks t LEFT JOIN names ON names.name IS t.process_name WHERE t.profile_id=?1"
    " ORDER BY coalesce(process_sort, pid), pid, coalesce(thread_sort, tid), tid, t.id";

enum { C_PID = 1, C_NAME = 3, C_LABELS = 7, C_DEVICE = 8, C_SHARED = 12, C_DEVICE_NAME = 13 };

static const char *text_col(sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    return s && *s ? s : NULL;
}

static void put_title(xpv_buf *b, sqlite3_stmt *st)
{
    const char *name = text_col(st, C_NAME), *labels = text_col(st, C_LABELS);
    const char *device =
        sqlite3_column_type(st, C_DEVICE_NAME) == SQLITE_TEXT ? text_col(st, C_DEVICE_NAME) : NULL;
    long long pid = (long long)sqlite3_column_int64(st, C_PID);
    int is_device = sqlite3_column_type(st, C_DEVICE) != SQLITE_NULL;
    xpv_buf t = {0};
    if (name && sqlite3_column_int64(st, C_SHARED) <= 1) {
        xpv_buf_puts(&t, name);
    } else if (labels || (is_device && device)) {
        xpv_buf_puts(&t, labels ? labels : device);
        if (is_device && device && labels) xpv_buf_printf(&t, " \xc2\xb7 %s", device);
        if (!is_device) xpv_buf_printf(&t, " \xc2\xb7 %s %lld", name ? name : "pid", pid);
    } else {
        xpv_buf_printf(&t, "%s %lld", name ? name : "Process", pid);
    }
    xpv_buf_json_str(b, t.data, t.len);
    xpv_buf_free(&t);
}

static void put_process_head(xpv_buf *b, sqlite3_stmt *st)
{
    xpv_buf_printf(b, "{\"pid\":%lld,\"name\":", (long long)sqlite3_column_int64(st, 1));
    xpv_api_put_text_col(b, st, 3);
    xpv_buf_puts(b, ",\"title\":");
    put_title(b, st);
    xpv_buf_puts(b, ",\"sort_index\":");
    xpv_api_put_int_col(b, st, 5);
    xpv_buf_puts(b, ",\"device\":");
    xpv_api_put_int_col(b, st, 8);
    xpv_buf_puts(b, ",\"labels\":");
    xpv_api_put_text_col(b, st, 7);
    xpv_buf_puts(b, ",\"threads\":[");
}

static void put_thread(xpv_buf *b, sqlite3_stmt *st)
{
    xpv_buf_printf(b, "{\"id\":%lld,\"tid\":%lld,\"name\":", (long long)sqlite3_column_int64(st, 0),
                   (long long)sqlite3_column_int64(st, 2));
    xpv_api_put_text_col(b, st, 4);
    xpv_buf_puts(b, ",\"sort_index\":");
    xpv_api_put_int_col(b, st, 6);
    xpv_buf_puts(b, ",\"events\":");
    xpv_api_put_int_col(b, st, 9);
    xpv_buf_puts(b, ",\"start_us\":");
    if (sqlite3_column_type(st, 10) == SQLITE_NULL)
        xpv_buf_puts(b, "null");
    else
        xpv_api_put_us(b, sqlite3_column_int64(st, 10));
    xpv_buf_puts(b, ",\"end_us\":");
    if (sqlite3_column_type(st, 11) == SQLITE_NULL)
        xpv_buf_puts(b, "null");
    else
        xpv_api_put_us(b, sqlite3_column_int64(st, 11));
    xpv_buf_putc(b, '}');
}

int xpv_api_tracks(sqlite3 *db, int64_t id, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, out);
    if (status != 200) return status;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, TRACK_SQL, -1, &st, NULL) != SQLITE_OK)
        return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    xpv_api_put_profile_head(out, id, &ps);
    xpv_buf_puts(out, ",\"start_us\":");
    if (ps.has_span)
        xpv_api_put_us(out, ps.start_ns);
    else
        xpv_buf_puts(out, "null");
    xpv_buf_puts(out, ",\"end_us\":");
    if (ps.has_span)
        xpv_api_put_us(out, ps.end_ns);
    else
        xpv_buf_puts(out, "null");
    xpv_buf_puts(out, ",\"processes\":[");
    sqlite3_bind_int64(st, 1, id);
    int rc, nproc = 0, nthreads = 0;
    int64_t pid = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t p = sqlite3_column_int64(st, 1);
        if (nproc == 0 || p != pid) {
            if (nproc) xpv_buf_puts(out, "]},");
            put_process_head(out, st);
            pid = p;
            nproc++;
            nthreads = 0;
        }
        if (nthreads++) xpv_buf_putc(out, ',');
        put_thread(out, st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    xpv_buf_puts(out, nproc ? "]}]}" : "]}");
    return 200;
}
