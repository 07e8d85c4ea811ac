/*
 * ingest_rows.c — the rows a sink writes besides the events: the facts
 * gathered for the profiles row while the reader runs, and at finish the
 * strings and tracks rows, the analysis's finish, and the update of the
 * profile's row.
 *
 * Invariants: the finish half runs only after xpv_pipeline_drain, so it
 * reads the reader's tables and the store stage's counters without a lock.
 * Rows carry the intern ids and track ids as they are, because the stored
 * events refer to them (a part's strings are kept for the index's writer
 * instead: index_db.h). The strings and tracks rows are written while the
 * analysis's step join runs on its own thread, which reads only what the
 * reader left and never touches SQLite. Every SQLite failure returns -1
 * with the message.
 */
#include "ingest_internal.h"
#include "../store/index_db.h"

#include <stdio.h>
#include <stdlib.h>

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, xpv_err *err)
{
    if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) return xpv_db_error(err, db);
    return 0;
}

static int step_row(sqlite3 *db, sqlite3_stmt *st, xpv_err *err)
{
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : xpv_db_error(err, db);
    sqlite3_reset(st);
    return rc;
}

static void bind_text_or_null(sqlite3_stmt *st, int col, const char *s)
{
    if (s)
        sqlite3_bind_text(st, col, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, col);
}

static void bind_int64_or_null(sqlite3_stmt *st, int col, int has, int64_t v)
{
    if (has)
        sqlite3_bind_int64(st, col, v);
    else
        sqlite3_bind_null(st, col);
}

/* ---- facts, while the reader runs ---- */

static void json_member(xpv_buf *b, const char *key, const char *value)
{
    if (b->len) xpv_buf_putc(b, ',');
    xpv_buf_json_str(b, key, strlen(key));
    xpv_buf_putc(b, ':');
    xpv_buf_json_str(b, value, strlen(value));
}

static void json_item(xpv_buf *b, const char *value)
{
    if (b->len) xpv_buf_putc(b, ',');
    xpv_buf_json_str(b, value, strlen(value));
}

void xpv_rows_fact(xpv_sink *s, const char *key, const char *value)
{
    if (strcmp(key, "producer") == 0)
        snprintf(s->producer, sizeof s->producer, "%s", value);
    else if (strcmp(key, "device") == 0)
        json_item(&s->devices, value);
    else if (strcmp(key, "warning") == 0)
        json_item(&s->warnings, value);
    else
        json_member(&s->facts, key, value);
}

/* ---- strings and tracks ---- */

/* The interned strings as rows: into the part's deferred rows, or into db. */
static int write_strings(xpv_sink *s, xpv_err *err)
{
    xpv_store_string_rows own = {0}, *rows = s->string_rows ? s->string_rows : &own;
    for (size_t id = 0; id < xpv_intern_count(&s->strings); id++) {
        size_t len;
        const char *value = xpv_intern_get(&s->strings, (uint32_t)id, &len);
        xpv_store_string_rows_add(rows, value, len);
    }
    if (s->string_rows) return 0;
    int rc = xpv_store_strings_write(s->db, s->profile_id, rows, err);
    xpv_store_string_rows_free(&own);
    return rc;
}

static void bind_track(sqlite3_stmt *st, xpv_sink *s, uint32_t id)
{
    const xpv_track_rec *t = &s->tracks[id];
    const xpv_process_rec *p = xpv_sink_process(s, t->pid);
    xpv_track_count c = id < s->ncounts ? s->counts[id] : (xpv_track_count){0, 0, 0};
    sqlite3_bind_int64(st, 1, s->profile_id);
    sqlite3_bind_int64(st, 2, id);
    sqlite3_bind_int64(st, 3, t->pid);
    sqlite3_bind_int64(st, 4, t->tid);
    bind_text_or_null(st, 5, p->name);
    bind_text_or_null(st, 6, t->name);
    bind_int64_or_null(st, 7, p->has_sort, p->sort);
    bind_int64_or_null(st, 8, t->has_sort, t->sort);
    bind_text_or_null(st, 9, p->labels);
    bind_int64_or_null(st, 10, p->device_id >= 0, p->device_id);
    sqlite3_bind_int64(st, 11, c.events);
    bind_int64_or_null(st, 12, c.events != 0, c.t_min);
    bind_int64_or_null(st, 13, c.events != 0, c.t_max);
}

static int write_tracks(xpv_sink *s, xpv_err *err)
{
    sqlite3_stmt *st;
    if (prepare(s->db,
                "INSERT INTO tracks(profile_id, id, pid, tid, process_name, thread_name,"
                " process_sort, thread_sort, process_labels, device_id, events, t_min,"
                " t_max) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
                &st, err))
        return -1;
    int rc = 0;
    for (uint32_t id = 0; id < s->ntracks && rc == 0; id++) {
        bind_track(st, s, id);
        rc = step_row(s->db, st, err);
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- the analysis's finish ---- */

static const char *string_lookup(void *ctx, uint32_t id, size_t *len)
{
    const xpv_sink *s = ctx;
    return xpv_intern_get(&s->strings, id, len);
}

/* What the analysis knows of each track (malloc'ed, one entry at least). */
static xpv_track_info *track_infos(xpv_sink *s)
{
    xpv_track_info *infos = xpv_xcalloc(s->ntracks ? s->ntracks : 1, sizeof *infos);
    for (uint32_t id = 0; id < s->ntracks; id++) {
        const xpv_track_rec *t = &s->tracks[id];
        const xpv_process_rec *p = xpv_sink_process(s, t->pid);
        infos[id] = (xpv_track_info){
            .id = id,
            .pid = t->pid,
            .tid = t->tid,
            .process_name = p->name ? p->name : "",
            .thread_name = t->name ? t->name : "",
            .device_id = p->device_id,
            .events = id < s->ncounts ? s->counts[id].events : 0,
        };
    }
    return infos;
}

int xpv_rows_names_and_analysis(xpv_sink *s, xpv_analysis_result *res, xpv_err *err)
{
    xpv_track_info *infos = track_infos(s);
    xpv_analysis_input in = {
        .db = s->db,
        .profile_id = s->profile_id,
        .string = string_lookup,
        .string_ctx = s,
        .tracks = infos,
        .ntracks = s->ntracks,
        .producer = s->producer,
        .kernel_rows = s->kernel_rows,
    };
    int rc = xpv_analysis_finish_begin(s->analysis, &in, err);
    if (rc == 0) {
        /* the first error is the one reported */
        int names_rc = write_strings(s, err) == 0 && write_tracks(s, err) == 0 ? 0 : -1;
        rc = xpv_analysis_finish_end(s->analysis, res, names_rc ? NULL : err);
        if (names_rc) rc = -1;
    }
    free(infos);
    return rc;
}

/* ---- the profiles row ---- */

typedef struct {
    xpv_buf facts, phases, devices, warnings;
} profile_json;

static void phase_counts_json(const xpv_sink *s, xpv_buf *out)
{
    const int64_t *counts = xpv_sink_phase_counts(s);
    xpv_buf_putc(out, '{');
    int first = 1;
    for (int ph = 1; ph < 128; ph++) {
        if (!counts[ph]) continue;
        if (ph == '"' || ph == '\\' || ph < 0x20) continue;
        xpv_buf_printf(out, "%s\"%c\":%lld", first ? "" : ",", ph, (long long)counts[ph]);
        first = 0;
    }
    xpv_buf_putc(out, '}');
}

static void facts_json(const xpv_sink *s, xpv_buf *out)
{
    xpv_buf_putc(out, '{');
    xpv_buf_append(out, s->facts.data ? s->facts.data : "", s->facts.len);
    if (s->nskip) {
        xpv_buf_puts(out, s->facts.len ? ",\"skipped\":{" : "\"skipped\":{");
        for (size_t i = 0; i < s->nskip; i++) {
            if (i) xpv_buf_putc(out, ',');
            xpv_buf_json_str(out, s->skip_names[i], strlen(s->skip_names[i]));
            xpv_buf_printf(out, ":%lld", (long long)s->skip_counts[i]);
        }
        xpv_buf_putc(out, '}');
    }
    xpv_buf_putc(out, '}');
}

/* When the reader named no device, the device processes' names stand in. */
static void add_device_process_names(xpv_sink *s)
{
    if (s->devices.len) return;
    for (size_t i = 0; i < s->nprocs; i++)
        if (s->procs[i].device_id >= 0 && s->procs[i].name)
            json_item(&s->devices, s->procs[i].name);
}

/* The analysis's warnings, one per line, after the reader's. */
static void add_analysis_warnings(xpv_sink *s, char *warnings)
{
    for (char *w = warnings, *nl; *w; w = nl ? nl + 1 : w + strlen(w)) {
        if ((nl = strchr(w, '\n'))) *nl = 0;
        json_item(&s->warnings, w);
    }
}

static void profile_json_build(xpv_sink *s, profile_json *j)
{
    facts_json(s, &j->facts);
    phase_counts_json(s, &j->phases);
    add_device_process_names(s);
    xpv_buf_printf(&j->devices, "[%s]", s->devices.data ? s->devices.data : "");
    xpv_buf_printf(&j->warnings, "[%s]", s->warnings.data ? s->warnings.data : "");
}

static void profile_json_free(profile_json *j)
{
    xpv_buf_free(&j->facts);
    xpv_buf_free(&j->phases);
    xpv_buf_free(&j->devices);
    xpv_buf_free(&j->warnings);
}

/* start_ns and end_ns stay NULL for a profile without events. */
static void bind_profile(sqlite3_stmt *st, const xpv_sink *s, const xpv_analysis_result *res,
                         const profile_json *j)
{
    sqlite3_bind_int64(st, 1, s->profile_id);
    sqlite3_bind_text(st, 2, s->producer, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, s->events);
    if (s->events) {
        sqlite3_bind_int64(st, 4, s->t_min);
        sqlite3_bind_int64(st, 5, s->t_max);
    }
    sqlite3_bind_text(st, 6, j->devices.data, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, j->facts.data, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, j->phases.data, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, res->step_source, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 10, res->step_count);
    sqlite3_bind_int64(st, 11, res->kernel_count);
    sqlite3_bind_text(st, 12, j->warnings.data, -1, SQLITE_STATIC);
}

int xpv_rows_update_profile(xpv_sink *s, xpv_analysis_result *res, xpv_err *err)
{
    add_analysis_warnings(s, res->warnings);
    profile_json j = {0};
    profile_json_build(s, &j);
    sqlite3_stmt *st;
    int rc = prepare(s->db,
                     "UPDATE profiles SET producer=?2, events=?3, start_ns=?4, end_ns=?5,"
                     " devices=?6, facts=?7, phase_counts=?8, step_source=?9, step_count=?10,"
                     " kernel_count=?11, warnings=?12 WHERE id=?1",
                     &st, err);
    if (rc == 0) {
        bind_profile(st, s, res, &j);
        rc = step_row(s->db, st, err);
        sqlite3_finalize(st);
    }
    profile_json_free(&j);
    return rc;
}
