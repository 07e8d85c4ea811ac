/*
 * chrome_json_event.c — the parser's side of the Chrome trace JSON reader:
 * maps one event the tokenizer pulled out (chrome_json_reader.c) into an
 * xpv_event and hands it on. It runs on the parser's thread, which alone
 * touches the sink while events are read (see chrome_json_internal.h).
 *
 * Every event read is counted by its phase letter; an empty {} is not an
 * event. ts is decimal microseconds converted exactly to ns, dur to ps;
 * out of range is an error at the value's byte offset.
 */
#include "chrome_json_internal.h"

#include <string.h>

/* ---- small conversions ---- */

/* A number (or numeric string) times 10^scale, exactly. -2: not a number. */
static int member_scaled(const xpv_cj_member *m, int scale, int64_t *out)
{
    if (m->type == JV_INT || m->type == JV_NUM)
        return js_to_scaled_int64(m->val.s, m->val.len, scale, out);
    if (m->type == JV_STR && !m->val.esc && m->val.len) {
        const char *after;
        int is_int;
        if (js_scan_number(m->val.s, m->val.s + m->val.len, 1, &after, &is_int, NULL) == JS_OK &&
            after == m->val.s + m->val.len)
            return js_to_scaled_int64(m->val.s, m->val.len, scale, out);
    }
    return -2;
}

/* ---- one event ---- */

static int event_times(xpv_cj_reader *r, const xpv_cj_event *pe, xpv_event *ev)
{
    int64_t v;
    int rc = pe->ts.type ? member_scaled(&pe->ts, 3, &v) : -2;
    if (rc == -1) return xpv_cj_fail_at(r, pe->ts.val.s, "ts out of range");
    ev->ts_ns = rc == 0 ? v : 0;
    if (ev->ph != 'X') return 0;
    rc = pe->dur.type ? member_scaled(&pe->dur, 6, &v) : -2;
    if (rc == -1 || (rc == 0 && v > INT64_MAX - 1000))
        return xpv_cj_fail_at(r, pe->dur.val.s, "dur out of range");
    if (rc != 0) v = 0;
    if (v < 0) v = 0, r->negative_dur++;
    ev->dur_ps = v;
    ev->dur_ns = v / 1000;
    return 0;
}

/* Counts an event of a phase that is not stored, under its first bytes. */
static void skip_phase(xpv_cj_reader *r, const xpv_cj_str *ph)
{
    char what[32] = "phase ";
    size_t n = 6;
    for (uint32_t i = 0; i < ph->len && i < 8; i++)
        what[n++] = ph->s[i] > 0x20 && ph->s[i] < 0x7f ? ph->s[i] : '?';
    what[n] = 0;
    xpv_sink_skipped(r->sink, what);
}

int xpv_cj_process_event(xpv_cj_reader *r, xpv_cj_event *pe)
{
    if (pe->nkeys == 0) return 0; /* the customary trailing {} */
    r->objects++;
    if (pe->ph.type != JV_STR || pe->ph.val.len == 0) {
        xpv_sink_skipped(r->sink, "event without ph");
        return 0;
    }
    xpv_cj_begin_event(r, pe->raw_len);
    xpv_cj_str ph = xpv_cj_text_of(r, &pe->ph.val);
    char phc = ph.s[0];
    xpv_sink_count_read(r->sink, phc);
    r->with_ph++;
    if (phc == 'M' && ph.len == 1) {
        xpv_cj_metadata(r, pe);
        return 0;
    }
    if (ph.len != 1 || !strchr("XBEiICbenstf", phc) || phc == 0) {
        skip_phase(r, &ph);
        return 0;
    }
    xpv_event ev;
    xpv_event_init(&ev);
    ev.ph = phc;
    if (event_times(r, pe, &ev) != 0) return -1;
    xpv_cj_proc *p;
    xpv_cj_track *t;
    ev.track = xpv_cj_event_track(r, pe, &p, &t);
    xpv_cj_str name =
        pe->name.type == JV_STR ? xpv_cj_text_of(r, &pe->name.val) : (xpv_cj_str){"", 0, 0};
    xpv_cj_str cat =
        pe->cat.type == JV_STR ? xpv_cj_text_of(r, &pe->cat.val) : (xpv_cj_str){"", 0, 0};
    ev.name = xpv_cj_intern(r, name.s, name.len, 0);
    ev.cat = xpv_cj_intern(r, cat.s, cat.len, 0);
    xpv_cj_known_args k;
    if (xpv_cj_convert_args(r, pe, &k, &ev.nargs) != 0) return -1;
    ev.args = r->args;
    ev.flow = pe->extra[EX_BIND_ID].type != JV_NONE || pe->extra[EX_FLOW_IN].type != JV_NONE ||
              pe->extra[EX_FLOW_OUT].type != JV_NONE;
    ev.counter = phc == 'i' && xpv_cj_str_is(&name, "[memory]"); /* PyTorch memory totals */
    xpv_launch launch;
    xpv_cj_classify(r, &ev, &cat, &name, &k, p, t, &launch);
    xpv_cj_deliver(r, pe, t, &ev);
    return 0;
}
