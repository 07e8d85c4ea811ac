/*
 * steps.c — the step timeline from the `steps` table: one row per step with
 * its device time split by category (ps in the table, µs here).
 *
 * device -1 is the combination of all devices; ?device=N selects one.
 * The table counts a step's start from the profile's start (profiles.
 * start_ns); here start_us is absolute, in the clock of the events and
 * tracks answers, and offset_us is the same instant from the profile start.
 * memcpy_us is the sum of the four memcpy directions, which are also given
 * one by one; it is null only when every direction is unknown.
 */
#include "api.h"
#include "api_util.h"
#include "rows.h"

#include <stdio.h>
#include <string.h>

static const char *const STEP_SQL =
    "SELECT step, name, start_ps, duration_ps, compute_ps, collective_ps,"
    " CASE WHEN memcpy_h2d_ps IS NULL AND memcpy_d2h_ps IS NULL AND memcpy_d2d_ps IS NULL AND"
    " memcpy_other_ps IS NULL THEN NULL ELSE ifnull(memcpy_h2d_ps,0) + ifnull(memcpy_d2h_ps,0) +"
    " ifnull(memcpy_d2d_ps,0) + ifnull(memcpy_other_ps,0) END,"
    " memset_ps, idle_ps, host_ps, memcpy_h2d_ps, memcpy_d2h_ps, memcpy_d2d_ps, memcpy_other_ps"
    " FROM steps WHERE profile_id=?1 AND device=?2 ORDER BY step, start_ps";

static const char *const STEP_FIELDS[] = {
    "offset_us",     "duration_us",   "compute_us",    "collective_us",
    "memcpy_us",     "memset_us",     "idle_us",       "host_us",
    "memcpy_h2d_us", "memcpy_d2h_us", "memcpy_d2d_us", "memcpy_other_us",
};

static void put_step(xpv_buf *b, sqlite3_stmt *st, const xpv_api_profile_state *ps)
{
    xpv_buf_puts(b, "{\"step\":");
    xpv_api_put_int_col(b, st, 0);
    xpv_buf_puts(b, ",\"name\":");
    xpv_api_put_text_col(b, st, 1);
    xpv_buf_puts(b, ",\"start_us\":");
    if (sqlite3_column_type(st, 2) == SQLITE_NULL || !ps->has_span)
        xpv_buf_puts(b, "null");
    else
        xpv_api_put_us(b, ps->start_ns + sqlite3_column_int64(st, 2) / 1000);
    for (size_t i = 0; i < sizeof STEP_FIELDS / sizeof STEP_FIELDS[0]; i++) {
        xpv_buf_printf(b, ",\"%s\":", STEP_FIELDS[i]);
        xpv_api_put_ps_col(b, st, 2 + (int)i);
    }
    xpv_buf_putc(b, '}');
}

static void put_step_source(sqlite3 *db, int64_t id, xpv_buf *b)
{
    sqlite3_stmt *st;
    const char *src = NULL;
    if (sqlite3_prepare_v2(db, "SELECT step_source FROM profiles WHERE id=?1", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) src = (const char *)sqlite3_column_text(st, 0);
        xpv_buf_json_str(b, src ? src : "none", strlen(src ? src : "none"));
        sqlite3_finalize(st);
    } else {
        xpv_buf_puts(b, "\"none\"");
    }
}

static void put_step_devices(sqlite3 *db, int64_t id, xpv_buf *b)
{
    sqlite3_stmt *st;
    xpv_buf_puts(b, ",\"devices\":[");
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT device FROM steps WHERE profile_id=?1 AND device>=0"
                           " ORDER BY device",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        for (int n = 0; sqlite3_step(st) == SQLITE_ROW; n++)
            xpv_buf_printf(b, "%s%d", n ? "," : "", sqlite3_column_int(st, 0));
        sqlite3_finalize(st);
    }
    xpv_buf_putc(b, ']');
}

int xpv_api_steps(sqlite3 *db, int64_t id, int device, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, out);
    if (status != 200) return status;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, STEP_SQL, -1, &st, NULL) != SQLITE_OK)
        return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    xpv_api_put_profile_head(out, id, &ps);
    xpv_buf_puts(out, ",\"profile_start_us\":");
    if (ps.has_span)
        xpv_api_put_us(out, ps.start_ns);
    else
        xpv_buf_puts(out, "null");
    xpv_buf_printf(out, ",\"device\":%d,\"source\":", device);
    put_step_source(db, id, out);
    put_step_devices(db, id, out);
    xpv_buf_puts(out, ",\"steps\":[");
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, device);
    int rc, n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n++) xpv_buf_putc(out, ',');
        put_step(out, st, &ps);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return xpv_api_error(out, 500, "index: %s", sqlite3_errmsg(db));
    xpv_buf_puts(out, "]}");
    return 200;
}

static void load_step(sqlite3_stmt *st, xpv_api_step_row *r)
{
    memset(r, 0, sizeof *r);
    r->step = sqlite3_column_int64(st, 0);
    r->has_duration = sqlite3_column_type(st, 3) != SQLITE_NULL;
    r->duration_ps = sqlite3_column_int64(st, 3);
    /* compute, collective, memcpy (summed), memset, idle, host: 4..9 */
    for (int i = 0; i < XPV_STEP_NPARTS; i++) {
        if (sqlite3_column_type(st, 4 + i) == SQLITE_NULL) continue;
        r->part_ps[i] = sqlite3_column_int64(st, 4 + i);
        r->part_known |= 1u << i;
    }
}

int xpv_api_step_rows(sqlite3 *db, int64_t id, int device, xpv_api_step_row **rows, size_t *n,
                      xpv_err *err)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    *rows = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db, STEP_SQL, -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, device);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        *rows = xpv_grow_to_index(*rows, &cap, *n, sizeof **rows, 0);
        load_step(st, &(*rows)[(*n)++]);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    return 0;
}
