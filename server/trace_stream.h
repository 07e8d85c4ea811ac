/*
 * trace_stream.h — a profile's Chrome trace JSON as a streamed HTTP
 * response (chunked), gzip-compressed on the fly when the client accepts
 * it. The stream owns a private read-only index connection, so it can be
 * pulled by any thread; memory stays bounded by one event block.
 */
#ifndef XPV_TRACE_STREAM_H
#define XPV_TRACE_STREAM_H

#include "http.h"
#include "server_state.h"

/* A time window of the events' clock, in ns: the events that overlap it. */
typedef struct {
    int64_t a_ns, b_ns;
} xpv_trace_window;

/* Fills r for GET .../trace of profile id: 404 unknown, 409 still being
 * indexed, 304 when If-None-Match matches, else a streamed 200.
 * attachment: add Content-Disposition with a file name. window: NULL for
 * the whole trace. */
void xpv_trace_stream_reply(xpv_server *s, struct MHD_Connection *c, int64_t id, int attachment,
                            const xpv_trace_window *window, xpv_reply *r);

#endif
