/*
 * ingest_internal.h — the sink's state, shared by the files that make it
 * up and by nothing else:
 *
 *   ingest.c           the public xpv_sink_* calls, the process and track
 *                      tables, open / finish / free (xpv_sink_)
 *   ingest_pipeline.c  the batch ring and the consumer threads running the
 *                      store and analysis stages (ingest_pipeline.h,
 *                      xpv_pipeline_)
 *   ingest_rows.c      the facts, the strings, tracks and profiles rows,
 *                      the analysis's finish between them (xpv_rows_)
 *   intern.c           the string table (intern.h, xpv_intern_)
 *
 * Who owns what (nothing below is locked except the ring's hand-off): the
 * reader's thread owns the intern, process and track tables, the facts and
 * the batch it fills, until xpv_pipeline_drain has joined the consumers;
 * the thread running the store stage owns the store writer, the per-track
 * counters and the totals; the one running the analysis stage owns the
 * analysis. After the drain, everything is the finishing thread's.
 */
#ifndef XPV_INGEST_INTERNAL_H
#define XPV_INGEST_INTERNAL_H

#include "../store/xpv_event.h"
#include "../common/xpv_common.h"
#include "intern.h"
#include "../store/event_store.h"
#include "analysis/analysis.h"

#include <pthread.h>
#include <string.h>

/* The sink, as ingest.h names it; its fields are below. */
typedef struct xpv_sink xpv_sink;

/* ---- tracks and processes (ingest.c) ---- */

typedef struct {
    int64_t pid;
    char *name, *labels;
    int64_t sort;
    int has_sort;
    int device_id;
} xpv_process_rec;

typedef struct {
    int64_t pid, tid;
    char *name;
    int64_t sort;
    int has_sort;
} xpv_track_rec;

typedef struct {
    int64_t events, t_min, t_max;
} xpv_track_count;

/* ---- the batch ring (ingest_pipeline.c) ---- */

/* Four batches of 4096 events keep the reader going through a burst of
 * costly events as well as eight did, for half the memory (~15 MB a
 * sink). A sink whose reader runs the stages itself holds one. */
#define XPV_PIPELINE_NBATCHES 4

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
} xpv_batch;

/* What a consumer does with each full batch, in this order. */
enum { XPV_STAGE_STORE = 1, XPV_STAGE_ANALYSIS = 2, XPV_PIPELINE_MAX_CONSUMERS = 2 };

typedef struct {
    struct xpv_sink *sink;
    unsigned stages;
    pthread_t thread;
} xpv_consumer;

typedef struct {
    xpv_consumer consumers[XPV_PIPELINE_MAX_CONSUMERS];
    int nconsumers, nstarted;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    xpv_batch batches[XPV_PIPELINE_NBATCHES];
    int filling;     /* index of the batch the reader fills */
    uint64_t handed; /* batches handed off so far */
    int quit;
} xpv_pipeline;

/* Fields in the order they had before the split: the reader's tables, the
 * ring (about a kilobyte), then what the consumers write, so that the two
 * sides' busiest fields sit on different cache lines (read_counts, the
 * reader's, is the exception it always was). */
struct xpv_sink {
    sqlite3 *db;
    int64_t profile_id;
    xpv_input_limits limits;
    struct xpv_store_kernel_rows *kernel_rows; /* NULL: inserted into db */
    struct xpv_store_string_rows *string_rows; /* NULL: inserted into db */
    xpv_intern strings;
    xpv_process_rec *procs;
    size_t nprocs, cap_procs;
    xpv_track_rec *tracks;
    size_t ntracks, cap_tracks;
    xpv_hindex track_index; /* hash of (pid, tid) -> track id */
    xpv_buf facts;          /* JSON members, comma separated */
    xpv_buf devices;        /* JSON array members */
    xpv_buf warnings;       /* JSON array members */
    char **skip_names;
    int64_t *skip_counts;
    size_t nskip;
    char producer[32];

    xpv_pipeline pipe;

    /* consumer side: the store writer and the analysis */
    xpv_store_writer *store;
    xpv_analysis *analysis;
    xpv_track_count *counts;
    size_t ncounts;
    int64_t phase_counts[128];
    int64_t read_counts[128]; /* reader thread: phases as read from the file */
    int has_read_counts;
    int64_t events;
    int64_t t_min, t_max;
    int writer_failed;
    xpv_err writer_err;
};

/* ---- the process table (reader's thread; the rows read it at finish) ---- */

/* The record of process pid, created on first use. Here rather than in
 * ingest.c because ingest_rows.c, which ingest.c runs, looks records up. */
static inline xpv_process_rec *xpv_sink_process(xpv_sink *s, int64_t pid)
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

/* ---- the counts ---- */

/* The phase counts the profile reports: the reader's, when it counted. */
static inline const int64_t *xpv_sink_phase_counts(const xpv_sink *s)
{
    return s->has_read_counts ? s->read_counts : s->phase_counts;
}

/* ---- ingest_rows.c ---- */

/* Records a producer fact for the profiles row (see xpv_sink_fact). */
void xpv_rows_fact(xpv_sink *s, const char *key, const char *value);
/* Runs the analysis's finish, writing the strings and tracks rows while its
 * step join runs; fills res. */
int xpv_rows_names_and_analysis(xpv_sink *s, xpv_analysis_result *res, xpv_err *err);
/* Adds res's warnings to the reader's and writes the profile's totals,
 * facts and res into its profiles row. */
int xpv_rows_update_profile(xpv_sink *s, xpv_analysis_result *res, xpv_err *err);

#endif
