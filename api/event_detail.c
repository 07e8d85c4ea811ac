/*
 * event_detail.c — one stored event with everything known about it (the
 * timeline's click details): times, names, track, kind and resolved args.
 * Events are named by "<block>:<index>" refs handed out by the events
 * answer; a ref from another profile is not found here. The events linked
 * to it (its launch, its device work, the trace's flows) come from flows.c.
 */
#include "api.h"
#include "api_util.h"
#include "../store/tracks.h"
#include "event_json.h"
#include "flows.h"
#include "../store/event_store.h"

#include <string.h>

static const char *kind_name(unsigned kind)
{
    static const char *const names[XPV_KIND_COUNT] = {
        "other",  "kernel", "memcpy_h2d", "memcpy_d2h", "memcpy_d2d", "memcpy_other",
        "memset", "launch", "step",       "xla_op",     "xla_module", "device_other"};
    return kind < XPV_KIND_COUNT ? names[kind] : "other";
}

typedef struct {
    sqlite3 *db;
    int64_t profile_id;
    xpv_api_strings *strings;
    xpv_buf *out;
    xpv_flow_source src;
} detail_ctx;

static void put_track(detail_ctx *d, uint32_t track)
{
    xpv_store_cursor c;
    xpv_store_track r;
    xpv_buf *b = d->out;
    xpv_buf_printf(b, ",\"track\":%u", track);
    if (xpv_store_tracks_get(&c, d->db, d->profile_id, track, &r, NULL) != 1) return;
    xpv_buf_printf(b, ",\"pid\":%lld,\"tid\":%lld,\"process\":", (long long)r.pid,
                   (long long)r.tid);
    xpv_api_put_text_opt(b, r.process_name.s, r.process_name.n);
    xpv_buf_puts(b, ",\"thread\":");
    xpv_api_put_text_opt(b, r.thread_name.s, r.thread_name.n);
    xpv_buf_puts(b, ",\"device\":");
    xpv_api_put_int_opt(b, xpv_store_track_known(&r, XPV_STORE_TRACK_DEVICE),
                        r.num[XPV_STORE_TRACK_DEVICE]);
    xpv_store_cursor_close(&c);
}

static int put_detail(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    detail_ctx *d = ctx;
    xpv_buf *b = d->out;
    char hex[17];
    size_t len;
    xpv_profile_id_hex(d->profile_id, hex);
    xpv_buf_printf(b, "{\"profile\":\"%s\",\"ref\":\"%lld:%u\"", hex, (long long)block, index);
    const char *name = xpv_api_string(d->strings, ev->name, &len);
    xpv_buf_puts(b, ",\"name\":");
    xpv_buf_json_str(b, name, len);
    xpv_buf_puts(b, ",\"cat\":");
    if (ev->cat) {
        const char *cat = xpv_api_string(d->strings, ev->cat, &len);
        xpv_buf_json_str(b, cat, len);
    } else {
        xpv_buf_puts(b, "null");
    }
    char ph[2] = {ev->ph > ' ' && ev->ph < 127 ? ev->ph : '?', 0};
    xpv_buf_puts(b, ",\"ph\":");
    xpv_buf_json_str(b, ph, 1);
    xpv_buf_printf(b, ",\"kind\":\"%s\",\"start_us\":", kind_name(ev->kind));
    xpv_api_put_us(b, ev->ts_ns);
    xpv_buf_puts(b, ",\"dur_us\":");
    if (ev->dur_ns >= 0)
        xpv_buf_json_double(b, (double)ev->dur_ps / 1e6);
    else
        xpv_buf_puts(b, "null");
    xpv_buf_puts(b, ",\"end_us\":");
    if (ev->dur_ns >= 0)
        xpv_api_put_us(b, ev->ts_ns + ev->dur_ns);
    else
        xpv_buf_puts(b, "null");
    if (ev->corr >= 0)
        xpv_buf_printf(b, ",\"correlation\":%lld", (long long)ev->corr);
    else
        xpv_buf_puts(b, ",\"correlation\":null");
    if (ev->step >= 0)
        xpv_buf_printf(b, ",\"step\":%lld", (long long)ev->step);
    else
        xpv_buf_puts(b, ",\"step\":null");
    put_track(d, ev->track);
    xpv_buf_puts(b, ",\"args\":");
    xpv_api_put_args(b, ev, d->strings, NULL);
    xpv_flow_source_note(&d->src, ev, block, index, d->strings);
    return 0;
}

int xpv_api_event(sqlite3 *db, int64_t id, int64_t block, uint32_t index, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, out);
    if (status != 200) return status;
    detail_ctx d = {db, id, xpv_api_strings_open(db, id), out, {0}};
    xpv_err err = {{0}};
    int rc = xpv_store_event_at(db, id, block, index, put_detail, &d, &err);
    if (rc == 0) {
        xpv_buf_putc(out, ',');
        rc = xpv_api_put_flows(db, id, &ps, &d.src, d.strings, out, &err);
        xpv_buf_putc(out, '}');
    }
    int names = xpv_api_strings_status(d.strings, out);
    xpv_api_strings_free(d.strings);
    if (rc == 0 && names != 200) return names;
    if (rc != 0) {
        int missing = strstr(err.msg, "no event") != NULL;
        return xpv_api_error(out, missing ? 404 : 500, "%s", err.msg);
    }
    return 200;
}
