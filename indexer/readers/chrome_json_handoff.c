/*
 * chrome_json_handoff.c — the queue between the JSON reader's tokenizer
 * thread and its parser thread: a ring of batches of events, filled by the
 * tokenizer and mapped in order by the parser, which runs on a thread
 * started here for the traceEvents array.
 *
 * Invariants: ring[head] is the tokenizer's; the `count` batches before it
 * are the parser's, oldest first, and the parser takes the oldest without
 * taking it out of the count until it is mapped, so count == 0 means the
 * parser is idle. A chunk a batch carries is given back only after the
 * batch is mapped, which keeps every chunk the parser may read held; the
 * ring's size bounds how far the tokenizer runs ahead (and with gz_input's
 * ring, the memory). Once the parser fails it maps nothing more but still
 * gives the chunks back, so neither the tokenizer nor the inflater waits
 * forever.
 *
 * With two CPUs or fewer a second thread has no core to run on (inflating
 * and the sink's consumer take the other), so the tokenizer maps each
 * batch itself when it passes it on: the same batches in the same order,
 * without the handoff's cost. XPV_JSON_PARSER=thread|inline overrides, for
 * tests and measurements.
 */
#include "chrome_json_internal.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NBATCHES 8
#define WAKE_AT 2
/* A batch's members are freed after use past this many (one huge event). */
#define KEEP_MEMBERS (1u << 18)

struct xpv_cj_handoff {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    xpv_cj_batch ring[NBATCHES];
    unsigned head, count;
    int closing, failed;
    int inline_; /* no parser thread: batches are mapped as they are passed on */
};

static int map_batch(xpv_cj_reader *r, const xpv_cj_batch *b)
{
    r->members = b->members;
    r->ev_w = b->w;
    r->ev_w_off = b->w_off;
    for (uint32_t i = 0; i < b->nevents; i++)
        if (xpv_cj_process_event(r, &b->events[i]) != 0) return -1;
    return 0;
}

static void reset_batch(xpv_cj_reader *r, xpv_cj_batch *b)
{
    if (b->has_release) xpv_gz_release(r->in, &b->release);
    b->has_release = 0;
    b->nevents = 0;
    b->nmembers = 0;
    if (b->cap_members > KEEP_MEMBERS) {
        free(b->members);
        b->members = NULL;
        b->cap_members = 0;
    }
}

static void *parser_main(void *arg)
{
    xpv_cj_reader *r = arg;
    xpv_cj_handoff *h = r->handoff;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (h->count == 0 && !h->closing)
            pthread_cond_wait(&h->cv, &h->mu);
        if (h->count == 0) break;
        xpv_cj_batch *b = &h->ring[(h->head + NBATCHES - h->count) % NBATCHES];
        int failed = h->failed;
        pthread_mutex_unlock(&h->mu);
        if (!failed) failed = map_batch(r, b) != 0;
        reset_batch(r, b);
        pthread_mutex_lock(&h->mu);
        h->failed |= failed;
        h->count--;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* The parser has failed: the tokenizer stops at once, under an error the
 * finish replaces with the parser's own. */
static int parser_failed(xpv_cj_reader *r)
{
    if (!r->err->msg[0]) xpv_err_set(r->err, "the JSON parser stopped");
    return -1;
}

static int want_thread(void)
{
    const char *env = getenv("XPV_JSON_PARSER");
    if (env && strcmp(env, "thread") == 0) return 1;
    if (env && strcmp(env, "inline") == 0) return 0;
    return xpv_cpu_count() >= 3;
}

/* Without a parser thread: maps r->tok now and reuses it. */
static int map_inline(xpv_cj_reader *r, const xpv_gz_chunk *release)
{
    xpv_cj_handoff *h = r->handoff;
    xpv_cj_batch *b = r->tok;
    b->w = r->w;
    b->w_off = r->w_off;
    if (release) {
        b->release = *release;
        b->has_release = 1;
    }
    if (!h->failed) h->failed = map_batch(r, b) != 0;
    reset_batch(r, b);
    return h->failed ? parser_failed(r) : 0;
}

int xpv_cj_handoff_start(xpv_cj_reader *r)
{
    assert(!r->handoff);
    xpv_cj_handoff *h = xpv_xcalloc(1, sizeof *h);
    for (int i = 0; i < NBATCHES; i++)
        h->ring[i].events = xpv_xmalloc(XPV_CJ_BATCH_EVENTS * sizeof *h->ring[i].events);
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    r->handoff = h;
    r->tok = &h->ring[0];
    h->inline_ = !want_thread();
    if (h->inline_) return 0;
    if (pthread_create(&h->thread, NULL, parser_main, r) != 0) {
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
        for (int i = 0; i < NBATCHES; i++)
            free(h->ring[i].events);
        free(h);
        r->handoff = NULL;
        r->tok = NULL;
        return xpv_err_set(r->err, "cannot start the JSON parser thread");
    }
    return 0;
}

/* Queues r->tok (under the lock), stamped with the window it lies in. */
static void enqueue(xpv_cj_reader *r, const xpv_gz_chunk *release)
{
    xpv_cj_handoff *h = r->handoff;
    xpv_cj_batch *b = r->tok;
    assert(b == &h->ring[h->head] && h->count < NBATCHES);
    b->w = r->w;
    b->w_off = r->w_off;
    if (release) {
        b->release = *release;
        b->has_release = 1;
    }
    h->count++;
    h->head = (h->head + 1) % NBATCHES;
    /* A parser woken for every batch sleeps again at once: wake it for
     * two, or for a chunk it must give back so that inflating goes on. */
    if (h->count >= WAKE_AT || release) pthread_cond_broadcast(&h->cv);
}

int xpv_cj_handoff_push(xpv_cj_reader *r, const xpv_gz_chunk *release)
{
    xpv_cj_handoff *h = r->handoff;
    if (!release && r->tok->nevents == 0) return 0;
    if (h->inline_) return map_inline(r, release);
    pthread_mutex_lock(&h->mu);
    enqueue(r, release);
    while (h->count == NBATCHES)
        pthread_cond_wait(&h->cv, &h->mu);
    r->tok = &h->ring[h->head];
    int failed = h->failed;
    pthread_mutex_unlock(&h->mu);
    return failed ? parser_failed(r) : 0;
}

int xpv_cj_handoff_idle(xpv_cj_reader *r)
{
    xpv_cj_handoff *h = r->handoff;
    if (h->inline_) return map_inline(r, NULL);
    pthread_mutex_lock(&h->mu);
    if (r->tok->nevents) enqueue(r, NULL);
    pthread_cond_broadcast(&h->cv);
    while (h->count > 0)
        pthread_cond_wait(&h->cv, &h->mu);
    r->tok = &h->ring[h->head];
    int failed = h->failed;
    pthread_mutex_unlock(&h->mu);
    return failed ? parser_failed(r) : 0;
}

int xpv_cj_handoff_finish(xpv_cj_reader *r)
{
    xpv_cj_handoff *h = r->handoff;
    if (!h) return 0;
    if (h->inline_) {
        map_inline(r, NULL);
    } else {
        pthread_mutex_lock(&h->mu);
        if (r->tok->nevents) enqueue(r, NULL);
        h->closing = 1;
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->thread, NULL);
    }
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    for (int i = 0; i < NBATCHES; i++) {
        free(h->ring[i].events);
        free(h->ring[i].members);
    }
    int failed = h->failed;
    free(h);
    r->handoff = NULL;
    r->tok = NULL;
    r->members = NULL;
    if (failed) *r->err = r->perr;
    return failed || r->err->msg[0] ? -1 : 0;
}
