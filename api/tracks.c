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
 *
 * A GPU of a JAX profile also lists, ahead of its streams, the rows XProf
 * derives for it (device_rows.h: Steps, XLA Modules, XLA Ops), each marked
 * `"derived"` with its kind, a null tid and its span count as events.
 */
#include "api.h"
#include "api_util.h"
#include "../store/tracks.h"
#include "device_rows.h"

#include <stdlib.h>
#include <string.h>

/* s when it is a non-empty text, else NULL. */
static const char *nonempty(xpv_store_text t)
{
    return t.s && *t.s ? t.s : NULL;
}

static void put_title(xpv_buf *b, const xpv_store_track *r)
{
    const char *name = nonempty(r->process_name), *labels = nonempty(r->process_labels);
    const char *device = nonempty(r->device_name);
    long long pid = (long long)r->pid;
    int is_device = xpv_store_track_known(r, XPV_STORE_TRACK_DEVICE);
    xpv_buf t = {0};
    if (name && r->name_pids <= 1) {
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

static void put_int(xpv_buf *b, const char *key, const xpv_store_track *r, int field)
{
    xpv_buf_puts(b, key);
    xpv_api_put_int_opt(b, xpv_store_track_known(r, field), r->num[field]);
}

static void put_us(xpv_buf *b, const char *key, const xpv_store_track *r, int field)
{
    xpv_buf_puts(b, key);
    if (xpv_store_track_known(r, field))
        xpv_api_put_us(b, r->num[field]);
    else
        xpv_buf_puts(b, "null");
}

static void put_process_head(xpv_buf *b, const xpv_store_track *r)
{
    xpv_buf_printf(b, "{\"pid\":%lld,\"name\":", (long long)r->pid);
    xpv_api_put_text_opt(b, r->process_name.s, r->process_name.n);
    xpv_buf_puts(b, ",\"title\":");
    put_title(b, r);
    put_int(b, ",\"sort_index\":", r, XPV_STORE_TRACK_PROCESS_SORT);
    put_int(b, ",\"device\":", r, XPV_STORE_TRACK_DEVICE);
    xpv_buf_puts(b, ",\"labels\":");
    xpv_api_put_text_opt(b, r->process_labels.s, r->process_labels.n);
    xpv_buf_puts(b, ",\"threads\":[");
}

static void put_thread(xpv_buf *b, const xpv_store_track *r)
{
    xpv_buf_printf(b, "{\"id\":%lld,\"tid\":%lld,\"name\":", (long long)r->id, (long long)r->tid);
    xpv_api_put_text_opt(b, r->thread_name.s, r->thread_name.n);
    put_int(b, ",\"sort_index\":", r, XPV_STORE_TRACK_THREAD_SORT);
    put_int(b, ",\"events\":", r, XPV_STORE_TRACK_EVENTS);
    put_us(b, ",\"start_us\":", r, XPV_STORE_TRACK_T_MIN);
    put_us(b, ",\"end_us\":", r, XPV_STORE_TRACK_T_MAX);
    xpv_buf_putc(b, '}');
}

static void put_derived(xpv_buf *b, const xpv_devrow *row)
{
    int64_t t0 = row->spans[0].start, t1 = row->spans[0].end;
    for (size_t i = 1; i < row->n; i++)
        if (row->spans[i].end > t1) t1 = row->spans[i].end;
    xpv_buf_printf(b, "{\"id\":%lld,\"tid\":null,\"name\":\"%s\",\"sort_index\":null,",
                   (long long)row->track, xpv_devrow_title(row->kind));
    xpv_buf_printf(b, "\"events\":%zu,\"start_us\":", row->n);
    xpv_api_put_us(b, t0);
    xpv_buf_puts(b, ",\"end_us\":");
    xpv_api_put_us(b, t1);
    xpv_buf_printf(b, ",\"derived\":\"%s\"},", xpv_devrow_word(row->kind));
}

/* The derived rows of r's device not listed yet, ahead of r: the first
 * track of the device in display order. listed[i]: row i was. */
static void put_derived_before(xpv_buf *b, const xpv_devrows *d, unsigned char *listed,
                               const xpv_store_track *r)
{
    if (!xpv_store_track_known(r, XPV_STORE_TRACK_DEVICE)) return;
    for (size_t i = 0; i < d->nrows; i++) {
        const xpv_devrow *row = &d->rows[i];
        if (row->device != r->num[XPV_STORE_TRACK_DEVICE] || !row->n || listed[i]) continue;
        put_derived(b, row);
        listed[i] = 1;
    }
}

int xpv_api_tracks(sqlite3 *db, int64_t id, xpv_buf *out)
{
    return xpv_api_tracks_cached(db, id, NULL, out);
}

int xpv_api_tracks_cached(sqlite3 *db, int64_t id, xpv_devrows_cache *cache, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, out);
    if (status != 200) return status;
    xpv_store_cursor c;
    xpv_store_track r;
    xpv_err err = {{0}};
    const xpv_devrows *d = xpv_devrows_acquire(db, id, cache, &err);
    if (!d) return xpv_api_error(out, 500, "%s", err.msg);
    if (xpv_store_tracks_open_list(&c, db, id, &err) != 0) {
        xpv_devrows_release(cache, d);
        return xpv_api_error(out, 500, "%s", err.msg);
    }
    unsigned char *listed = xpv_xcalloc(d->nrows ? d->nrows : 1, 1);
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
    int rc, nproc = 0, nthreads = 0;
    int64_t pid = 0;
    while ((rc = xpv_store_tracks_next(&c, &r, &err)) == 1) {
        if (nproc == 0 || r.pid != pid) {
            if (nproc) xpv_buf_puts(out, "]},");
            put_process_head(out, &r);
            pid = r.pid;
            nproc++;
            nthreads = 0;
        }
        if (nthreads++) xpv_buf_putc(out, ',');
        put_derived_before(out, d, listed, &r);
        put_thread(out, &r);
    }
    xpv_store_cursor_close(&c);
    xpv_devrows_release(cache, d);
    free(listed);
    if (rc != 0) return xpv_api_error(out, 500, "%s", err.msg);
    xpv_buf_puts(out, nproc ? "]}]}" : "]}");
    return 200;
}
