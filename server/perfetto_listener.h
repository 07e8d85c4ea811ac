/*
 * perfetto_listener.h — the hand-off listener for ui.perfetto.dev.
 *
 * Perfetto UI may fetch plain HTTP only from 127.0.0.1:9001, so a second
 * listener there serves GET /<profile-id>.json (also /<profile-id> and
 * /latest.json) with Access-Control-Allow-Origin: *. Perfetto first probes
 * POST /status for a trace_processor: every POST gets 404 so it falls back
 * to fetching the file. Always bound to 127.0.0.1.
 */
#ifndef XPV_PERFETTO_LISTENER_H
#define XPV_PERFETTO_LISTENER_H

#include "server_state.h"

/* Starts the listener on 127.0.0.1:port. Returns 0, or -1 with err (the
 * caller warns and carries on without it). */
int xpv_perfetto_start(xpv_server *s, int port, xpv_err *err);
void xpv_perfetto_stop(void);

#endif
