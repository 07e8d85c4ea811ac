/*
 * profiles.c — every read of the `profiles` table by the answers (see
 * profiles.h).
 *
 * The whole-row queries select the same columns in the same order, so one
 * reader fills a row for each; the lookups that run on every request (the
 * state row, a scope's checks) select only what they need. The facts are
 * searched in SQL (json_each) so that SQLite filters where the rows are.
 */
#include "profiles.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Texts first (13, from path), then partial, the numbers in the order of
 * the enum, index_seconds. */
#define PROFILE_COLUMNS                                                                            \
    "SELECT id, path, run, host, format, producer, status, error, devices, facts, phase_counts,"   \
    " step_source, warnings, partial, size_bytes, mtime_ns, events, start_ns, end_ns,"             \
    " step_count, kernel_count, companion_of, index_seconds, indexed_at FROM profiles"
#define NEWEST_ORDER " mtime_ns DESC, run DESC, path"
#define BEST_INDEXED "CASE WHEN status='ok' THEN 0 WHEN partial THEN 1 ELSE 2 END"
/* A profile the pages can show: indexed whole, or cut short after some
 * events were read; a capture with no event or in a format this tool does
 * not read is not. */
#define READABLE "(events > 0 AND (status='ok' OR partial))"
#define TOP_LEVEL " companion_of IS NULL"
/* The runs, newest first (by their newest profile). */
#define RUNS_NEWEST_FIRST                                                                          \
    "SELECT run FROM profiles WHERE" TOP_LEVEL " AND run IS NOT NULL GROUP BY run ORDER BY"        \
    " max(mtime_ns) DESC, run DESC"
/* ids as ?1 */
#define IN_IDS " id IN (SELECT value FROM json_each(?1))"

int xpv_store_profiles_open_id(xpv_store_cursor *c, sqlite3 *db, int64_t id, xpv_err *err)
{
    return xpv_store_cursor_open_id(c, db, PROFILE_COLUMNS " WHERE id=?1", id, err);
}

int xpv_store_profiles_open_all(xpv_store_cursor *c, sqlite3 *db, int with_companions, xpv_err *err)
{
    return xpv_store_cursor_open(c, db,
                                 with_companions ? PROFILE_COLUMNS " ORDER BY" NEWEST_ORDER
                                                 : PROFILE_COLUMNS " WHERE" TOP_LEVEL
                                                                   " ORDER BY" NEWEST_ORDER,
                                 err);
}

int xpv_store_profiles_next(xpv_store_cursor *c, xpv_store_profile *row, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    sqlite3_stmt *st = c->st;
    xpv_store_text *texts[] = {&row->path,         &row->run,         &row->host,
                               &row->format,       &row->producer,    &row->status,
                               &row->error,        &row->devices,     &row->facts,
                               &row->phase_counts, &row->step_source, &row->warnings};
    row->id = sqlite3_column_int64(st, 0);
    for (int i = 0; i < 12; i++)
        *texts[i] = xpv_store_column_text(st, 1 + i);
    row->partial = sqlite3_column_int(st, 13);
    row->known = xpv_store_columns(st, 14, XPV_STORE_PROFILE_NNUMS, row->num, NULL);
    row->index_seconds_known = xpv_store_columns(st, 22, 1, NULL, &row->index_seconds) != 0;
    row->indexed_at = sqlite3_column_double(st, 23);
    return 1;
}

/* The first row of an open c by next: as xpv_store_profiles_get. */
static int first_row(xpv_store_cursor *c, int (*next)(xpv_store_cursor *, void *, xpv_err *),
                     void *row, xpv_err *err)
{
    int rc = next(c, row, err);
    if (rc != 1) xpv_store_cursor_close(c);
    return rc;
}

static int profile_next(xpv_store_cursor *c, void *row, xpv_err *err)
{
    return xpv_store_profiles_next(c, row, err);
}

int xpv_store_profiles_get(xpv_store_cursor *c, sqlite3 *db, int64_t id, xpv_store_profile *row,
                           xpv_err *err)
{
    if (xpv_store_profiles_open_id(c, db, id, err) != 0) return -1;
    return first_row(c, profile_next, row, err);
}

static int state_next(xpv_store_cursor *c, void *out, xpv_err *err)
{
    xpv_store_profile_state *row = out;
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    row->status = xpv_store_column_text(c->st, 0);
    row->path = xpv_store_column_text(c->st, 1);
    row->known = xpv_store_columns(c->st, 2, XPV_STORE_PROFILE_STATE_NNUMS, row->num, NULL);
    row->indexed_at = sqlite3_column_double(c->st, 6);
    row->partial = sqlite3_column_int(c->st, 7);
    return 1;
}

int xpv_store_profiles_state(xpv_store_cursor *c, sqlite3 *db, int64_t id,
                             xpv_store_profile_state *row, xpv_err *err)
{
    if (xpv_store_cursor_open_id(c, db,
                                 "SELECT status, path, events, start_ns, end_ns, mtime_ns,"
                                 " indexed_at, partial FROM profiles WHERE id=?1",
                                 id, err) != 0)
        return -1;
    return first_row(c, state_next, row, err);
}

int xpv_store_profiles_generation(sqlite3 *db, int64_t id, uint64_t *gen, xpv_err *err)
{
    xpv_store_cursor c;
    xpv_store_profile_state row;
    int found = xpv_store_profiles_state(&c, db, id, &row, err);
    if (found != 1) return found;
    found = row.status.s && strcmp(row.status.s, "ok") == 0;
    if (found) {
        int64_t v[3] = {row.num[XPV_STORE_PROFILE_STATE_EVENTS],
                        row.num[XPV_STORE_PROFILE_STATE_MTIME_NS], row.partial};
        double at = row.indexed_at;
        *gen = xpv_hash64(v, sizeof v) ^ xpv_hash64(&at, sizeof at) * 0x9e3779b97f4a7c15ull;
    }
    xpv_store_cursor_close(&c);
    return found;
}

static int file_next(xpv_store_cursor *c, void *out, xpv_err *err)
{
    xpv_store_profile_file *row = out;
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    row->dir = xpv_store_column_text(c->st, 0);
    row->path = xpv_store_column_text(c->st, 1);
    row->size_bytes = sqlite3_column_int64(c->st, 2);
    row->mtime_ns = sqlite3_column_int64(c->st, 3);
    return 1;
}

int xpv_store_profiles_xplane_file(xpv_store_cursor *c, sqlite3 *db, int64_t id,
                                   xpv_store_profile_file *row, xpv_err *err)
{
    if (xpv_store_cursor_open_id(c, db,
                                 "SELECT (SELECT value FROM meta WHERE key='profile_dir'), path,"
                                 " size_bytes, mtime_ns FROM profiles WHERE id=?1 AND"
                                 " format='xplane'",
                                 id, err) != 0)
        return -1;
    return first_row(c, file_next, row, err);
}

/* The first column of sql's first row (ids, unless NULL, as ?1), as
 * xpv_store_cursor_first_int gives it. */
static int first_int(sqlite3 *db, const char *sql, const int64_t *ids, size_t n, int64_t *v,
                     xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_cursor_open(&c, db, sql, err) != 0) return -1;
    if (ids) xpv_store_bind_ids(c.st, 1, ids, n);
    return xpv_store_cursor_first_int(&c, v, err);
}

int xpv_store_profiles_latest(sqlite3 *db, int64_t *id, xpv_err *err)
{
    return first_int(db,
                     "SELECT id FROM profiles WHERE" TOP_LEVEL " ORDER BY NOT " READABLE
                     "," NEWEST_ORDER " LIMIT 1",
                     NULL, 0, id, err);
}

int xpv_store_profiles_open_status_counts(xpv_store_cursor *c, sqlite3 *db, xpv_err *err)
{
    return xpv_store_cursor_open(c, db,
                                 "SELECT status, count(*) FROM profiles WHERE" TOP_LEVEL
                                 " GROUP BY status ORDER BY status",
                                 err);
}

int xpv_store_profiles_count_next(xpv_store_cursor *c, xpv_store_text *text, int64_t *n,
                                  xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    *text = xpv_store_column_text(c->st, 0);
    *n = sqlite3_column_int64(c->st, 1);
    return 1;
}

int xpv_store_profiles_with_events(sqlite3 *db, int64_t **ids, size_t *n, xpv_err *err)
{
    xpv_store_cursor c;
    *ids = NULL, *n = 0;
    if (xpv_store_cursor_open(&c, db, "SELECT id FROM profiles WHERE events > 0", err) != 0)
        return -1;
    return xpv_store_cursor_ids(&c, ids, n, err);
}

/* ---- runs and hosts ---- */

int xpv_store_profiles_open_runs(xpv_store_cursor *c, sqlite3 *db, xpv_err *err)
{
    return xpv_store_cursor_open(c, db, RUNS_NEWEST_FIRST, err);
}

static int open_run(xpv_store_cursor *c, sqlite3 *db, const char *sql, const char *run,
                    xpv_err *err)
{
    if (xpv_store_cursor_open(c, db, sql, err) != 0) return -1;
    sqlite3_bind_text(c->st, 1, run, -1, SQLITE_STATIC);
    return 0;
}

int xpv_store_profiles_open_hosts(xpv_store_cursor *c, sqlite3 *db, const char *run, xpv_err *err)
{
    return open_run(
        c, db, "SELECT DISTINCT host FROM profiles WHERE run=?1 AND" TOP_LEVEL " ORDER BY host",
        run, err);
}

int xpv_store_profiles_text_next(xpv_store_cursor *c, xpv_store_text *text, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc == 1) *text = xpv_store_column_text(c->st, 0);
    return rc;
}

int xpv_store_profiles_open_run_hosts(xpv_store_cursor *c, sqlite3 *db, const char *run,
                                      xpv_err *err)
{
    return open_run(c, db,
                    "SELECT id, host FROM profiles WHERE run=?1 AND" TOP_LEVEL
                    " ORDER BY host, " BEST_INDEXED ", mtime_ns DESC",
                    run, err);
}

int xpv_store_profiles_host_next(xpv_store_cursor *c, int64_t *id, xpv_store_text *host,
                                 xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    *id = sqlite3_column_int64(c->st, 0);
    *host = xpv_store_column_text(c->st, 1);
    return 1;
}

int xpv_store_profiles_of_run(sqlite3 *db, const char *run, const char *host, int64_t *id,
                              xpv_err *err)
{
    xpv_store_cursor c;
    if (open_run(&c, db,
                 "SELECT id FROM profiles WHERE run=?1 AND (?2 IS NULL OR host=?2)"
                 " ORDER BY companion_of IS NOT NULL, " BEST_INDEXED ", mtime_ns DESC LIMIT 1",
                 run, err) != 0)
        return -1;
    if (host) sqlite3_bind_text(c.st, 2, host, -1, SQLITE_STATIC);
    int rc = xpv_store_cursor_step(&c, err);
    if (rc == 1) *id = sqlite3_column_int64(c.st, 0);
    xpv_store_cursor_close(&c);
    return rc;
}

int xpv_store_profiles_newest_run(sqlite3 *db, int64_t **ids, size_t *n, xpv_err *err)
{
    xpv_store_cursor c;
    *ids = NULL, *n = 0;
    if (xpv_store_cursor_open(&c, db,
                              "SELECT id FROM profiles WHERE" TOP_LEVEL " AND status='ok' AND"
                              " run=(" RUNS_NEWEST_FIRST " LIMIT 1) ORDER BY host, id",
                              err) != 0)
        return -1;
    return xpv_store_cursor_ids(&c, ids, n, err);
}

/* ---- over several profiles ---- */

int xpv_store_profiles_any_events(sqlite3 *db, const int64_t *ids, size_t n, int ok_only,
                                  xpv_err *err)
{
    return first_int(db,
                     ok_only ? "SELECT 1 FROM profiles WHERE" IN_IDS
                               " AND status IN ('ok') AND events > 0"
                             : "SELECT 1 FROM profiles WHERE" IN_IDS " AND events > 0",
                     ids, n, NULL, err);
}

int xpv_store_profiles_environment_get(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                       size_t n, xpv_store_profiles_environment *out, xpv_err *err)
{
    memset(out, 0, sizeof *out);
    if (xpv_store_cursor_open_ids(c, db,
                                  "SELECT count(*), group_concat(host, ', '),"
                                  " sum(json_array_length(CASE WHEN json_valid(devices) THEN"
                                  " devices END)), max(CASE WHEN json_valid(devices) THEN"
                                  " json_extract(devices, '$[0]') END) FROM profiles WHERE" IN_IDS,
                                  ids, n, err) != 0)
        return -1;
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) {
        xpv_store_cursor_close(c);
        return rc;
    }
    out->profiles = sqlite3_column_int64(c->st, 0);
    out->hosts = xpv_store_column_text(c->st, 1);
    out->devices_known = xpv_store_columns(c->st, 2, 1, &out->devices, NULL) != 0;
    out->device = xpv_store_column_text(c->st, 3);
    return 1;
}

/* Facts device.<name>.<stat>: the stat (after the name) and the name. */
#define FACT_STAT "substr(key, instr(substr(key, 8), '.') + 8)"
#define FACT_DEVICE "substr(key, 8, instr(substr(key, 8), '.') - 1)"
/* The device facts of the profiles (ids as ?1) of a stat in ?2. */
#define DEVICE_FACTS                                                                               \
    " FROM profiles, json_each(CASE WHEN json_valid(facts) THEN facts END) WHERE profiles.id IN"   \
    " (SELECT value FROM json_each(?1)) AND key LIKE 'device.%.%' AND stat IN (SELECT value"       \
    " FROM json_each(?2))"

/* ids as ?1, stats as a JSON array of strings as ?2. */
static int open_device_facts(xpv_store_cursor *c, sqlite3 *db, const char *sql, const int64_t *ids,
                             size_t n, const char *const *stats, xpv_err *err)
{
    if (xpv_store_cursor_open_ids(c, db, sql, ids, n, err) != 0) return -1;
    xpv_buf b = {0};
    xpv_buf_putc(&b, '[');
    for (size_t i = 0; stats[i]; i++) {
        assert(i < 16);
        if (i) xpv_buf_putc(&b, ',');
        xpv_buf_json_str(&b, stats[i], strlen(stats[i]));
    }
    xpv_buf_putc(&b, ']');
    sqlite3_bind_text(c->st, 2, b.data, (int)b.len, SQLITE_TRANSIENT);
    xpv_buf_free(&b);
    return 0;
}

int xpv_store_profiles_open_device_figures(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                           size_t n, const char *const *stats, xpv_err *err)
{
    return open_device_facts(c, db,
                             "SELECT " FACT_STAT " AS stat, value, count(*), min(" FACT_DEVICE
                             ")" DEVICE_FACTS " GROUP BY stat, value ORDER BY stat, count(*) DESC",
                             ids, n, stats, err);
}

int xpv_store_profiles_device_figure_next(xpv_store_cursor *c, xpv_store_device_figure *row,
                                          xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    row->stat = xpv_store_column_text(c->st, 0);
    row->number = sqlite3_column_double(c->st, 1); /* before the text: exact */
    row->value = xpv_store_column_text(c->st, 1);
    row->devices = sqlite3_column_int64(c->st, 2);
    row->device = xpv_store_column_text(c->st, 3);
    return 1;
}

int xpv_store_profiles_open_device_stats(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                         size_t n, const char *const *stats, xpv_err *err)
{
    return open_device_facts(c, db,
                             "SELECT " FACT_STAT " AS stat, count(DISTINCT value), count(DISTINCT"
                             " profiles.id), max(value)" DEVICE_FACTS " GROUP BY stat",
                             ids, n, stats, err);
}

int xpv_store_profiles_device_stat_next(xpv_store_cursor *c, xpv_store_device_stat *row,
                                        xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    row->stat = xpv_store_column_text(c->st, 0);
    row->values = sqlite3_column_int64(c->st, 1);
    row->profiles = sqlite3_column_int64(c->st, 2);
    row->value = xpv_store_column_text(c->st, 3);
    return 1;
}

int xpv_store_profiles_fact(sqlite3 *db, const int64_t *ids, size_t n, const char *path,
                            xpv_store_fact_agreement *out, char *value, size_t valuesz,
                            xpv_err *err)
{
    xpv_store_cursor c;
    memset(out, 0, sizeof *out);
    value[0] = 0;
    if (xpv_store_cursor_open_ids(&c, db,
                                  "SELECT count(DISTINCT v), count(v), count(*), max(v) FROM"
                                  " (SELECT json_extract(facts, ?2) AS v FROM profiles WHERE" IN_IDS
                                  ")",
                                  ids, n, err) != 0)
        return -1;
    sqlite3_bind_text(c.st, 2, path, -1, SQLITE_STATIC);
    int rc = xpv_store_cursor_step(&c, err);
    if (rc == 1) {
        out->values = sqlite3_column_int64(c.st, 0);
        out->stating = sqlite3_column_int64(c.st, 1);
        out->profiles = sqlite3_column_int64(c.st, 2);
        xpv_store_text v = xpv_store_column_text(c.st, 3);
        out->value_known = v.s != NULL;
        if (v.s) snprintf(value, valuesz, "%s", v.s);
    } else if (rc == 0) { /* an aggregate has a row: none is an error too */
        rc = xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    }
    xpv_store_cursor_close(&c);
    return rc < 0 ? -1 : 0;
}
