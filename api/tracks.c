/*
 * tracks.c — a profile's processes and their threads (tracks) with names,
 * sort order, device, event counts and time span, in display order:
 * by sort index (the pid/tid when none was given), then pid/tid.
 */
#include "api.h"
#include "api_util.h"

#include <string.h>

static const char *const TRACK_SQL =
    "SELECT id, pid, tid, process_name, thread_name, process_sort, thread_sort, process_labels,"
    " device_id, events, t_min, t_max FROM tracks WHERE profile_id=?1"
    " ORDER BY coalesce(process_sort, pid), pid, coalesce(thread_sort, tid), tid, id";

static void put_process_head(xpv_buf *b, sqlite3_stmt *st)
{
    xpv_buf_printf(b, "{\"pid\":%lld,\"name\":", (long long)sqlite3_column_int64(st, 1));
    xpv_api_put_text_col(b, st, 3);
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
