/*
 * ingest.c — the sink readers write into (see ingest.h): its public calls,
 * the process and track tables they fill, and the glue that opens and
 * finishes a sink. Strings are interned by intern.c, events travel to the
 * store and the analysis through ingest_pipeline.c; ingest_internal.h says
 * which thread owns what.
 *
 * Invariants: the process and track tables are touched only by the
 * reader's thread until xpv_sink_finish has drained the pipeline; track ids
 * are dense from 0 in order of first use, and a track's process record
 * exists from the track's creation on. String id 0 is "".
 */
#include "ingest_internal.h"

#include <stdio.h>
#include <stdlib.h>

#define INTERN_MAX_VALUE_LEN 256
#define INTERN_MAX_BYTES (256u << 20)

/* ---- public: open ---- */

xpv_sink *xpv_sink_open(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    xpv_sink *s = xpv_xcalloc(1, sizeof *s);
    s->db = db;
    s->profile_id = profile_id;
    xpv_intern_init(&s->strings);
    s->ntrack_slots = 256;
    s->track_slots = xpv_xcalloc(s->ntrack_slots, sizeof *s->track_slots);
    snprintf(s->producer, sizeof s->producer, "unknown");
    xpv_pipeline_init(s);
    s->analysis = xpv_analysis_new();
    s->store = xpv_store_writer_open(db, profile_id, err);
    if (!s->store) {
        xpv_sink_free(s);
        return NULL;
    }
    if (xpv_pipeline_start(s, err) != 0) {
        xpv_sink_free(s);
        return NULL;
    }
    return s;
}

/* ---- public: strings ---- */

uint32_t xpv_sink_intern(xpv_sink *s, const char *str, size_t len)
{
    return xpv_intern_lookup(&s->strings, str, len, 1);
}

uint32_t xpv_sink_intern_value(xpv_sink *s, const char *str, size_t len)
{
    int may_add = len <= INTERN_MAX_VALUE_LEN && xpv_intern_bytes(&s->strings) < INTERN_MAX_BYTES;
    return xpv_intern_lookup(&s->strings, str, len, may_add);
}

const char *xpv_sink_string(xpv_sink *s, uint32_t id, size_t *len)
{
    return xpv_intern_get(&s->strings, id, len);
}

/* ---- public: tracks ---- */

xpv_process_rec *xpv_sink_process(xpv_sink *s, int64_t pid)
{
    for (size_t i = s->nprocs; i-- > 0;)
        if (s->procs[i].pid == pid) return &s->procs[i];
    if (s->nprocs == s->cap_procs) {
        s->cap_procs = s->cap_procs ? s->cap_procs * 2 : 16;
        s->procs = xpv_xrealloc(s->procs, s->cap_procs * sizeof *s->procs);
    }
    xpv_process_rec *p = &s->procs[s->nprocs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->device_id = -1;
    return p;
}

static size_t track_slot(xpv_sink *s, int64_t pid, int64_t tid)
{
    int64_t key[2] = {pid, tid};
    return xpv_hash64(key, sizeof key) & (s->ntrack_slots - 1);
}

static void grow_track_slots(xpv_sink *s)
{
    free(s->track_slots);
    s->ntrack_slots *= 2;
    s->track_slots = xpv_xcalloc(s->ntrack_slots, sizeof *s->track_slots);
    for (size_t id = 0; id < s->ntracks; id++) {
        size_t h = track_slot(s, s->tracks[id].pid, s->tracks[id].tid);
        while (s->track_slots[h])
            h = (h + 1) & (s->ntrack_slots - 1);
        s->track_slots[h] = (uint32_t)id + 1;
    }
}

uint32_t xpv_sink_track(xpv_sink *s, int64_t pid, int64_t tid)
{
    size_t h = track_slot(s, pid, tid);
    for (uint32_t slot; (slot = s->track_slots[h]) != 0; h = (h + 1) & (s->ntrack_slots - 1)) {
        xpv_track_rec *t = &s->tracks[slot - 1];
        if (t->pid == pid && t->tid == tid) return slot - 1;
    }
    if (s->ntracks == s->cap_tracks) {
        s->cap_tracks = s->cap_tracks ? s->cap_tracks * 2 : 64;
        s->tracks = xpv_xrealloc(s->tracks, s->cap_tracks * sizeof *s->tracks);
    }
    uint32_t id = (uint32_t)s->ntracks++;
    s->tracks[id] = (xpv_track_rec){.pid = pid, .tid = tid};
    s->track_slots[h] = id + 1;
    xpv_sink_process(s, pid);
    if (s->ntracks * 2 > s->ntrack_slots) grow_track_slots(s);
    return id;
}

static void set_text(char **dst, const char *src, size_t len)
{
    free(*dst);
    *dst = xpv_xstrndup(src, len);
}

void xpv_sink_process_name(xpv_sink *s, int64_t pid, const char *name, size_t len)
{
    set_text(&xpv_sink_process(s, pid)->name, name, len);
}

void xpv_sink_process_sort(xpv_sink *s, int64_t pid, int64_t sort_index)
{
    xpv_process_rec *p = xpv_sink_process(s, pid);
    p->sort = sort_index;
    p->has_sort = 1;
}

void xpv_sink_process_label(xpv_sink *s, int64_t pid, const char *labels, size_t len)
{
    set_text(&xpv_sink_process(s, pid)->labels, labels, len);
}

void xpv_sink_process_device(xpv_sink *s, int64_t pid, int device_id)
{
    xpv_sink_process(s, pid)->device_id = device_id;
}

void xpv_sink_thread_name(xpv_sink *s, int64_t pid, int64_t tid, const char *name, size_t len)
{
    set_text(&s->tracks[xpv_sink_track(s, pid, tid)].name, name, len);
}

void xpv_sink_thread_sort(xpv_sink *s, int64_t pid, int64_t tid, int64_t sort_index)
{
    xpv_track_rec *t = &s->tracks[xpv_sink_track(s, pid, tid)];
    t->sort = sort_index;
    t->has_sort = 1;
}

/* ---- public: events ---- */

void xpv_sink_device_work_done(xpv_sink *s)
{
    int *devices = xpv_xmalloc((s->ntracks ? s->ntracks : 1) * sizeof *devices);
    for (uint32_t id = 0; id < s->ntracks; id++)
        devices[id] = xpv_sink_process(s, s->tracks[id].pid)->device_id;
    xpv_pipeline_device_work_done(s, devices, s->ntracks);
}

void xpv_sink_event(xpv_sink *s, const xpv_event *ev)
{
    xpv_pipeline_push(s, ev);
}

/* ---- public: facts ---- */

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

void xpv_sink_fact(xpv_sink *s, const char *key, const char *value)
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

void xpv_sink_skipped(xpv_sink *s, const char *what)
{
    for (size_t i = 0; i < s->nskip; i++)
        if (strcmp(s->skip_names[i], what) == 0) {
            s->skip_counts[i]++;
            return;
        }
    s->skip_names = xpv_xrealloc(s->skip_names, (s->nskip + 1) * sizeof *s->skip_names);
    s->skip_counts = xpv_xrealloc(s->skip_counts, (s->nskip + 1) * sizeof *s->skip_counts);
    s->skip_names[s->nskip] = xpv_xstrdup(what);
    s->skip_counts[s->nskip++] = 1;
}

void xpv_sink_count_read(xpv_sink *s, char ph)
{
    s->read_counts[(unsigned char)ph & 127]++;
    s->has_read_counts = 1;
}

/* ---- public: finish ---- */

static int write_strings(xpv_sink *s, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "INSERT INTO strings(profile_id, id, value) VALUES(?1,?2,?3)", -1,
                           &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(s->db));
    int rc = 0;
    for (size_t id = 0; id < xpv_intern_count(&s->strings) && rc == 0; id++) {
        size_t len;
        const char *value = xpv_intern_get(&s->strings, (uint32_t)id, &len);
        sqlite3_bind_int64(st, 1, s->profile_id);
        sqlite3_bind_int64(st, 2, (int64_t)id);
        sqlite3_bind_text(st, 3, value, (int)len, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(s->db));
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static void bind_text_or_null(sqlite3_stmt *st, int col, const char *s)
{
    if (s)
        sqlite3_bind_text(st, col, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, col);
}

static int write_tracks(xpv_sink *s, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO tracks(profile_id, id, pid, tid, process_name, thread_name,"
                           " process_sort, thread_sort, process_labels, device_id, events, t_min,"
                           " t_max) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(s->db));
    int rc = 0;
    for (uint32_t id = 0; id < s->ntracks && rc == 0; id++) {
        const xpv_track_rec *t = &s->tracks[id];
        const xpv_process_rec *p = xpv_sink_process(s, t->pid);
        xpv_track_count c = id < s->ncounts ? s->counts[id] : (xpv_track_count){0, 0, 0};
        sqlite3_bind_int64(st, 1, s->profile_id);
        sqlite3_bind_int64(st, 2, id);
        sqlite3_bind_int64(st, 3, t->pid);
        sqlite3_bind_int64(st, 4, t->tid);
        bind_text_or_null(st, 5, p->name);
        bind_text_or_null(st, 6, t->name);
        if (p->has_sort)
            sqlite3_bind_int64(st, 7, p->sort);
        else
            sqlite3_bind_null(st, 7);
        if (t->has_sort)
            sqlite3_bind_int64(st, 8, t->sort);
        else
            sqlite3_bind_null(st, 8);
        bind_text_or_null(st, 9, p->labels);
        if (p->device_id >= 0)
            sqlite3_bind_int(st, 10, p->device_id);
        else
            sqlite3_bind_null(st, 10);
        sqlite3_bind_int64(st, 11, c.events);
        if (c.events) {
            sqlite3_bind_int64(st, 12, c.t_min);
            sqlite3_bind_int64(st, 13, c.t_max);
        } else {
            sqlite3_bind_null(st, 12);
            sqlite3_bind_null(st, 13);
        }
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(s->db));
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static const char *string_lookup(void *ctx, uint32_t id, size_t *len)
{
    return xpv_sink_string(ctx, id, len);
}

/* The analysis's rows, and the strings and tracks written while its step
 * join runs (they only read what the reader left; the join never touches
 * SQLite). */
static int write_analysis_and_names(xpv_sink *s, xpv_analysis_result *res, xpv_err *err)
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
    xpv_analysis_input in = {
        .db = s->db,
        .profile_id = s->profile_id,
        .string = string_lookup,
        .string_ctx = s,
        .tracks = infos,
        .ntracks = s->ntracks,
        .producer = s->producer,
    };
    int rc = xpv_analysis_finish_begin(s->analysis, &in, err);
    if (rc == 0) {
        int names_rc = write_strings(s, err) == 0 && write_tracks(s, err) == 0 ? 0 : -1;
        rc = xpv_analysis_finish_end(s->analysis, res, names_rc ? NULL : err);
        if (names_rc) rc = -1;
    }
    free(infos);
    return rc;
}

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

static void facts_json(xpv_sink *s, xpv_buf *out)
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

static void add_device_process_names(xpv_sink *s)
{
    if (s->devices.len) return;
    for (size_t i = 0; i < s->nprocs; i++)
        if (s->procs[i].device_id >= 0 && s->procs[i].name)
            json_item(&s->devices, s->procs[i].name);
}

static int update_profile_row(xpv_sink *s, const xpv_analysis_result *res, xpv_err *err)
{
    xpv_buf facts = {0}, phases = {0}, devices = {0}, warnings = {0};
    facts_json(s, &facts);
    phase_counts_json(s, &phases);
    add_device_process_names(s);
    xpv_buf_printf(&devices, "[%s]", s->devices.data ? s->devices.data : "");
    xpv_buf_printf(&warnings, "[%s]", s->warnings.data ? s->warnings.data : "");
    sqlite3_stmt *st;
    int rc = 0;
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE profiles SET producer=?2, events=?3, start_ns=?4, end_ns=?5,"
                           " devices=?6, facts=?7, phase_counts=?8, step_source=?9, step_count=?10,"
                           " kernel_count=?11, warnings=?12 WHERE id=?1",
                           -1, &st, NULL) != SQLITE_OK)
        rc = xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(s->db));
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, s->profile_id);
        sqlite3_bind_text(st, 2, s->producer, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, s->events);
        if (s->events) {
            sqlite3_bind_int64(st, 4, s->t_min);
            sqlite3_bind_int64(st, 5, s->t_max);
        }
        sqlite3_bind_text(st, 6, devices.data, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 7, facts.data, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 8, phases.data, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 9, res->step_source, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 10, res->step_count);
        sqlite3_bind_int64(st, 11, res->kernel_count);
        sqlite3_bind_text(st, 12, warnings.data, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = xpv_err_set(err, "sqlite: %s", sqlite3_errmsg(s->db));
        sqlite3_finalize(st);
    }
    xpv_buf_free(&facts);
    xpv_buf_free(&phases);
    xpv_buf_free(&devices);
    xpv_buf_free(&warnings);
    return rc;
}

int xpv_sink_finish(xpv_sink *s, xpv_sink_stats *stats, xpv_err *err)
{
    xpv_pipeline_drain(s);
    if (s->writer_failed) {
        if (err) *err = s->writer_err;
        return -1;
    }
    xpv_store_writer *store = s->store;
    s->store = NULL;
    if (xpv_store_writer_close(store, err) != 0) return -1;
    xpv_analysis_result res;
    if (write_analysis_and_names(s, &res, err) != 0) return -1;
    for (char *w = res.warnings, *nl; *w; w = nl ? nl + 1 : w + strlen(w)) {
        if ((nl = strchr(w, '\n'))) *nl = 0;
        json_item(&s->warnings, w);
    }
    if (update_profile_row(s, &res, err) != 0) return -1;
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->events = s->events;
        memcpy(stats->phase_counts, xpv_sink_phase_counts(s), sizeof stats->phase_counts);
    }
    return 0;
}

void xpv_sink_free(xpv_sink *s)
{
    if (!s) return;
    xpv_pipeline_stop(s);
    if (s->store) xpv_store_writer_abandon(s->store);
    if (s->analysis) xpv_analysis_free(s->analysis);
    xpv_intern_free(&s->strings);
    for (size_t i = 0; i < s->nprocs; i++) {
        free(s->procs[i].name);
        free(s->procs[i].labels);
    }
    for (size_t i = 0; i < s->ntracks; i++)
        free(s->tracks[i].name);
    for (size_t i = 0; i < s->nskip; i++)
        free(s->skip_names[i]);
    free(s->skip_names);
    free(s->skip_counts);
    free(s->procs);
    free(s->tracks);
    free(s->track_slots);
    free(s->counts);
    xpv_buf_free(&s->facts);
    xpv_buf_free(&s->devices);
    xpv_buf_free(&s->warnings);
    xpv_pipeline_free(s);
    free(s);
}
