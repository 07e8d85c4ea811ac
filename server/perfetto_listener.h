/*
 * perfetto_listener.h — the hand-off listener for ui.perfetto.dev.
 *
 * Perfetto UI may fetch plain HTTP only from 127.0.0.1:9001, so a second
 * listener there serves GET /<profile-id>.json (also /<profile-id> and
 * /latest.json). Only https://ui.perfetto.dev and the UI's own origin are
 * granted (Access-Control-Allow-Origin names the one that asked, with
 * Vary: Origin), so another site open in the browser cannot read a trace;
 * the Host header must name this machine (access.h). Perfetto first probes
 * POST /status for a trace_processor: every POST gets 404 so it falls back
 * to fetching the file. Always bound to 127.0.0.1; no token is asked here,
 * since Perfetto could not send it and no other machine can connect.
 */
#ifndef XPV_PERFETTO_LISTENER_H
#define XPV_PERFETTO_LISTENER_H

#include "server_state.h"

/* Starts the listener on 127.0.0.1:port. Returns 0, or -1 with err (the
 * caller warns and carries on without it). */
int xpv_perfetto_start(xpv_server *s, int port, xpv_err *err);
void xpv_perfetto_stop(void);

/* The listener's answer to one complete request (ctx: the xpv_server); an
 * xpv_http_answer_fn, called directly by the routing fuzz target. */
void xpv_perfetto_answer(void *ctx, struct MHD_Connection *c, const char *url, const char *method,
                         xpv_reply *r);

#endif
