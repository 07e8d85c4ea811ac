/*
 * device_busy.c — how busy the devices that ran work were, and how many of
 * the listed devices that is: the overview's "Device busy" card where a
 * profile has no step breakdown.
 *
 * A device ran work when the kernel summary holds kernel, copy or memset
 * time on it, compilation's included as the step breakdown counts
 * autotuning busy (or XLA-op time where no device has any of those: TPU). Its busy share is that
 * time over the profile's span, at most 1 (time on concurrent streams adds up); the answer's share
 * is the mean over the devices that ran work, so one busy GPU among four idle ones reads as busy as
 * it is, and devices_with_work / devices_listed says how many idled. Devices listed: the most of
 * what the profile names and what its tracks name, never fewer than those with work.
 */
#include "api.h"
#include "api_util.h"
#include "../store/kernel_stats.h"
#include "../store/profiles.h"

/* The devices the profile names (its device list), or 0; -1 with err. */
static int64_t devices_named(sqlite3 *db, int64_t id, xpv_err *err)
{
    xpv_store_cursor c;
    xpv_store_profiles_environment env;
    int rc = xpv_store_profiles_environment_get(&c, db, &id, 1, &env, err);
    int64_t n = rc == 1 && env.devices_known ? env.devices : 0;
    xpv_store_cursor_close(&c);
    return rc < 0 ? -1 : n;
}

/* One reading of the devices' work of the kernel_stats kinds kernel, memcpy,
 * memset and extra ("" for none) into out. */
static int read_busy(sqlite3 *db, int64_t id, int64_t span_ps, const char *extra,
                     xpv_device_busy *out, xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_kernel_stats_open_device_busy(&c, db, id, extra, err) != 0) return -1;
    int64_t dev, busy, tracked = 0;
    double sum = 0;
    int rc;
    while ((rc = xpv_store_kernel_stats_device_busy_next(&c, &dev, &busy, err)) == 1) {
        tracked++;
        if (busy <= 0) continue;
        out->with_work++;
        if (span_ps > 0) sum += busy >= span_ps ? 1.0 : (double)busy / (double)span_ps;
    }
    xpv_store_cursor_close(&c);
    if (out->listed < tracked) out->listed = tracked;
    out->has_fraction = out->with_work > 0 && span_ps > 0;
    out->fraction = out->has_fraction ? sum / (double)out->with_work : 0;
    return rc < 0 ? -1 : 0;
}

int xpv_api_device_busy_get(sqlite3 *db, int64_t id, int64_t span_ps, xpv_device_busy *out,
                            xpv_err *err)
{
    *out = (xpv_device_busy){0};
    out->listed = devices_named(db, id, err);
    if (out->listed < 0) return -1;
    if (read_busy(db, id, span_ps, "", out, err) != 0) return -1;
    /* no kernels, copies or memsets (TPU): the XLA ops are the device's work */
    return out->with_work ? 0 : read_busy(db, id, span_ps, "xla_op", out, err);
}

void xpv_api_put_device_busy(xpv_buf *b, const xpv_device_busy *d)
{
    xpv_buf_printf(b, "{\"devices_listed\":%lld,\"devices_with_work\":%lld,\"busy_fraction\":",
                   (long long)d->listed, (long long)d->with_work);
    if (d->has_fraction)
        xpv_buf_json_double(b, d->fraction);
    else
        xpv_buf_puts(b, "null");
    xpv_buf_putc(b, '}');
}
