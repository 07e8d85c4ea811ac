/*
 * flows.h — the events linked to one event (flows.c): a device event's host
 * launch and a launch's device work by correlation id, and the trace's own
 * flows (Chrome s/t/f records, bind_id with flow_in/flow_out, the xplane
 * `flow` stat). Used by the event details answer.
 */
#ifndef XPV_API_FLOWS_H
#define XPV_API_FLOWS_H

#include "api_util.h"
#include "../store/event_store.h"

/* What the flow search needs of the selected event, noted while its block
 * is decoded (its args are gone after). */
typedef struct {
    int64_t block;
    uint32_t index;
    int64_t ts, dur; /* dur -1: no duration */
    uint32_t track, cat;
    uint8_t kind;
    char ph;
    int64_t corr;
    int has_bind, flow_in, flow_out; /* bind_id and its flags */
    int bind_str;                    /* bind_id is an interned string id */
    int64_t bind;
    int has_xflow; /* xplane `flow` stat: id << 8 | category << 2 | direction */
    uint64_t xflow;
} xpv_flow_source;

/* Fills src from a decoded event (args included). */
void xpv_flow_source_note(xpv_flow_source *src, const xpv_event *ev, int64_t block, uint32_t index,
                          xpv_api_strings *strings);

/* Appends `"flows":[{"ref", "direction", "via", "name", "start_us", "dur_us",
 * "track", "latency_us"}, ...]` (no leading comma). Returns 0 or -1 with err. */
int xpv_api_put_flows(sqlite3 *db, int64_t profile_id, const xpv_api_profile_state *ps,
                      const xpv_flow_source *src, xpv_api_strings *strings, xpv_buf *out,
                      xpv_err *err);

#endif
