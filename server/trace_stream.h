/*
 * trace_stream.h — a profile's Chrome trace JSON as a streamed HTTP
 * response (chunked), gzip-compressed on the fly when the client accepts
 * it. The stream owns a private read-only index connection, so it can be
 * pulled by any thread; memory stays bounded by one event block.
 */
#ifndef XPV_TRACE_STREAM_H
#define XPV_TRACE_STREAM_H

#include "http.h"
#include "server.h"

/* Fills r for GET .../trace of profile id: 404 unknown, 409 still being
 * indexed, 304 when If-None-Match matches, else a streamed 200.
 * attachment: add Content-Disposition with a file name. */
void xpv_trace_stream_reply(xpv_server *s, struct MHD_Connection *c, int64_t id, int attachment,
                            xpv_reply *r);

#endif
