/*
 * ingest.c — the sink readers write into (see ingest.h): its public calls,
 * the process and track tables they fill (the process lookup is inline in
 * ingest_internal.h), and the glue that opens and finishes a sink. Strings
 * are interned by intern.c, events travel to the store and the analysis
 * through ingest_pipeline.c, and ingest_rows.c writes the rows;
 * ingest_internal.h says which thread owns what.
 *
 * Invariants: the process and track tables are touched only by the
 * reader's thread until xpv_sink_finish has drained the pipeline; track ids
 * are dense from 0 in order of first use, and a track's process record
 * exists from the track's creation on. String id 0 is "".
 */
#include "ingest.h"
#include "ingest_internal.h"
#include "ingest_pipeline.h"
#include "../store/index_db.h"

#include <stdio.h>
#include <stdlib.h>

/* Arg values are interned only while short and while the table is under
 * budget: unique values (paths, ids) would otherwise grow it unbounded. */
#define INTERN_MAX_VALUE_LEN 256
#define INTERN_MAX_BYTES (256u << 20)

/* ---- public: open ---- */

xpv_sink *xpv_sink_open(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    return xpv_sink_open_with(db, profile_id, XPV_SINK_STAGES_THREADED, err);
}

xpv_sink *xpv_sink_open_with(sqlite3 *db, int64_t profile_id, enum xpv_sink_stages stages,
                             xpv_err *err)
{
    xpv_sink *s = xpv_xcalloc(1, sizeof *s);
    s->db = db;
    s->profile_id = profile_id;
    s->limits = XPV_INPUT_LIMITS_DEFAULT;
    xpv_intern_init(&s->strings);
    snprintf(s->producer, sizeof s->producer, "unknown");
    xpv_pipeline_init(s);
    s->analysis = xpv_analysis_new();
    s->store = xpv_store_writer_open(db, profile_id, err);
    if (!s->store) {
        xpv_sink_free(s);
        return NULL;
    }
    if (xpv_pipeline_start(s, stages == XPV_SINK_STAGES_INLINE, err) != 0) {
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

static uint64_t track_hash(int64_t pid, int64_t tid)
{
    int64_t key[2] = {pid, tid};
    return xpv_hash64(key, sizeof key);
}

uint32_t xpv_sink_track(xpv_sink *s, int64_t pid, int64_t tid)
{
    xpv_hprobe p = xpv_hindex_probe(&s->track_index, track_hash(pid, tid));
    for (uint64_t id; xpv_hindex_next(&s->track_index, &p, &id);)
        if (s->tracks[id].pid == pid && s->tracks[id].tid == tid) return (uint32_t)id;
    if (s->ntracks == s->cap_tracks) {
        s->cap_tracks = s->cap_tracks ? s->cap_tracks * 2 : 64;
        s->tracks = xpv_xrealloc(s->tracks, s->cap_tracks * sizeof *s->tracks);
    }
    uint32_t id = (uint32_t)s->ntracks++;
    s->tracks[id] = (xpv_track_rec){.pid = pid, .tid = tid};
    xpv_hindex_insert_at(&s->track_index, &p, id);
    xpv_sink_process(s, pid);
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

/* The track id first: a new track may move s->tracks, and C leaves the
 * order of `s->tracks[xpv_sink_track(...)]`'s two reads unspecified. */
void xpv_sink_thread_name(xpv_sink *s, int64_t pid, int64_t tid, const char *name, size_t len)
{
    uint32_t id = xpv_sink_track(s, pid, tid);
    set_text(&s->tracks[id].name, name, len);
}

void xpv_sink_thread_sort(xpv_sink *s, int64_t pid, int64_t tid, int64_t sort_index)
{
    uint32_t id = xpv_sink_track(s, pid, tid);
    xpv_track_rec *t = &s->tracks[id];
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

void xpv_sink_fact(xpv_sink *s, const char *key, const char *value)
{
    xpv_rows_fact(s, key, value);
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
    if (xpv_rows_names_and_analysis(s, &res, err) != 0) return -1;
    if (xpv_rows_update_profile(s, &res, err) != 0) return -1;
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
    xpv_hindex_free(&s->track_index);
    free(s->counts);
    xpv_buf_free(&s->facts);
    xpv_buf_free(&s->devices);
    xpv_buf_free(&s->warnings);
    xpv_pipeline_free(s);
    free(s);
}

void xpv_sink_set_limits(xpv_sink *s, const xpv_input_limits *limits)
{
    s->limits = *limits;
}

const xpv_input_limits *xpv_sink_limits(const xpv_sink *s)
{
    return &s->limits;
}

void xpv_sink_defer_rows(xpv_sink *s, struct xpv_index_part_rows *rows)
{
    s->kernel_rows = rows ? &rows->kernel : NULL;
    s->string_rows = rows ? &rows->strings : NULL;
}
