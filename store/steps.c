/*
 * steps.c — every read of the `steps` table (see steps.h).
 *
 * The row queries select the same columns in the same order, so one
 * reader fills a row for each of them; the aggregates are written in SQL
 * so that SQLite sums and groups where the rows are.
 */
#include "steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_COLUMNS                                                                               \
    "SELECT step, name, device, start_ps, duration_ps, compute_ps, collective_ps, memcpy_h2d_ps,"  \
    " memcpy_d2h_ps, memcpy_d2d_ps, memcpy_other_ps, memset_ps, idle_ps, host_wait_ps,"            \
    " compile_ps, autotune_ps, kernel_wait_ps, idle_other_ps, overlap_compute_collective_ps,"      \
    " overlap_copy_ps, slowest_device, span_end FROM steps LEFT JOIN spans ON span_step = step"

/* Per step of profile ?1, the latest end of its device rows' windows: with
 * per-device windows, where the step ends on the timeline. */
#define SPANS                                                                                      \
    "WITH spans(span_step, span_end) AS (SELECT step, max(start_ps + duration_ps) FROM steps"      \
    " WHERE profile_id=?1 AND device >= 0 GROUP BY step) "

/* The four memcpy directions of a row (prefix: its table's alias) summed,
 * NULL when none is known. */
#define MEMCPY_PS(p)                                                                               \
    "CASE WHEN coalesce(" p "memcpy_h2d_ps, " p "memcpy_d2h_ps, " p "memcpy_d2d_ps, " p            \
    "memcpy_other_ps) IS NOT NULL THEN ifnull(" p "memcpy_h2d_ps, 0) + ifnull(" p                  \
    "memcpy_d2h_ps, 0) + ifnull(" p "memcpy_d2d_ps, 0) + ifnull(" p "memcpy_other_ps, 0) END"

#define MEMCPY MEMCPY_PS("")
#define MEMCPY_OF_S MEMCPY_PS("s.")

/* ids as ?1 */
#define IN_IDS " profile_id IN (SELECT value FROM json_each(?1))"

int xpv_store_step_memcpy(const xpv_store_step *r, int64_t *ps)
{
    int known = 0;
    *ps = 0;
    for (int f = XPV_STORE_STEP_MEMCPY_H2D; f <= XPV_STORE_STEP_MEMCPY_OTHER; f++)
        if (xpv_store_step_known(r, f)) *ps += r->ps[f], known = 1;
    return known;
}

int xpv_store_steps_open(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, int device,
                         xpv_err *err)
{
    if (xpv_store_cursor_open_id(
            c, db, SPANS STEP_COLUMNS " WHERE profile_id=?1 AND device=?2 ORDER BY step, start_ps",
            profile_id, err) != 0)
        return -1;
    sqlite3_bind_int(c->st, 2, device);
    return 0;
}

int xpv_store_steps_open_timed(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    return xpv_store_cursor_open_id(
        c, db,
        SPANS STEP_COLUMNS " WHERE profile_id=?1 AND device=-1 AND start_ps IS NOT NULL AND"
                           " duration_ps > 0 ORDER BY start_ps, step",
        profile_id, err);
}

int xpv_store_steps_next(xpv_store_cursor *c, xpv_store_step *row, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    sqlite3_stmt *st = c->st;
    row->step = sqlite3_column_int64(st, 0);
    row->name = xpv_store_column_text(st, 1);
    row->device = sqlite3_column_int(st, 2);
    row->known = xpv_store_columns(st, 3, XPV_STORE_STEP_NFIELDS, row->ps, NULL);
    int col = 3 + XPV_STORE_STEP_NFIELDS;
    row->slowest_device =
        sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : sqlite3_column_int(st, col);
    int64_t end = row->ps[XPV_STORE_STEP_START] + row->ps[XPV_STORE_STEP_DURATION];
    int64_t latest = sqlite3_column_int64(st, col + 1);
    row->span_end_ps =
        row->device < 0 && sqlite3_column_type(st, col + 1) != SQLITE_NULL && latest > end ? latest
                                                                                           : end;
    return 1;
}

int xpv_store_steps_devices(sqlite3 *db, int64_t profile_id, int **devs, size_t *n, xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_cursor_open_id(&c, db,
                                 "SELECT DISTINCT device FROM steps WHERE profile_id=?1 AND"
                                 " device>=0 ORDER BY device",
                                 profile_id, err) == 0)
        return xpv_store_cursor_ints(&c, devs, n, err);
    *devs = NULL, *n = 0;
    return -1;
}

int xpv_store_steps_at(sqlite3 *db, int64_t profile_id, int device, int64_t ps, int64_t *step,
                       xpv_err *err)
{
    xpv_store_cursor c;
    /* the device's own row first: a combined row's span covers every
     * device's window, and spans overlap when the devices run apart */
    if (xpv_store_cursor_open_id(&c, db,
                                 SPANS
                                 "SELECT step FROM steps LEFT JOIN spans ON span_step = step WHERE"
                                 " profile_id=?1 AND device IN (?3, -1) AND start_ps <= ?2 AND"
                                 " CASE WHEN device >= 0 THEN start_ps + duration_ps"
                                 " ELSE max(start_ps + duration_ps, ifnull(span_end, 0)) END > ?2"
                                 " ORDER BY device = -1, start_ps LIMIT 1",
                                 profile_id, err) != 0)
        return -1;
    sqlite3_bind_int64(c.st, 2, ps);
    sqlite3_bind_int(c.st, 3, device);
    return xpv_store_cursor_first_int(&c, step, err); /* step is NOT NULL */
}

int64_t xpv_store_steps_profiles_with_steps(sqlite3 *db, const int64_t *ids, size_t n, xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_cursor_open_ids(
            &c, db, "SELECT count(DISTINCT profile_id) FROM steps WHERE device = -1 AND" IN_IDS,
            ids, n, err) != 0)
        return -1;
    int64_t count = 0; /* count() always answers one row */
    return xpv_store_cursor_first_int(&c, &count, err) < 0 ? -1 : count;
}

int xpv_store_steps_times(sqlite3 *db, const int64_t *ids, size_t n, xpv_store_step_times *out,
                          xpv_err *err)
{
    xpv_store_cursor c;
    *out = (xpv_store_step_times){0, 0, 0, 0, 0};
    if (xpv_store_cursor_open_ids(&c, db,
                                  "WITH per AS (SELECT max(duration_ps) AS d FROM steps WHERE"
                                  " device=-1 AND" IN_IDS " GROUP BY step) SELECT count(*), avg(d),"
                                  " min(d), max(d), avg(CAST(d AS REAL) * d) FROM per",
                                  ids, n, err) != 0)
        return -1;
    int rc = xpv_store_cursor_step(&c, err);
    if (rc == 1) {
        double avg = sqlite3_column_double(c.st, 1), sq = sqlite3_column_double(c.st, 4);
        double var = sq - avg * avg; /* rounding can take a constant series below 0 */
        *out = (xpv_store_step_times){sqlite3_column_int64(c.st, 0), avg,
                                      sqlite3_column_double(c.st, 2),
                                      sqlite3_column_double(c.st, 3), var > 0 ? sqrt(var) : 0};
    }
    xpv_store_cursor_close(&c);
    return rc < 0 ? -1 : 0;
}

int xpv_store_steps_compile(sqlite3 *db, const int64_t *ids, size_t n, xpv_store_step_compile *out,
                            xpv_err *err)
{
    xpv_store_cursor c;
    memset(out, 0, sizeof *out);
    if (xpv_store_cursor_open_ids(&c, db,
                                  "SELECT sum(duration_ps), sum(min(ifnull(compile_ps, 0),"
                                  " ifnull(host_wait_ps, compile_ps))), sum(autotune_ps) FROM steps"
                                  " WHERE device = -1 AND" IN_IDS,
                                  ids, n, err) != 0)
        return -1;
    int rc = xpv_store_cursor_step(&c, err);
    if (rc == 1)
        *out =
            (xpv_store_step_compile){sqlite3_column_double(c.st, 0), sqlite3_column_double(c.st, 1),
                                     sqlite3_column_double(c.st, 2)};
    xpv_store_cursor_close(&c);
    return rc < 0 ? -1 : 0;
}

int xpv_store_steps_device_sums(sqlite3 *db, const int64_t *ids, size_t n, xpv_store_step_sums *out,
                                xpv_err *err)
{
    xpv_store_cursor c;
    memset(out, 0, sizeof *out);
    if (xpv_store_cursor_open_ids(
            &c, db,
            "SELECT count(DISTINCT step), count(DISTINCT profile_id || ':' || device),"
            " sum(duration_ps), sum(idle_ps), sum(compute_ps), sum(collective_ps),"
            " sum(ifnull(memcpy_h2d_ps, 0) + ifnull(memcpy_d2h_ps, 0) + ifnull(memcpy_d2d_ps,"
            " 0) + ifnull(memcpy_other_ps, 0)), sum(memset_ps), sum(autotune_ps) FROM steps"
            " WHERE device >= 0"
            " AND" IN_IDS,
            ids, n, err) != 0)
        return -1;
    int rc = xpv_store_cursor_step(&c, err);
    if (rc == 1) {
        out->steps = sqlite3_column_int64(c.st, 0);
        out->devices = sqlite3_column_int64(c.st, 1);
        double *v[] = {&out->duration_ps, &out->idle_ps,   &out->compute_ps, &out->collective_ps,
                       &out->memcpy_ps,   &out->memset_ps, &out->autotune_ps};
        for (int i = 0; i < 7; i++)
            *v[i] = sqlite3_column_double(c.st, 2 + i);
    }
    xpv_store_cursor_close(&c);
    return rc < 0 ? -1 : 0;
}

int xpv_store_steps_open_averages(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids, size_t n,
                                  xpv_err *err)
{
    return xpv_store_cursor_open_ids(
        c, db,
        "SELECT step, count(*), avg(duration_ps), avg(compute_ps), avg(collective_ps),"
        " avg(" MEMCPY "), avg(memset_ps), avg(idle_ps), avg(host_wait_ps) FROM steps WHERE" IN_IDS
        " AND (device >= 0) = (SELECT EXISTS (SELECT 1 FROM steps WHERE device >= 0 AND" IN_IDS
        ")) GROUP BY step ORDER BY step",
        ids, n, err);
}

int xpv_store_steps_averages_next(xpv_store_cursor *c, xpv_store_step_avg *row, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc == 1) {
        row->step = sqlite3_column_int64(c->st, 0), row->rows = sqlite3_column_int64(c->st, 1);
        row->known = xpv_store_columns(c->st, 2, XPV_STORE_STEP_AVG_NFIELDS, NULL, row->avg_ps);
    }
    return rc;
}

/* Per (step, host): the fastest and slowest hosts of a step by window
 * functions over the rows of the same step number. */
int xpv_store_steps_open_hosts(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids, size_t n,
                               xpv_err *err)
{
    return xpv_store_cursor_open_ids(
        c, db,
        "SELECT s.step, p.host, s.duration_ps, s.compute_ps, s.collective_ps, " MEMCPY_OF_S
        ", s.idle_ps, s.duration_ps - min(s.duration_ps) OVER w,"
        " s.duration_ps = max(s.duration_ps) OVER w AND max(s.duration_ps) OVER w >"
        " min(s.duration_ps) OVER w"
        " FROM steps s JOIN profiles p ON p.id = s.profile_id"
        " WHERE s.device = -1 AND s.profile_id IN (SELECT value FROM json_each(?1))"
        " WINDOW w AS (PARTITION BY s.step) ORDER BY s.step, p.host",
        ids, n, err);
}

int xpv_store_steps_hosts_next(xpv_store_cursor *c, xpv_store_step_host *row, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    row->step = sqlite3_column_int64(c->st, 0);
    row->host = xpv_store_column_text(c->st, 1);
    row->known = xpv_store_columns(c->st, 2, XPV_STORE_STEP_HOST_NFIELDS, row->ps, NULL);
    row->slowest = sqlite3_column_int(c->st, 2 + XPV_STORE_STEP_HOST_NFIELDS);
    return 1;
}

int xpv_store_steps_slowest_host(sqlite3 *db, const int64_t *ids, size_t n, char *host,
                                 size_t hostsz, int64_t *slow, int64_t *steps, xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_cursor_open_ids(
            &c, db,
            "WITH r AS (SELECT s.step, p.host, s.duration_ps = max(s.duration_ps)"
            " OVER (PARTITION BY s.step) AND max(s.duration_ps) OVER (PARTITION BY"
            " s.step) > min(s.duration_ps) OVER (PARTITION BY s.step) AS slow"
            " FROM steps s JOIN profiles p ON p.id = s.profile_id WHERE s.device = -1 AND"
            " s.profile_id IN (SELECT value FROM json_each(?1)))"
            " SELECT host, sum(slow), count(DISTINCT step) FROM r GROUP BY host"
            " HAVING sum(slow) > 0 ORDER BY sum(slow) DESC, host LIMIT 1",
            ids, n, err) != 0)
        return -1;
    int rc = xpv_store_cursor_step(&c, err);
    if (rc == 1) {
        const char *h = (const char *)sqlite3_column_text(c.st, 0);
        snprintf(host, hostsz, "%s", h ? h : "(null)");
        *slow = sqlite3_column_int64(c.st, 1);
        *steps = sqlite3_column_int64(c.st, 2);
    }
    xpv_store_cursor_close(&c);
    return rc;
}
