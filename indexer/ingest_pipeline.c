/*
 * ingest_pipeline.c — the ring of batches between the reader's thread and
 * the consumer threads, and the two stages a consumer runs on each batch:
 * the event store (with the per-track counters) and the analysis.
 *
 * With three or more CPUs each stage has its own thread. With two or
 * fewer, one thread runs both: every reader is slower than the two stages
 * together, and a third busy thread would only preempt it (a producer
 * cheaper than the stages, as in bench_store, is faster with two). When
 * files are indexed side by side and their workers fill the CPUs
 * (index_jobs.h says when), the reader's thread runs both stages itself
 * as each batch fills (inline): consumer threads would only take turns
 * with the other workers, and each file's would be started, faulted in
 * and switched to anew (8% of a 256-host pod's CPU on two cores). The
 * ring is then one batch. XPV_INGEST_CONSUMERS=0|1|2 overrides, for tests
 * and measurements. The ring lets the consumers fall a few batches behind
 * in a burst of costly events without stopping the reader.
 *
 * Invariants: each consumer takes every batch once, in the order they were
 * handed off (inline: the reader runs the stages on it at once); a
 * handed-off batch is only read until every consumer is done with it
 * (pending == 0), and only then refilled; the stages of one batch run in
 * order, store then analysis, when one thread runs both; once drained,
 * the ring holds no buffers and takes no event.
 */
#define _GNU_SOURCE
#include "ingest_pipeline.h"

#include <assert.h>
#include <stdlib.h>
#include <unistd.h>

#define BATCH_EVENTS 4096
#define BATCH_ARGS 32768
#define BATCH_ARENA (2u << 20)

static void batch_init(xpv_batch *b)
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

/* Leaves b empty (no buffers), so that freeing it again is harmless. */
static void batch_free(xpv_batch *b)
{
    free(b->evs);
    free(b->launches);
    free(b->args);
    free(b->arena);
    free(b->track_devices);
    memset(b, 0, sizeof *b);
}

void xpv_pipeline_init(xpv_sink *s)
{
    pthread_mutex_init(&s->pipe.mu, NULL);
    pthread_cond_init(&s->pipe.cv, NULL);
}

void xpv_pipeline_free(xpv_sink *s)
{
    for (int i = 0; i < XPV_PIPELINE_NBATCHES; i++)
        batch_free(&s->pipe.batches[i]);
    pthread_mutex_destroy(&s->pipe.mu);
    pthread_cond_destroy(&s->pipe.cv);
}

/* ---- the stages ---- */

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
    xpv_track_count *c = &s->counts[ev->track];
    int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    if (c->events == 0 || ev->ts_ns < c->t_min) c->t_min = ev->ts_ns;
    if (c->events == 0 || end > c->t_max) c->t_max = end;
    c->events++;
    if (s->events == 0 || ev->ts_ns < s->t_min) s->t_min = ev->ts_ns;
    if (s->events == 0 || end > s->t_max) s->t_max = end;
    s->events++;
    s->phase_counts[(unsigned char)ev->ph & 127]++;
}

/* A store error stops the writes, not the counting: finish reports it. */
static void store_batch(xpv_sink *s, const xpv_batch *b)
{
    for (size_t i = 0; i < b->nev; i++) {
        const xpv_event *ev = &b->evs[i];
        count_event(s, ev);
        if (!s->writer_failed && xpv_store_add(s->store, ev, &s->writer_err) != 0)
            s->writer_failed = 1;
    }
}

static void analyse_batch(xpv_sink *s, xpv_batch *b)
{
    for (size_t i = 0; i < b->nev; i++)
        xpv_analysis_event(s->analysis, &b->evs[i]);
    if (b->track_devices) {
        xpv_analysis_device_work_done(s->analysis, b->track_devices, b->ntrack_devices);
        free(b->track_devices);
        b->track_devices = NULL;
    }
}

/* ---- the consumer threads ---- */

static void *consumer_main(void *arg)
{
    xpv_consumer *c = arg;
    xpv_sink *s = c->sink;
    xpv_pipeline *p = &s->pipe;
    uint64_t taken = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->handed == taken && !p->quit)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->handed == taken) break; /* quitting, nothing left */
        xpv_batch *b = &p->batches[taken++ % XPV_PIPELINE_NBATCHES];
        pthread_mutex_unlock(&p->mu);
        if (c->stages & XPV_STAGE_STORE) store_batch(s, b);
        if (c->stages & XPV_STAGE_ANALYSIS) analyse_batch(s, b);
        pthread_mutex_lock(&p->mu);
        if (--b->pending == 0) pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int consumer_count(int inline_stages)
{
    const char *env = getenv("XPV_INGEST_CONSUMERS");
    if (env && env[0] >= '0' && env[0] <= '2' && env[1] == 0) return env[0] - '0';
    if (inline_stages) return 0;
    return xpv_cpu_count() >= 3 ? 2 : 1;
}

int xpv_pipeline_start(xpv_sink *s, int inline_stages, xpv_err *err)
{
    xpv_pipeline *p = &s->pipe;
    p->nconsumers = consumer_count(inline_stages);
    for (int i = 0; i < (p->nconsumers ? XPV_PIPELINE_NBATCHES : 1); i++)
        batch_init(&p->batches[i]);
    static const unsigned split[XPV_PIPELINE_MAX_CONSUMERS] = {XPV_STAGE_STORE, XPV_STAGE_ANALYSIS};
    for (int i = 0; i < p->nconsumers; i++) {
        unsigned stages = p->nconsumers == 1 ? XPV_STAGE_STORE | XPV_STAGE_ANALYSIS : split[i];
        p->consumers[i] = (xpv_consumer){s, stages, 0};
        if (pthread_create(&p->consumers[i].thread, NULL, consumer_main, &p->consumers[i]) != 0)
            return xpv_err_set(err, "cannot start the index writer threads");
        p->nstarted++;
    }
    return 0;
}

void xpv_pipeline_stop(xpv_sink *s)
{
    xpv_pipeline *p = &s->pipe;
    if (!p->nstarted) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nstarted; i++)
        pthread_join(p->consumers[i].thread, NULL);
    p->nstarted = 0;
}

/* ---- the reader's side ---- */

void xpv_pipeline_hand_off(xpv_sink *s)
{
    xpv_pipeline *p = &s->pipe;
    if (p->nconsumers == 0) { /* inline: the one batch, emptied at once */
        xpv_batch *b = &p->batches[p->filling];
        store_batch(s, b);
        analyse_batch(s, b);
        b->nev = b->nargs = b->arena_len = 0;
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->batches[p->filling].pending = p->nconsumers;
    p->handed++;
    pthread_cond_broadcast(&p->cv);
    p->filling = (p->filling + 1) % XPV_PIPELINE_NBATCHES;
    xpv_batch *next = &p->batches[p->filling];
    while (next->pending)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    next->nev = next->nargs = next->arena_len = 0;
}

void xpv_pipeline_grow_for(xpv_batch *b, const xpv_event *ev, size_t text_bytes)
{
    assert(b->nev == 0 && b->cap_ev > 0); /* not drained */
    if (ev->nargs > b->cap_args) {
        b->cap_args = ev->nargs;
        b->args = xpv_xrealloc(b->args, b->cap_args * sizeof *b->args);
    }
    if (text_bytes > b->cap_arena) {
        b->cap_arena = text_bytes;
        b->arena = xpv_xrealloc(b->arena, b->cap_arena);
    }
}

void xpv_pipeline_device_work_done(xpv_sink *s, int *track_devices, size_t n)
{
    xpv_batch *b = &s->pipe.batches[s->pipe.filling];
    free(b->track_devices);
    b->track_devices = track_devices;
    b->ntrack_devices = n;
}

static void wait_idle(xpv_pipeline *p)
{
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < XPV_PIPELINE_NBATCHES; i++)
        while (p->batches[i].pending)
            pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void xpv_pipeline_drain(xpv_sink *s)
{
    const xpv_batch *last = &s->pipe.batches[s->pipe.filling];
    if (last->nev || last->track_devices) xpv_pipeline_hand_off(s);
    wait_idle(&s->pipe);
    xpv_pipeline_stop(s);
    /* no event comes after: the ring's ~15 MB go before the analysis'
     * finish allocates its own */
    for (int i = 0; i < XPV_PIPELINE_NBATCHES; i++)
        batch_free(&s->pipe.batches[i]);
}
