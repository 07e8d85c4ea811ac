/*
 * server.h — the HTTP server's start and stop (server.c); the state its
 * parts share is server_state.h's, included here for the server's users.
 */
#ifndef XPV_SERVER_H
#define XPV_SERVER_H

#include "server_state.h"
#include "../common/xpv_common.h"

/* Listens on o->host:o->port and starts answering, with the Perfetto
 * hand-off listener when o->perfetto_port asks for it (a failure there
 * only warns). On return 0, s->port holds the port and *ipv6 says whether
 * the address is IPv6. Returns -1 with err, and sets *busy when the port
 * is taken. */
int xpv_server_start(xpv_server *s, int *ipv6, int *busy, xpv_err *err);

/* Stops answering and frees what start made. */
void xpv_server_stop(xpv_server *s);

#endif
