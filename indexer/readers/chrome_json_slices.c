/*
 * chrome_json_slices.c — pairs the Chrome JSON reader's begin and end
 * events into slices (chrome_json_internal.h says how the reader is split).
 *
 *  - B/E pair per track into one slice stored with ph 'X'. An E with no
 *    open B is stored as an instant with ph 'E'; a B still open at the end
 *    is stored with ph 'B' and no duration; both are counted in a warning.
 *    The E's args are appended to the B's.
 *  - b/e pair by (cat, id, id2, name) into a slice stored with ph 'b'; a
 *    lone e is stored with ph 'e', a b left open with ph 'b' and no
 *    duration (warned). An e without a name closes the latest b of its
 *    (cat, id, id2).
 *
 * Invariants: a held slice owns copies of its args and their text, since
 * the event it came from points into the reader's window, which moves on.
 * Every held slice is stored exactly once, when closed or when flushed at
 * the end, or released unstored when reading fails. At most
 * MAX_OPEN_SLICES are held, MAX_STACK_DEPTH per track; a B or b beyond
 * that is stored unpaired and counted, so memory stays bounded whatever
 * the input.
 */
#include "chrome_json_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPEN_SLICES 1000000
#define MAX_STACK_DEPTH 10000

/* A slice held open until its end arrives. */
struct xpv_cj_pending {
    xpv_event ev;
    xpv_launch launch;
    xpv_arg *args;
    char *text;
    uint64_t key_hash; /* async: (cat, id, id2, name) */
    char *key;
    size_t key_len;
    struct xpv_cj_pending *next;
};

static xpv_cj_pending *hold(const xpv_event *ev)
{
    size_t text = 0;
    for (uint32_t i = 0; i < ev->nargs; i++)
        if (ev->args[i].type == XPV_ARG_TEXT || ev->args[i].type == XPV_ARG_JSON)
            text += ev->args[i].len;
    xpv_cj_pending *h = xpv_xcalloc(1, sizeof *h);
    h->ev = *ev;
    if (ev->launch) {
        h->launch = *ev->launch;
        h->ev.launch = &h->launch;
    }
    h->args = ev->nargs ? xpv_xmalloc(ev->nargs * sizeof *h->args) : NULL;
    h->text = text ? xpv_xmalloc(text) : NULL;
    size_t at = 0;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        h->args[i] = ev->args[i];
        if (ev->args[i].type == XPV_ARG_TEXT || ev->args[i].type == XPV_ARG_JSON) {
            xpv_cj_copy_bytes(h->text + at, ev->args[i].text, ev->args[i].len);
            h->args[i].text = h->text + at;
            at += ev->args[i].len;
        }
    }
    h->ev.args = h->args;
    return h;
}

static void release(xpv_cj_pending *h)
{
    free(h->args);
    free(h->text);
    free(h->key);
    free(h);
}

/* Emits an opened slice closed by `end` (NULL: never closed). */
static void close_slice(xpv_cj_reader *r, xpv_cj_pending *h, const xpv_event *end, char ph)
{
    xpv_event ev = h->ev;
    ev.ph = ph;
    if (end) {
        int64_t dur = end->ts_ns - ev.ts_ns;
        if (dur < 0) dur = 0, r->negative_dur++;
        ev.dur_ns = dur;
        ev.dur_ps = dur * 1000;
        if (end->nargs) {
            xpv_arg *all = xpv_xmalloc((ev.nargs + end->nargs) * sizeof *all);
            xpv_cj_copy_bytes(all, ev.args, ev.nargs * sizeof *all);
            memcpy(all + ev.nargs, end->args, end->nargs * sizeof *all);
            ev.args = all;
            ev.nargs += end->nargs;
            xpv_sink_event(r->sink, &ev);
            free(all);
            release(h);
            return;
        }
    }
    xpv_sink_event(r->sink, &ev);
    release(h);
}

void xpv_cj_begin_slice(xpv_cj_reader *r, xpv_cj_track *t, const xpv_event *ev)
{
    if (t->nopen >= MAX_STACK_DEPTH || r->nopen_total >= MAX_OPEN_SLICES) {
        r->dropped_open++;
        xpv_sink_event(r->sink, ev);
        return;
    }
    if (t->nopen == t->cap_open) {
        t->cap_open = t->cap_open ? t->cap_open * 2 : 8;
        t->open = xpv_xrealloc(t->open, t->cap_open * sizeof *t->open);
    }
    t->open[t->nopen++] = hold(ev);
    r->nopen_total++;
}

void xpv_cj_end_slice(xpv_cj_reader *r, xpv_cj_track *t, const xpv_event *ev)
{
    if (t->nopen == 0) {
        r->unmatched_e++;
        xpv_sink_event(r->sink, ev);
        return;
    }
    r->nopen_total--;
    close_slice(r, t->open[--t->nopen], ev, 'X');
}

/* Async key: category, id, id2 (raw text); the name is matched separately
 * so that an `e` without a name closes the latest `b` of its id. */
static size_t async_key(xpv_cj_reader *r, const xpv_cj_event *pe, uint32_t cat, char *buf,
                        size_t cap)
{
    size_t n = 0;
    memcpy(buf, &cat, sizeof cat);
    n += sizeof cat;
    for (int i = EX_ID; i <= EX_ID2; i++) {
        const xpv_cj_member *m = &pe->extra[i];
        size_t len = m->val.len < cap / 2 - 8 ? m->val.len : cap / 2 - 8;
        if (m->type == JV_NONE) len = 0;
        buf[n++] = (char)m->type;
        xpv_cj_copy_bytes(buf + n, m->val.s, len);
        n += len;
        buf[n++] = 0;
    }
    (void)r;
    return n;
}

static xpv_cj_pending **async_bucket(xpv_cj_reader *r, uint64_t h)
{
    if (!r->async_slots) {
        r->nasync_slots = 4096;
        r->async_slots = xpv_xcalloc(r->nasync_slots, sizeof *r->async_slots);
    }
    return &r->async_slots[h & (r->nasync_slots - 1)];
}

void xpv_cj_async_begin(xpv_cj_reader *r, const xpv_cj_event *pe, const xpv_event *ev)
{
    if (r->nopen_total >= MAX_OPEN_SLICES) {
        r->dropped_open++;
        xpv_sink_event(r->sink, ev);
        return;
    }
    char key[1024];
    size_t n = async_key(r, pe, ev->cat, key, sizeof key);
    xpv_cj_pending *h = hold(ev);
    h->key = xpv_xmalloc(n);
    memcpy(h->key, key, n);
    h->key_len = n;
    h->key_hash = xpv_hash64(key, n);
    xpv_cj_pending **b = async_bucket(r, h->key_hash);
    h->next = *b;
    *b = h;
    r->nopen_total++;
}

void xpv_cj_async_end(xpv_cj_reader *r, const xpv_cj_event *pe, const xpv_event *ev)
{
    char key[1024];
    size_t n = async_key(r, pe, ev->cat, key, sizeof key);
    uint64_t hash = xpv_hash64(key, n);
    xpv_cj_pending **link = async_bucket(r, hash), **found = NULL;
    for (; *link; link = &(*link)->next) {
        xpv_cj_pending *h = *link;
        if (h->key_hash != hash || h->key_len != n || memcmp(h->key, key, n) != 0) continue;
        if (h->ev.name == ev->name) {
            found = link;
            break;
        }
        if (!found && ev->name == 0) found = link;
    }
    if (!found) {
        r->unmatched_async_e++;
        xpv_sink_event(r->sink, ev);
        return;
    }
    xpv_cj_pending *h = *found;
    *found = h->next;
    r->nopen_total--;
    close_slice(r, h, ev, 'b');
}

/* At the end: what is still open is stored without a duration. */
void xpv_cj_flush_open(xpv_cj_reader *r, int emit)
{
    for (size_t t = 0; t < r->ntracks; t++) {
        xpv_cj_track *ti = &r->tracks[t];
        for (size_t i = 0; i < ti->nopen; i++) {
            if (emit) {
                r->unmatched_b++;
                close_slice(r, ti->open[i], NULL, 'B');
            } else {
                release(ti->open[i]);
            }
        }
        ti->nopen = 0;
        free(ti->open);
        ti->open = NULL;
    }
    for (size_t s = 0; s < r->nasync_slots; s++) {
        while (r->async_slots[s]) {
            xpv_cj_pending *h = r->async_slots[s];
            r->async_slots[s] = h->next;
            if (emit) {
                r->unmatched_async_b++;
                close_slice(r, h, NULL, 'b');
            } else {
                release(h);
            }
        }
    }
    r->nopen_total = 0;
}

static void warn_count(xpv_cj_reader *r, int64_t n, const char *what)
{
    if (!n) return;
    char buf[256];
    snprintf(buf, sizeof buf, "%lld %s", (long long)n, what);
    xpv_sink_fact(r->sink, "warning", buf);
}

/* In a fixed order, which the profile's list of warnings keeps. The
 * negative durations include those of X events, which the walk counts:
 * one figure for every kind of event. */
void xpv_cj_slice_warnings(xpv_cj_reader *r)
{
    warn_count(r, r->unmatched_b, "B events without a matching E (stored without a duration)");
    warn_count(r, r->unmatched_e, "E events without a matching B (stored as instants)");
    warn_count(r, r->unmatched_async_b, "async b events without a matching e");
    warn_count(r, r->unmatched_async_e, "async e events without a matching b");
    warn_count(r, r->negative_dur, "events with a negative duration (stored as 0)");
    warn_count(r, r->dropped_open, "B/b events stored unpaired (too many open at once)");
}

void xpv_cj_slices_free(xpv_cj_reader *r)
{
    xpv_cj_flush_open(r, 0);
    free(r->async_slots);
}
