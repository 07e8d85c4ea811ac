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
#include "profile_warnings.h"
#include "../store/profiles.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static void put_key(xpv_buf *b, const char *key)
{
    xpv_buf_printf(b, ",\"%s\":", key);
}

static void put_text(xpv_buf *b, const char *key, xpv_store_text v)
{
    put_key(b, key);
    xpv_api_put_text_opt(b, v.s, v.n);
}

static void put_int(xpv_buf *b, const char *key, const xpv_store_profile *r, int field)
{
    put_key(b, key);
    xpv_api_put_int_opt(b, xpv_store_profile_known(r, field), r->num[field]);
}

/* Columns that hold JSON text are embedded as JSON, with a fallback. */
static void put_json(xpv_buf *b, const char *key, xpv_store_text v, const char *dflt)
{
    put_key(b, key);
    xpv_buf_puts(b, v.s && *v.s ? v.s : dflt);
}

static void put_profile_object(xpv_buf *b, const xpv_store_profile *r)
{
    char hex[17];
    xpv_profile_id_hex(r->id, hex);
    xpv_buf_printf(b, "{\"id\":\"%s\"", hex);
    put_text(b, "path", r->path);
    put_text(b, "run", r->run);
    put_text(b, "host", r->host);
    put_text(b, "format", r->format);
    put_text(b, "producer", r->producer);
    put_int(b, "size_bytes", r, XPV_STORE_PROFILE_SIZE_BYTES);
    int64_t mtime_ns = r->num[XPV_STORE_PROFILE_MTIME_NS];
    time_t secs = (time_t)(mtime_ns / 1000000000LL);
    struct tm tm;
    char iso[40];
    gmtime_r(&secs, &tm);
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
    xpv_buf_printf(b, ",\"mtime\":\"%s\",\"mtime_ns\":%lld", iso, (long long)mtime_ns);
    put_text(b, "status", r->status);
    put_text(b, "error", r->error);
    xpv_buf_printf(b, ",\"partial\":%s", r->partial ? "true" : "false");
    put_int(b, "events", r, XPV_STORE_PROFILE_EVENTS);
    put_key(b, "start_us");
    int has_span = xpv_store_profile_known(r, XPV_STORE_PROFILE_START_NS);
    int64_t start = r->num[XPV_STORE_PROFILE_START_NS], end = r->num[XPV_STORE_PROFILE_END_NS];
    xpv_api_put_real_opt(b, has_span, (double)start / 1000.0);
    put_key(b, "duration_us");
    xpv_api_put_real_opt(b, has_span, (double)(end - start) / 1000.0);
    put_json(b, "devices", r->devices, "[]");
    put_json(b, "facts", r->facts, "{}");
    put_json(b, "phase_counts", r->phase_counts, "{}");
    put_text(b, "step_source", r->step_source);
    put_int(b, "step_count", r, XPV_STORE_PROFILE_STEP_COUNT);
    put_int(b, "kernel_count", r, XPV_STORE_PROFILE_KERNEL_COUNT);
    xpv_api_put_profile_warnings(b, r->warnings.s, r->warnings.s ? r->warnings.n : 0);
    put_key(b, "companion_of");
    if (!xpv_store_profile_known(r, XPV_STORE_PROFILE_COMPANION_OF)) {
        xpv_buf_puts(b, "null");
    } else {
        xpv_profile_id_hex(r->num[XPV_STORE_PROFILE_COMPANION_OF], hex);
        xpv_buf_printf(b, "\"%s\"", hex);
    }
    put_key(b, "index_seconds");
    xpv_api_put_real_opt(b, r->index_seconds_known, r->index_seconds);
    xpv_buf_putc(b, '}');
}

int xpv_api_profile(sqlite3 *db, int64_t id, xpv_buf *out)
{
    xpv_store_cursor c;
    xpv_store_profile row;
    xpv_err err = {{0}};
    int found = xpv_store_profiles_get(&c, db, id, &row, &err);
    if (found < 0) return xpv_api_error(out, 500, "%s", err.msg);
    if (!found) return xpv_api_error(out, 404, "no such profile");
    put_profile_object(out, &row);
    xpv_store_cursor_close(&c);
    return 200;
}

int xpv_api_latest_id(sqlite3 *db, int64_t *id, xpv_err *err)
{
    return xpv_store_profiles_latest(db, id, err);
}

int xpv_api_status_counts(sqlite3 *db, xpv_buf *out, xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_profiles_open_status_counts(&c, db, err) != 0) return -1;
    int64_t total = 0, n;
    xpv_buf counts = {0};
    xpv_store_text status;
    int rc;
    while ((rc = xpv_store_profiles_count_next(&c, &status, &n, err)) == 1) {
        if (counts.len) xpv_buf_putc(&counts, ',');
        xpv_buf_json_str(&counts, status.s ? status.s : "", status.s ? strlen(status.s) : 0);
        xpv_buf_printf(&counts, ":%lld", (long long)n);
        total += n;
    }
    xpv_store_cursor_close(&c);
    if (rc == 0)
        xpv_buf_printf(out, "\"profiles\":%lld,\"status_counts\":{%s}", (long long)total,
                       counts.data ? counts.data : "");
    xpv_buf_free(&counts);
    return rc;
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
    xpv_store_cursor c;
    xpv_store_profile row;
    xpv_err err = {{0}};
    if (xpv_store_profiles_open_all(&c, db, include_companions, &err) != 0)
        return xpv_api_error(out, 500, "%s", err.msg);
    xpv_buf_putc(out, '[');
    int rc, n = 0;
    for (; (rc = xpv_store_profiles_next(&c, &row, &err)) == 1; n++) {
        if (n) xpv_buf_putc(out, ',');
        put_profile_object(out, &row);
    }
    xpv_buf_putc(out, ']');
    xpv_store_cursor_close(&c);
    if (rc == 0) return 200;
    /* A list cut short by an error would pass for the whole list. */
    return xpv_api_error(out, 500, "%s", err.msg);
}

int xpv_api_profiles(sqlite3 *db, xpv_buf *out)
{
    xpv_buf_puts(out, "{\"profiles\":");
    int status = xpv_api_profile_array(db, 0, out);
    if (status != 200) return status;
    xpv_buf_putc(out, '}');
    return 200;
}
