/*
 * ingest_pipeline.h — the batch ring between the reader's thread and the
 * consumers (ingest_pipeline.c): starting and stopping them, and the push
 * the reader calls for every event. The ring's types are in
 * ingest_internal.h, with the sink that holds it.
 */
#ifndef XPV_INGEST_PIPELINE_H
#define XPV_INGEST_PIPELINE_H

#include "ingest_internal.h"

#include <string.h>

void xpv_pipeline_init(xpv_sink *s);
/* Makes the ring and starts the consumer threads: none when inline_stages
 * (the reader's thread runs the stages), else one running both stages on
 * two CPUs or fewer, one per stage with three or more;
 * XPV_INGEST_CONSUMERS=0|1|2 overrides. */
int xpv_pipeline_start(xpv_sink *s, int inline_stages, xpv_err *err);
/* Hands the filled batch to the consumers and waits until the next one of
 * the ring is free to fill; inline, runs both stages on it and empties it. */
void xpv_pipeline_hand_off(xpv_sink *s);
/* Grows an empty batch so that one oversized event fits. */
void xpv_pipeline_grow_for(xpv_batch *b, const xpv_event *ev, size_t text_bytes);
/* Has the analysis stage learn, after the events filled so far, that the
 * device work is done; takes track_devices (malloc'ed, n entries). */
void xpv_pipeline_device_work_done(xpv_sink *s, int *track_devices, size_t n);
/* Hands off what is left, waits until both stages have taken every batch,
 * joins the consumers and frees the batches: no event may follow. */
void xpv_pipeline_drain(xpv_sink *s);
/* Joins the consumers (if running) without waiting for their work. */
void xpv_pipeline_stop(xpv_sink *s);
/* Frees the ring, after xpv_pipeline_stop. */
void xpv_pipeline_free(xpv_sink *s);

static inline int xpv_pipeline_fits(const xpv_batch *b, const xpv_event *ev, size_t text_bytes)
{
    return b->nev < b->cap_ev && b->nargs + ev->nargs <= b->cap_args &&
           b->arena_len + text_bytes <= b->cap_arena;
}

/* Copies ev (its launch, args and their text) into the batch being filled,
 * handing that batch off first when ev does not fit. Inline: the reader
 * calls it for every event. */
static inline void xpv_pipeline_push(xpv_sink *s, const xpv_event *ev)
{
    size_t text_bytes = 0;
    for (uint32_t i = 0; i < ev->nargs; i++)
        if (ev->args[i].type == XPV_ARG_TEXT || ev->args[i].type == XPV_ARG_JSON)
            text_bytes += ev->args[i].len;
    xpv_batch *b = &s->pipe.batches[s->pipe.filling];
    if (!xpv_pipeline_fits(b, ev, text_bytes)) {
        if (b->nev) xpv_pipeline_hand_off(s);
        b = &s->pipe.batches[s->pipe.filling];
        if (!xpv_pipeline_fits(b, ev, text_bytes)) xpv_pipeline_grow_for(b, ev, text_bytes);
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

#endif
