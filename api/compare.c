/*
 * compare.c — two profiles side by side: did B get faster than A, and what
 * moved. Step time (count, median, mean, min, max, p10, p90 and every
 * duration), the step breakdown by category, the device-busy share, total
 * device time, and the kernel, XLA-op, memcpy and memset tables joined by
 * name (new and vanished names included), each figure as a delta object.
 *
 * Totals are compared per step (means over each side's steps) when both
 * sides have steps, so 6 steps against 5 of the same work reads ~0, not
 * -17%; "devices" repeats the step and device time per device both sides
 * have. A side that is missing, unread, pending, empty or without device
 * work is refused with a 4xx {"error"} naming the side and why.
 *
 * Invariants: every top-level figure comes from the steps and kernel_stats
 * rows of the combined device (-1), read by the same queries as /steps and
 * /kernels (rows.h); times are integer ps until they are written, so a
 * profile compared with itself gives deltas of exactly 0 everywhere. A side
 * that does not know a figure makes its delta null, never 0. The two
 * profiles may live in two indexes (the CLI compares two directories).
 */
#include "api.h"
#include "api_util.h"
#include "rows.h"
#include "../store/profiles.h"
#include "../store/steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sides and kinds compared. A kernel table is keyed by the kind stored in
 * kernel_stats; the answer names it by the second string. */
static const char *const TABLES[][2] = {
    {"kernel", "kernels"}, {"xla_op", "ops"}, {"memcpy", "memcpy"}, {"memset", "memset"}};
#define NTABLES (sizeof TABLES / sizeof TABLES[0])

static const char *const PART_KEYS[XPV_STEP_NPARTS] = {
    "compute_us", "collective_us", "memcpy_us",      "memset_us",
    "idle_us",    "host_wait_us",  "kernel_wait_us", "idle_other_us"};

typedef struct {
    sqlite3 *db;
    int64_t id;
    int device; /* -1: all devices combined */
    xpv_api_step_row *steps;
    size_t nsteps;
    int64_t *durs; /* the known step durations, sorted */
    size_t ndurs;
    xpv_api_kernel_row *rows[NTABLES];
    size_t nrows[NTABLES];
} side;

/* One figure of both sides, in its own unit (ps, a count, a fraction). */
typedef struct {
    int has_a, has_b;
    double a, b;
} pair;

/* What a rise means for a figure: time is slower, a count is more. */
typedef struct {
    double scale; /* divides a, b and delta on output: 1e6 turns ps into µs */
    const char *up, *down;
} unit;

static const unit TIME = {1e6, "slower", "faster"};
static const unit COUNT = {1, "more", "fewer"};
static const unit SHARE = {1, "higher", "lower"};

static pair both(int has_a, double a, int has_b, double b)
{
    return (pair){has_a, has_b, has_a ? a : 0, has_b ? b : 0};
}

static void put_num(xpv_buf *out, int has, double v, double scale)
{
    if (has)
        xpv_buf_json_double(out, v / scale);
    else
        xpv_buf_puts(out, "null");
}

/* `{"a","b","delta","relative","sign","direction"}`: delta is b - a,
 * relative (b - a) / a as a fraction (null when a is 0 or unknown). */
static void put_delta(xpv_buf *out, pair p, unit u)
{
    int known = p.has_a && p.has_b;
    double d = p.b - p.a;
    xpv_buf_puts(out, "{\"a\":");
    put_num(out, p.has_a, p.a, u.scale);
    xpv_buf_puts(out, ",\"b\":");
    put_num(out, p.has_b, p.b, u.scale);
    xpv_buf_puts(out, ",\"delta\":");
    put_num(out, known, d, u.scale);
    xpv_buf_puts(out, ",\"relative\":");
    put_num(out, known && p.a != 0, d / p.a, 1);
    if (!known) {
        xpv_buf_puts(out, ",\"sign\":null,\"direction\":null}");
        return;
    }
    int sign = (d > 0) - (d < 0);
    xpv_buf_printf(out, ",\"sign\":%d,\"direction\":\"%s\"}", sign,
                   sign > 0   ? u.up
                   : sign < 0 ? u.down
                              : "same");
}

static void put_named_delta(xpv_buf *out, const char *key, pair p, unit u)
{
    xpv_buf_printf(out, ",\"%s\":", key);
    put_delta(out, p, u);
}

/* ---- loading a side ---- */

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int load_side(side *s, xpv_err *err)
{
    if (xpv_api_step_rows(s->db, s->id, s->device, &s->steps, &s->nsteps, err) != 0) return -1;
    s->durs = xpv_xmalloc((s->nsteps ? s->nsteps : 1) * sizeof *s->durs);
    for (size_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].has_duration) s->durs[s->ndurs++] = s->steps[i].duration_ps;
    xpv_sort(s->durs, s->ndurs, sizeof *s->durs, cmp_i64);
    for (size_t t = 0; t < NTABLES; t++)
        if (xpv_api_kernel_rows(s->db, s->id, TABLES[t][0], s->device, &s->rows[t], &s->nrows[t],
                                err))
            return -1;
    return 0;
}

static void free_side(side *s)
{
    free(s->steps);
    free(s->durs);
    for (size_t t = 0; t < NTABLES; t++)
        xpv_api_kernel_rows_free(s->rows[t], s->nrows[t]);
}

/* ---- step time ---- */

static int has_steps(const side *s)
{
    return s->ndurs > 0;
}

/* The median: the middle duration, or the mean of the middle two. */
static double median(const side *s)
{
    size_t m = s->ndurs / 2;
    return s->ndurs % 2 ? (double)s->durs[m] : ((double)s->durs[m - 1] + (double)s->durs[m]) / 2;
}

/* Nearest rank: the smallest duration with at least pct% at or below it. */
static double rank(const side *s, int pct)
{
    size_t r = ((size_t)pct * s->ndurs + 99) / 100;
    return (double)s->durs[r ? r - 1 : 0];
}

static double mean(const side *s)
{
    int64_t sum = 0;
    for (size_t i = 0; i < s->ndurs; i++)
        sum += s->durs[i];
    return (double)sum / (double)s->ndurs;
}

static pair stat(const side *a, const side *b, double (*f)(const side *))
{
    return both(has_steps(a), has_steps(a) ? f(a) : 0, has_steps(b), has_steps(b) ? f(b) : 0);
}

static double min_of(const side *s)
{
    return (double)s->durs[0];
}
static double max_of(const side *s)
{
    return (double)s->durs[s->ndurs - 1];
}
static double p10(const side *s)
{
    return rank(s, 10);
}
static double p90(const side *s)
{
    return rank(s, 90);
}

static void put_durations(xpv_buf *out, const side *s)
{
    xpv_buf_putc(out, '[');
    for (size_t i = 0; i < s->nsteps; i++) {
        if (i) xpv_buf_putc(out, ',');
        if (s->steps[i].has_duration)
            xpv_buf_json_double(out, (double)s->steps[i].duration_ps / 1e6);
        else
            xpv_buf_puts(out, "null");
    }
    xpv_buf_putc(out, ']');
}

static void put_step_time(xpv_buf *out, const side *a, const side *b)
{
    xpv_buf_puts(out, ",\"step_time\":{\"count\":");
    put_delta(out, both(1, (double)a->nsteps, 1, (double)b->nsteps), COUNT);
    put_named_delta(out, "median_us", stat(a, b, median), TIME);
    put_named_delta(out, "mean_us", stat(a, b, mean), TIME);
    put_named_delta(out, "min_us", stat(a, b, min_of), TIME);
    put_named_delta(out, "max_us", stat(a, b, max_of), TIME);
    put_named_delta(out, "p10_us", stat(a, b, p10), TIME);
    put_named_delta(out, "p90_us", stat(a, b, p90), TIME);
    xpv_buf_puts(out, ",\"durations_us\":{\"a\":");
    put_durations(out, a);
    xpv_buf_puts(out, ",\"b\":");
    put_durations(out, b);
    xpv_buf_puts(out, "}}");
}

/* ---- breakdown, busy share, device time ---- */

/* Mean per step of one category; unknown unless every step knows it. */
static int part_mean(const side *s, int part, double *v)
{
    int64_t sum = 0;
    if (!s->nsteps) return 0;
    for (size_t i = 0; i < s->nsteps; i++) {
        if (!(s->steps[i].part_known & (1u << part))) return 0;
        sum += s->steps[i].part_ps[part];
    }
    *v = (double)sum / (double)s->nsteps;
    return 1;
}

/* Share of step time some device was busy: 1 - idle / duration, summed
 * over the steps, as the overview's "Device busy" card. */
static int busy_share(const side *s, double *v)
{
    int64_t span = 0, idle = 0;
    for (size_t i = 0; i < s->nsteps; i++) {
        const xpv_api_step_row *r = &s->steps[i];
        if (!r->has_duration || !(r->part_known & (1u << XPV_STEP_IDLE))) return 0;
        span += r->duration_ps;
        idle +=
            r->part_ps[XPV_STEP_IDLE] < r->duration_ps ? r->part_ps[XPV_STEP_IDLE] : r->duration_ps;
    }
    if (span <= 0) return 0;
    *v = (double)(span - idle) / (double)span;
    return 1;
}

static int table_total(const side *s, size_t t, int64_t *total)
{
    for (size_t i = 0; i < s->nrows[t]; i++) {
        if (!s->rows[t][i].has_total) return 0;
        *total += s->rows[t][i].total_ps;
    }
    return 1;
}

/* Kernels, copies and memsets; XLA ops where there is none of those (TPU).
 * Unknown when no row says, or one row's total is unknown. */
static int device_time(const side *s, double *v)
{
    int64_t total = 0;
    size_t rows = s->nrows[0] + s->nrows[2] + s->nrows[3];
    int known =
        rows ? table_total(s, 0, &total) && table_total(s, 2, &total) && table_total(s, 3, &total)
             : s->nrows[1] && table_total(s, 1, &total);
    *v = (double)total;
    return known;
}

static pair side_pair(const side *a, const side *b, int (*f)(const side *, double *))
{
    double va = 0, vb = 0;
    int ha = f(a, &va), hb = f(b, &vb);
    return both(ha, va, hb, vb);
}

/* ---- per step ---- */

/* Totals are compared per step when both sides have steps: 6 steps against
 * 5 of the same work is then ~0, not the -17% of the totals. */
static int by_step(const side *a, const side *b)
{
    return a->nsteps > 0 && b->nsteps > 0;
}

/* A pair of totals as means per step; a side without steps does not know. */
static pair per_step(pair total, const side *a, const side *b)
{
    int ha = total.has_a && a->nsteps, hb = total.has_b && b->nsteps;
    return both(ha, ha ? total.a / (double)a->nsteps : 0, hb, hb ? total.b / (double)b->nsteps : 0);
}

static void put_normalise(xpv_buf *out, const side *a, const side *b)
{
    xpv_buf_printf(out,
                   ",\"per_step\":{\"normalised\":%s,\"steps\":{\"a\":%zu,\"b\":%zu},\"note\":",
                   by_step(a, b) ? "true" : "false", a->nsteps, b->nsteps);
    if (by_step(a, b))
        xpv_buf_puts(out, "null}");
    else
        xpv_buf_printf(out,
                       "\"%s: per-step figures are unknown and the totals are compared as "
                       "they are, whatever the two profiles' lengths\"}",
                       !a->nsteps && !b->nsteps ? "Neither profile has steps"
                       : !a->nsteps             ? "A has no steps"
                                                : "B has no steps");
}

static void put_totals(xpv_buf *out, const side *a, const side *b)
{
    xpv_buf_puts(out, ",\"breakdown\":{");
    for (int p = 0; p < XPV_STEP_NPARTS; p++) {
        double va = 0, vb = 0;
        int ha = part_mean(a, p, &va), hb = part_mean(b, p, &vb);
        xpv_buf_printf(out, "%s\"%s\":", p ? "," : "", PART_KEYS[p]);
        put_delta(out, both(ha, va, hb, vb), TIME);
    }
    xpv_buf_putc(out, '}');
    put_named_delta(out, "device_busy_fraction", side_pair(a, b, busy_share), SHARE);
    pair dev = side_pair(a, b, device_time);
    put_named_delta(out, "device_time_us", dev, TIME);
    put_named_delta(out, "device_time_per_step_us", per_step(dev, a, b), TIME);
    /* The CI gate's figure: median step time where both sides have steps. */
    int steps = has_steps(a) && has_steps(b);
    xpv_buf_printf(
        out, ",\"gate\":{\"metric\":\"%s\",\"value\":", steps ? "median_step_time" : "device_time");
    put_delta(out, steps ? stat(a, b, median) : dev, TIME);
    xpv_buf_putc(out, '}');
}

/* ---- the tables, joined by name ---- */

typedef struct {
    const xpv_api_kernel_row *a, *b; /* NULL: the side did not run it */
    double key; /* |per-step delta| (|total delta| without steps) in ps, -1 unknown */
} joined;

static pair row_pair(const joined *j, int avg)
{
    const xpv_api_kernel_row *r[2] = {j->a, j->b};
    int has[2];
    double v[2];
    for (int i = 0; i < 2; i++) {
        if (!avg) {
            has[i] = !r[i] || r[i]->has_total;
            v[i] = r[i] ? (double)r[i]->total_ps : 0;
        } else {
            has[i] = r[i] && r[i]->has_total && r[i]->count > 0;
            v[i] = has[i] ? (double)r[i]->total_ps / (double)r[i]->count : 0;
        }
    }
    return both(has[0], v[0], has[1], v[1]);
}

static int cmp_joined(const void *x, const void *y)
{
    const joined *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? 1 : -1;
    const char *na = a->a ? a->a->name : a->b->name, *nb = b->a ? b->a->name : b->b->name;
    return strcmp(na, nb);
}

static void put_row(xpv_buf *out, const joined *j, const side *a, const side *b)
{
    const char *name = j->a ? j->a->name : j->b->name;
    pair count = both(1, j->a ? (double)j->a->count : 0, 1, j->b ? (double)j->b->count : 0);
    xpv_buf_puts(out, "{\"name\":");
    xpv_buf_json_str(out, name, strlen(name));
    xpv_buf_printf(out, ",\"status\":\"%s\",\"count\":",
                   j->a && j->b ? "both"
                   : j->a       ? "vanished"
                                : "new");
    put_delta(out, count, COUNT);
    put_named_delta(out, "count_per_step", per_step(count, a, b), COUNT);
    put_named_delta(out, "total_us", row_pair(j, 0), TIME);
    put_named_delta(out, "per_step_us", per_step(row_pair(j, 0), a, b), TIME);
    put_named_delta(out, "avg_us", row_pair(j, 1), TIME);
    xpv_buf_putc(out, '}');
}

/* Merges the two name-sorted tables into *out; returns the row count. */
static size_t join_rows(const side *a, const side *b, size_t t, joined **out)
{
    size_t i = 0, k = 0, n = 0;
    *out = xpv_xmalloc((a->nrows[t] + b->nrows[t] + 1) * sizeof **out);
    while (i < a->nrows[t] || k < b->nrows[t]) {
        int c = i == a->nrows[t]   ? 1
                : k == b->nrows[t] ? -1
                                   : strcmp(a->rows[t][i].name, b->rows[t][k].name);
        joined *j = &(*out)[n++];
        j->a = c <= 0 ? &a->rows[t][i++] : NULL;
        j->b = c >= 0 ? &b->rows[t][k++] : NULL;
        pair p = by_step(a, b) ? per_step(row_pair(j, 0), a, b) : row_pair(j, 0);
        j->key = p.has_a && p.has_b ? fabs(p.b - p.a) : -1;
    }
    xpv_sort(*out, n, sizeof **out, cmp_joined);
    return n;
}

static void put_table(xpv_buf *out, const side *a, const side *b, size_t t)
{
    joined *rows;
    size_t n = join_rows(a, b, t, &rows), added = 0, gone = 0;
    for (size_t i = 0; i < n; i++)
        added += !rows[i].a, gone += !rows[i].b;
    int64_t ta = 0, tb = 0;
    int ha = table_total(a, t, &ta), hb = table_total(b, t, &tb);
    xpv_buf_printf(out, ",\"%s\":{\"kind\":\"%s\",\"total_us\":", TABLES[t][1], TABLES[t][0]);
    pair total = both(ha, (double)ta, hb, (double)tb);
    put_delta(out, total, TIME);
    put_named_delta(out, "per_step_us", per_step(total, a, b), TIME);
    xpv_buf_puts(out, ",\"names\":");
    put_delta(out, both(1, (double)a->nrows[t], 1, (double)b->nrows[t]), COUNT);
    xpv_buf_printf(out, ",\"new\":%zu,\"vanished\":%zu,\"rows\":[", added, gone);
    for (size_t i = 0; i < n; i++) {
        if (i) xpv_buf_putc(out, ',');
        put_row(out, &rows[i], a, b);
    }
    xpv_buf_puts(out, "]}");
    free(rows);
}

/* ---- per device ---- */

static int has_int(const int *v, size_t n, int x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x) return 1;
    return 0;
}

/* One device both sides have: its step time and device time per step. */
static int put_device(xpv_buf *out, const side *a, const side *b, int dev, xpv_err *err)
{
    side da = {.db = a->db, .id = a->id, .device = dev};
    side db = {.db = b->db, .id = b->id, .device = dev};
    int rc = load_side(&da, err) == 0 && load_side(&db, err) == 0 ? 0 : -1;
    if (rc == 0) {
        xpv_buf_printf(out, "{\"device\":%d,\"steps\":", dev);
        put_delta(out, both(1, (double)da.nsteps, 1, (double)db.nsteps), COUNT);
        put_named_delta(out, "median_us", stat(&da, &db, median), TIME);
        put_named_delta(out, "mean_us", stat(&da, &db, mean), TIME);
        pair time = side_pair(&da, &db, device_time);
        put_named_delta(out, "device_time_us", time, TIME);
        put_named_delta(out, "device_time_per_step_us", per_step(time, &da, &db), TIME);
        xpv_buf_putc(out, '}');
    }
    free_side(&da);
    free_side(&db);
    return rc;
}

/* "devices": the devices with steps on both sides, ascending. */
static int put_devices(xpv_buf *out, const side *a, const side *b, xpv_err *err)
{
    int *da = NULL, *db = NULL;
    size_t na = 0, nb = 0, put = 0;
    int rc = xpv_store_steps_devices(a->db, a->id, &da, &na, err) == 0 &&
                     xpv_store_steps_devices(b->db, b->id, &db, &nb, err) == 0
                 ? 0
                 : -1;
    xpv_buf_puts(out, ",\"devices\":[");
    for (size_t i = 0; rc == 0 && i < na; i++) {
        if (!has_int(db, nb, da[i])) continue;
        if (put++) xpv_buf_putc(out, ',');
        rc = put_device(out, a, b, da[i], err);
    }
    xpv_buf_putc(out, ']');
    free(da);
    free(db);
    return rc;
}

/* ---- refusing a side ---- */

/* A side that cannot be compared: missing, unread, empty. 200 when fine,
 * else the status with {"error"} naming the side and what is wrong. */
static int check_side(sqlite3 *db, int64_t id, const char *key, char *path, size_t path_len,
                      xpv_buf *out)
{
    xpv_store_cursor c;
    xpv_store_profile r;
    xpv_err err = {{0}};
    char hex[17];
    xpv_profile_id_hex(id, hex);
    int found = xpv_store_profiles_get(&c, db, id, &r, &err);
    if (found < 0) return xpv_api_error(out, 500, "%s", err.msg);
    if (!found) return xpv_api_error(out, 404, "%s (%s): no such profile", key, hex);
    snprintf(path, path_len, "%s", r.path.s ? r.path.s : hex);
    const char *status = r.status.s ? r.status.s : "";
    const char *why = r.error.s && *r.error.s ? r.error.s : status;
    int events_known = xpv_store_profile_known(&r, XPV_STORE_PROFILE_EVENTS);
    int64_t events = r.num[XPV_STORE_PROFILE_EVENTS];
    int rc = 200;
    if (strcmp(status, "pending") == 0 || strcmp(status, "indexing") == 0)
        rc = xpv_api_error(out, 409, "%s (%s) is not indexed yet (%s)", key, path, status);
    else if (strcmp(status, "unsupported") == 0)
        rc = xpv_api_error(out, 422, "%s (%s) is not a profile this version reads: %s", key, path,
                           why);
    else if (strcmp(status, "ok") != 0)
        rc = xpv_api_error(out, 422, "%s (%s) could not be read: %s", key, path, why);
    else if (events_known && events == 0)
        rc = xpv_api_error(out, 422, "%s (%s) is empty: it holds no events", key, path);
    xpv_store_cursor_close(&c);
    return rc;
}

static int device_work(const side *s)
{
    size_t n = 0;
    for (size_t t = 0; t < NTABLES; t++)
        n += s->nrows[t];
    return n > 0;
}

/* ---- the answer ---- */

static int put_profile(xpv_buf *out, const char *key, sqlite3 *db, int64_t id, xpv_buf *err_out)
{
    xpv_buf obj = {0};
    int status = xpv_api_profile(db, id, &obj);
    if (status == 200) {
        xpv_buf_printf(out, "%s\"%s\":%s", *key == 'a' ? "{" : ",", key, obj.data);
    } else {
        char hex[17];
        xpv_profile_id_hex(id, hex);
        xpv_api_error(err_out, status, "profile %s (%s): %s", key, hex,
                      status == 404 ? "no such profile" : "cannot be read");
    }
    xpv_buf_free(&obj);
    return status;
}

/* Both sides checked, loaded and written into body: 200 or an error status
 * with its {"error"} in out. */
static int load_sides(side *sa, side *sb, xpv_buf *body, xpv_buf *out)
{
    side *sides[2] = {sa, sb};
    char paths[2][512];
    xpv_err err = {{0}};
    for (int i = 0; i < 2; i++) {
        int status =
            check_side(sides[i]->db, sides[i]->id, i ? "B" : "A", paths[i], sizeof paths[i], out);
        if (status != 200) return status;
    }
    for (int i = 0; i < 2; i++) {
        int status = put_profile(body, i ? "b" : "a", sides[i]->db, sides[i]->id, out);
        if (status != 200) return status;
        if (load_side(sides[i], &err) != 0) return xpv_api_error(out, 500, "%s", err.msg);
    }
    for (int i = 0; i < 2; i++)
        if (!device_work(sides[i]))
            return xpv_api_error(out, 422,
                                 "%s (%s) has no device work: no kernels, copies, memsets or "
                                 "XLA ops to compare",
                                 i ? "B" : "A", paths[i]);
    return 200;
}

int xpv_api_compare(sqlite3 *db_a, int64_t a, sqlite3 *db_b, int64_t b, xpv_buf *out)
{
    xpv_buf body = {0};
    side sa = {.db = db_a, .id = a, .device = -1}, sb = {.db = db_b, .id = b, .device = -1};
    xpv_err err = {{0}};
    int status = load_sides(&sa, &sb, &body, out);
    if (status == 200) {
        xpv_buf_puts(&body, ",\"device\":-1");
        put_normalise(&body, &sa, &sb);
        put_step_time(&body, &sa, &sb);
        put_totals(&body, &sa, &sb);
        for (size_t t = 0; t < NTABLES; t++)
            put_table(&body, &sa, &sb, t);
        if (put_devices(&body, &sa, &sb, &err) != 0)
            status = xpv_api_error(out, 500, "%s", err.msg);
    }
    if (status == 200) {
        xpv_buf_putc(&body, '}');
        xpv_buf_append(out, body.data, body.len);
    }
    free_side(&sa);
    free_side(&sb);
    xpv_buf_free(&body);
    return status;
}
