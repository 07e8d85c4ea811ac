/*
 * steps.c — the step timeline from the `steps` table: one row per step with
 * its device time split by category (ps in the table, µs here).
 *
 * device -1 is the combination of all devices; ?device=N selects one.
 * The table counts a step's start from the profile's start (profiles.
 * start_ns); here start_us is absolute, in the clock of the events and
 * tracks answers, and offset_us is the same instant from the profile start.
 * memcpy_us is the sum of the four memcpy directions, which are also given
 * one by one; it is null only when every direction is unknown. compile_us
 * is the part of the step that host compile spans cover (JAX lowering and
 * XLA compilation inside the capture), autotune_us the device time of
 * compile-time work (XLA autotuning), which compute_us and memcpy_us leave
 * out (indexer/analysis/compile.c). The device categories (compute,
 * collective, the memcpy directions, memset, autotune) and idle_us add up
 * to duration_us; host_wait_us + kernel_wait_us + idle_other_us = idle_us;
 * the overlap_* fields are time the partition gave to a higher category.
 *
 * A device's rows are its own step windows. When devices mark their steps
 * apart (per-device Steps lines or module executions), a combined row is
 * the mean of its devices' rows (start_us: the earliest device's start) and
 * carries slowest_device, the device whose window was longest; the field is
 * absent when the devices share one window or all last as long. Such a
 * combined row also carries span_us, from its start to the latest device's
 * end: the step on the timeline (duration_us, the mean, is how long a step
 * takes); absent when no longer than duration_us.
 */
#include "api.h"
#include "api_util.h"
#include "rows.h"
#include "../store/steps.h"
#include "../store/profiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const STEP_FIELDS[] = {
    "offset_us",
    "duration_us",
    "compute_us",
    "collective_us",
    "memcpy_us",
    "memset_us",
    "idle_us",
    "host_wait_us",
    "kernel_wait_us",
    "idle_other_us",
    "memcpy_h2d_us",
    "memcpy_d2h_us",
    "memcpy_d2d_us",
    "memcpy_other_us",
    "compile_us",
    "autotune_us",
    "overlap_compute_collective_us",
    "overlap_copy_us",
};
#define NFIELDS (sizeof STEP_FIELDS / sizeof STEP_FIELDS[0])

/* The row's columns in STEP_FIELDS' order (memcpy summed), with the
 * known ones' bits; returns the bits. */
static unsigned step_values(const xpv_store_step *r, int64_t v[NFIELDS])
{
    static const int8_t FIELD[NFIELDS] = {
        XPV_STORE_STEP_START,
        XPV_STORE_STEP_DURATION,
        XPV_STORE_STEP_COMPUTE,
        XPV_STORE_STEP_COLLECTIVE,
        -1,
        XPV_STORE_STEP_MEMSET,
        XPV_STORE_STEP_IDLE,
        XPV_STORE_STEP_HOST_WAIT,
        XPV_STORE_STEP_KERNEL_WAIT,
        XPV_STORE_STEP_IDLE_OTHER,
        XPV_STORE_STEP_MEMCPY_H2D,
        XPV_STORE_STEP_MEMCPY_D2H,
        XPV_STORE_STEP_MEMCPY_D2D,
        XPV_STORE_STEP_MEMCPY_OTHER,
        XPV_STORE_STEP_COMPILE,
        XPV_STORE_STEP_AUTOTUNE,
        XPV_STORE_STEP_OVERLAP_COMPUTE_COLLECTIVE,
        XPV_STORE_STEP_OVERLAP_COPY,
    };
    unsigned known = 0;
    for (size_t i = 0; i < NFIELDS; i++) {
        int k = FIELD[i] < 0 ? xpv_store_step_memcpy(r, &v[i]) : xpv_store_step_known(r, FIELD[i]);
        if (FIELD[i] >= 0) v[i] = r->ps[FIELD[i]];
        known |= (unsigned)k << i;
    }
    return known;
}

static void put_step(xpv_buf *b, const xpv_store_step *r, const xpv_api_profile_state *ps)
{
    int64_t v[NFIELDS];
    unsigned known = step_values(r, v);
    xpv_buf_puts(b, "{\"step\":");
    xpv_api_put_int(b, r->step);
    xpv_buf_puts(b, ",\"name\":");
    xpv_api_put_text_opt(b, r->name.s, r->name.n);
    xpv_buf_puts(b, ",\"start_us\":");
    if (!xpv_store_step_known(r, XPV_STORE_STEP_START) || !ps->has_span)
        xpv_buf_puts(b, "null");
    else
        xpv_api_put_us(b, ps->start_ns + r->ps[XPV_STORE_STEP_START] / 1000);
    for (size_t i = 0; i < NFIELDS; i++) {
        xpv_buf_printf(b, ",\"%s\":", STEP_FIELDS[i]);
        xpv_api_put_ps_opt(b, (known >> i) & 1u, (double)v[i]);
    }
    if (r->slowest_device >= 0) xpv_buf_printf(b, ",\"slowest_device\":%d", r->slowest_device);
    int64_t span = r->span_end_ps - r->ps[XPV_STORE_STEP_START];
    if ((known & 3u) == 3u && span > r->ps[XPV_STORE_STEP_DURATION]) {
        xpv_buf_puts(b, ",\"span_us\":");
        xpv_api_put_ps_opt(b, 1, (double)span);
    }
    xpv_buf_putc(b, '}');
}

static void put_step_source(sqlite3 *db, int64_t id, xpv_buf *b)
{
    xpv_store_cursor c;
    xpv_store_profile row;
    const char *src = NULL;
    int found = xpv_store_profiles_get(&c, db, id, &row, NULL);
    if (found == 1) src = row.step_source.s;
    xpv_buf_json_str(b, src ? src : "none", strlen(src ? src : "none"));
    if (found == 1) xpv_store_cursor_close(&c);
}

static void put_step_devices(sqlite3 *db, int64_t id, xpv_buf *b)
{
    int *devs;
    size_t n;
    xpv_buf_puts(b, ",\"devices\":[");
    if (xpv_store_steps_devices(db, id, &devs, &n, NULL) == 0)
        for (size_t i = 0; i < n; i++)
            xpv_buf_printf(b, "%s%d", i ? "," : "", devs[i]);
    free(devs);
    xpv_buf_putc(b, ']');
}

int xpv_api_steps(sqlite3 *db, int64_t id, int device, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, out);
    if (status != 200) return status;
    xpv_store_cursor c;
    xpv_err err = {{0}};
    if (xpv_store_steps_open(&c, db, id, device, &err) != 0)
        return xpv_api_error(out, 500, "%s", err.msg);
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
    xpv_store_step r;
    int rc, n = 0;
    while ((rc = xpv_store_steps_next(&c, &r, &err)) == 1) {
        if (n++) xpv_buf_putc(out, ',');
        put_step(out, &r, &ps);
    }
    xpv_store_cursor_close(&c);
    if (rc != 0) return xpv_api_error(out, 500, "%s", err.msg);
    xpv_buf_puts(out, "]}");
    return 200;
}

int xpv_api_step_rows(sqlite3 *db, int64_t id, int device, xpv_api_step_row **rows, size_t *n,
                      xpv_err *err)
{
    xpv_store_cursor c;
    size_t cap = 0;
    *rows = NULL;
    *n = 0;
    if (xpv_store_steps_open(&c, db, id, device, err) != 0) return -1;
    xpv_store_step s;
    int rc;
    while ((rc = xpv_store_steps_next(&c, &s, err)) == 1) {
        int64_t v[NFIELDS];
        unsigned known = step_values(&s, v);
        *rows = xpv_grow_to_index(*rows, &cap, *n, sizeof **rows, 0);
        xpv_api_step_row *r = &(*rows)[(*n)++];
        memset(r, 0, sizeof *r);
        r->step = s.step;
        r->has_duration = (known >> 1) & 1u;
        r->duration_ps = v[1];
        /* compute, collective, memcpy (summed), memset, idle and its parts: 2..9 */
        for (int i = 0; i < XPV_STEP_NPARTS; i++) {
            if (!((known >> (2 + i)) & 1u)) continue;
            r->part_ps[i] = v[2 + i];
            r->part_known |= 1u << i;
        }
        r->compile_ps = (known >> 14) & 1u ? v[14] : 0;
        r->autotune_ps = (known >> 15) & 1u ? v[15] : 0;
    }
    xpv_store_cursor_close(&c);
    return rc == 0 ? 0 : -1;
}
