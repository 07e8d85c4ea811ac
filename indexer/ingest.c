/*
 * ingest.c — the sink readers write into (see ingest.h).
 *
 * The reader's thread interns strings, resolves tracks and copies events
 * into a ring of batches; each full batch goes through two stages, the
 * event store and the analysis, on consumer threads. With three or more
 * CPUs each stage has its own thread. With two or fewer, one thread runs
 * both: every reader is slower than the two stages together, and a third
 * busy thread would only preempt it (a producer cheaper than the stages,
 * as in bench_store, is faster with two). The ring lets the consumers fall
 * a few batches behind in a burst of costly events without stopping the
 * reader.
 *
 * Invariants: the intern and track tables are touched only by the reader's
 * thread until xpv_sink_finish has joined the consumers; the thread running
 * the store stage owns the store and the per-track counters, the one
 * running the analysis stage the analysis; each consumer takes the batches
 * in the order they were filled; a handed-off batch is only read until
 * every consumer is done with it. String id 0 is "".
 */
#define _GNU_SOURCE
#include "ingest.h"
#include "intern.h"
#include "event_store.h"
#include "analysis/analysis.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBATCHES 8
#define BATCH_EVENTS 4096
#define BATCH_ARGS 32768
#define BATCH_ARENA (2u << 20)
#define INTERN_MAX_VALUE_LEN 256
#define INTERN_MAX_BYTES (256u << 20)

/* ---- tracks and processes ---- */

typedef struct {
    int64_t pid;
    char *name, *labels;
    int64_t sort;
    int has_sort;
    int device_id;
} process_rec;

typedef struct {
    int64_t pid, tid;
    char *name;
    int64_t sort;
    int has_sort;
} track_rec;

typedef struct {
    int64_t events, t_min, t_max;
} track_count;

/* ---- batches ---- */

typedef struct {
    xpv_event *evs;
    xpv_launch *launches;
    xpv_arg *args;
    char *arena;
    size_t nev, nargs, arena_len;
    size_t cap_ev, cap_args, cap_arena;
    int pending; /* consumers not yet done with it; 0: free to fill */
    /* set when the device work ended after its events: the track devices
     * then, for the analysis stage (which frees them) */
    int *track_devices;
    size_t ntrack_devices;
} batch;

/* What a consumer does with each full batch, in this order. */
enum { STAGE_STORE = 1, STAGE_ANALYSIS = 2, MAX_CONSUMERS = 2 };

typedef struct {
    struct xpv_sink *sink;
    unsigned stages;
    pthread_t thread;
} consumer;

struct xpv_sink {
    sqlite3 *db;
    int64_t profile_id;
    xpv_intern strings;
    process_rec *procs;
    size_t nprocs, cap_procs;
    track_rec *tracks;
    size_t ntracks, cap_tracks;
    /* (pid, tid) -> track id + 1, open addressing */
    uint32_t *track_slots;
    size_t ntrack_slots;
    xpv_buf facts;    /* JSON members, comma separated */
    xpv_buf devices;  /* JSON array members */
    xpv_buf warnings; /* JSON array members */
    char **skip_names;
    int64_t *skip_counts;
    size_t nskip;
    char producer[32];

    /* consumer side: the store writer and the analysis */
    consumer consumers[MAX_CONSUMERS];
    int nconsumers, nstarted;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    batch batches[NBATCHES];
    int filling;     /* index of the batch the reader fills */
    uint64_t handed; /* batches handed off so far */
    int quit;
    xpv_store_writer *store;
    xpv_analysis *analysis;
    track_count *counts;
    size_t ncounts;
    int64_t phase_counts[128];
    int64_t read_counts[128]; /* reader thread: phases as read from the file */
    int has_read_counts;
    int64_t events;
    int64_t t_min, t_max;
    int writer_failed;
    xpv_err writer_err;
};

static void batch_init(batch *b)
{
    b->cap_ev = BATCH_EVENTS;
    b->cap_args = BATCH_ARGS;
    b->cap_arena = BATCH_ARENA;
    b->evs = xpv_xmalloc(b->cap_ev * sizeof *b->evs);
    b->launches = xpv_xmalloc(b->cap_ev * sizeof *b->launches);
    b->args = xpv_xmalloc(b->cap_args * sizeof *b->args);
    b->arena = xpv_xmalloc(b->cap_arena);
    b->nev = b->nargs = b->arena_len = 0;
    b->pending = 0;
}

static void batch_free(batch *b)
{
    free(b->evs);
    free(b->launches);
    free(b->args);
    free(b->arena);
    free(b->track_devices);
}

/* ---- writer thread ---- */

static void count_event(xpv_sink *s, const xpv_event *ev)
{
    if (ev->track >= s->ncounts) {
        size_t n = s->ncounts ? s->ncounts : 64;
        while (n <= ev->track)
            n *= 2;
        s->counts = xpv_xrealloc(s->counts, n * sizeof *s->counts);
        memset(s->counts + s->ncounts, 0, (n - s->ncounts) * sizeof *s->counts);
        s->ncounts = n;
    }
    track_count *c = &s->counts[ev->track];
    int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    if (c->events == 0 || ev->ts_ns < c->t_min) c->t_min = ev->ts_ns;
    if (c->events == 0 || end > c->t_max) c->t_max = end;
    c->events++;
    if (s->events == 0 || ev->ts_ns < s->t_min) s->t_min = ev->ts_ns;
    if (s->events == 0 || end > s->t_max) s->t_max = end;
    s->events++;
    s->phase_counts[(unsigned char)ev->ph & 127]++;
}

static void store_batch(xpv_sink *s, const batch *b)
{
    for (size_t i = 0; i < b->nev; i++) {
        const xpv_event *ev = &b->evs[i];
        count_event(s, ev);
        if (!s->writer_failed && xpv_store_add(s->store, ev, &s->writer_err) != 0)
            s->writer_failed = 1;
    }
}

static void analyse_batch(xpv_sink *s, batch *b)
{
    for (size_t i = 0; i < b->nev; i++)
        xpv_analysis_event(s->analysis, &b->evs[i]);
    if (b->track_devices) {
        xpv_analysis_device_work_done(s->analysis, b->track_devices, b->ntrack_devices);
        free(b->track_devices);
        b->track_devices = NULL;
    }
}

/* Each consumer takes every batch once, in the order they were handed
 * off; a batch is free for refilling when the last consumer is done. */
static void *consumer_main(void *arg)
{
    consumer *c = arg;
    xpv_sink *s = c->sink;
    uint64_t taken = 0;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->handed == taken && !s->quit)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->handed == taken) break; /* quitting, nothing left */
        batch *b = &s->batches[taken++ % NBATCHES];
        pthread_mutex_unlock(&s->mu);
        if (c->stages & STAGE_STORE) store_batch(s, b);
        if (c->stages & STAGE_ANALYSIS) analyse_batch(s, b);
        pthread_mutex_lock(&s->mu);
        if (--b->pending == 0) pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Hands the filled batch to the consumers and starts filling the next one
 * of the ring, once the consumers are done with what it held. */
static void hand_off(xpv_sink *s)
{
    pthread_mutex_lock(&s->mu);
    s->batches[s->filling].pending = s->nconsumers;
    s->handed++;
    pthread_cond_broadcast(&s->cv);
    s->filling = (s->filling + 1) % NBATCHES;
    batch *next = &s->batches[s->filling];
    while (next->pending)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    next->nev = next->nargs = next->arena_len = 0;
}

static void wait_consumers_idle(xpv_sink *s)
{
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < NBATCHES; i++)
        while (s->batches[i].pending)
            pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

/* 1 or 2 consumer threads (see the top of this file); XPV_INGEST_CONSUMERS
 * chooses, for tests and measurements. */
static int consumer_count(void)
{
    const char *env = getenv("XPV_INGEST_CONSUMERS");
    if (env && (strcmp(env, "1") == 0 || strcmp(env, "2") == 0)) return env[0] - '0';
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                            : sysconf(_SC_NPROCESSORS_ONLN);
    return cpus >= 3 ? 2 : 1;
}

static int start_consumers(xpv_sink *s, xpv_err *err)
{
    s->nconsumers = consumer_count();
    static const unsigned split[MAX_CONSUMERS] = {STAGE_STORE, STAGE_ANALYSIS};
    for (int i = 0; i < s->nconsumers; i++) {
        unsigned stages = s->nconsumers == 1 ? STAGE_STORE | STAGE_ANALYSIS : split[i];
        s->consumers[i] = (consumer){s, stages, 0};
        if (pthread_create(&s->consumers[i].thread, NULL, consumer_main, &s->consumers[i]) != 0)
            return xpv_err_set(err, "cannot start the index writer threads");
        s->nstarted++;
    }
    return 0;
}

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
    for (int i = 0; i < NBATCHES; i++)
        batch_init(&s->batches[i]);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->analysis = xpv_analysis_new();
    s->store = xpv_store_writer_open(db, profile_id, err);
    if (!s->store) {
        xpv_sink_free(s);
        return NULL;
    }
    if (start_consumers(s, err) != 0) {
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

static process_rec *find_process(xpv_sink *s, int64_t pid)
{
    for (size_t i = s->nprocs; i-- > 0;)
        if (s->procs[i].pid == pid) return &s->procs[i];
    if (s->nprocs == s->cap_procs) {
        s->cap_procs = s->cap_procs ? s->cap_procs * 2 : 16;
        s->procs = xpv_xrealloc(s->procs, s->cap_procs * sizeof *s->procs);
    }
    process_rec *p = &s->procs[s->nprocs++];
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
        track_rec *t = &s->tracks[slot - 1];
        if (t->pid == pid && t->tid == tid) return slot - 1;
    }
    if (s->ntracks == s->cap_tracks) {
        s->cap_tracks = s->cap_tracks ? s->cap_tracks * 2 : 64;
        s->tracks = xpv_xrealloc(s->tracks, s->cap_tracks * sizeof *s->tracks);
    }
    uint32_t id = (uint32_t)s->ntracks++;
    s->tracks[id] = (track_rec){.pid = pid, .tid = tid};
    s->track_slots[h] = id + 1;
    find_process(s, pid);
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
    set_text(&find_process(s, pid)->name, name, len);
}

void xpv_sink_process_sort(xpv_sink *s, int64_t pid, int64_t sort_index)
{
    process_rec *p = find_process(s, pid);
    p->sort = sort_index;
    p->has_sort = 1;
}

void xpv_sink_process_label(xpv_sink *s, int64_t pid, const char *labels, size_t len)
{
    set_text(&find_process(s, pid)->labels, labels, len);
}

void xpv_sink_process_device(xpv_sink *s, int64_t pid, int device_id)
{
    find_process(s, pid)->device_id = device_id;
}

void xpv_sink_thread_name(xpv_sink *s, int64_t pid, int64_t tid, const char *name, size_t len)
{
    set_text(&s->tracks[xpv_sink_track(s, pid, tid)].name, name, len);
}

void xpv_sink_thread_sort(xpv_sink *s, int64_t pid, int64_t tid, int64_t sort_index)
{
    track_rec *t = &s->tracks[xpv_sink_track(s, pid, tid)];
    t->sort = sort_index;
    t->has_sort = 1;
}

/* ---- public: events ---- */

static int batch_fits(const batch *b, const xpv_event *ev, size_t text_bytes)
{
    return b->nev < b->cap_ev && b->nargs + ev->nargs <= b->cap_args &&
           b->arena_len + text_bytes <= b->cap_arena;
}

/* Grows an empty batch so that one oversized event fits. */
static void batch_grow_for(batch *b, const xpv_event *ev, size_t text_bytes)
{
    assert(b->nev == 0);
    if (ev->nargs > b->cap_args) {
        b->cap_args = ev->nargs;
        b->args = xpv_xrealloc(b->args, b->cap_args * sizeof *b->args);
    }
    if (text_bytes > b->cap_arena) {
        b->cap_arena = text_bytes;
        b->arena = xpv_xrealloc(b->arena, b->cap_arena);
    }
}

void xpv_sink_device_work_done(xpv_sink *s)
{
    batch *b = &s->batches[s->filling];
    free(b->track_devices);
    b->ntrack_devices = s->ntracks;
    b->track_devices = xpv_xmalloc((s->ntracks ? s->ntracks : 1) * sizeof *b->track_devices);
    for (uint32_t id = 0; id < s->ntracks; id++)
        b->track_devices[id] = find_process(s, s->tracks[id].pid)->device_id;
}

void xpv_sink_event(xpv_sink *s, const xpv_event *ev)
{
    size_t text_bytes = 0;
    for (uint32_t i = 0; i < ev->nargs; i++)
        if (ev->args[i].type == XPV_ARG_TEXT || ev->args[i].type == XPV_ARG_JSON)
            text_bytes += ev->args[i].len;
    batch *b = &s->batches[s->filling];
    if (!batch_fits(b, ev, text_bytes)) {
        if (b->nev) hand_off(s);
        b = &s->batches[s->filling];
        if (!batch_fits(b, ev, text_bytes)) batch_grow_for(b, ev, text_bytes);
    }
    xpv_event *dst = &b->evs[b->nev];
    *dst = *ev;
    if (ev->launch) {
        b->launches[b->nev] = *ev->launch;
        dst->launch = &b->launches[b->nev];
    }
    dst->args = ev->nargs ? &b->args[b->nargs] : NULL;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        xpv_arg a = ev->args[i];
        if (a.type == XPV_ARG_TEXT || a.type == XPV_ARG_JSON) {
            memcpy(b->arena + b->arena_len, a.text, a.len);
            a.text = b->arena + b->arena_len;
            b->arena_len += a.len;
        }
        b->args[b->nargs++] = a;
    }
    b->nev++;
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
        const track_rec *t = &s->tracks[id];
        const process_rec *p = find_process(s, t->pid);
        track_count c = id < s->ncounts ? s->counts[id] : (track_count){0, 0, 0};
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
        const track_rec *t = &s->tracks[id];
        const process_rec *p = find_process(s, t->pid);
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
    const int64_t *counts = s->has_read_counts ? s->read_counts : s->phase_counts;
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

static void stop_consumers(xpv_sink *s)
{
    if (!s->nstarted) return;
    pthread_mutex_lock(&s->mu);
    s->quit = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->nstarted; i++)
        pthread_join(s->consumers[i].thread, NULL);
    s->nstarted = 0;
}

int xpv_sink_finish(xpv_sink *s, xpv_sink_stats *stats, xpv_err *err)
{
    const batch *last = &s->batches[s->filling];
    if (last->nev || last->track_devices) hand_off(s);
    wait_consumers_idle(s);
    stop_consumers(s);
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
        memcpy(stats->phase_counts, s->has_read_counts ? s->read_counts : s->phase_counts,
               sizeof stats->phase_counts);
    }
    return 0;
}

void xpv_sink_free(xpv_sink *s)
{
    if (!s) return;
    stop_consumers(s);
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
    for (int i = 0; i < NBATCHES; i++)
        batch_free(&s->batches[i]);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
