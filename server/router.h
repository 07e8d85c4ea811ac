/*
 * router.h — where a request on the main listener goes (router.c). Also
 * the entry point of the routing fuzz target, which calls it with no
 * socket behind the connection.
 */
#ifndef XPV_ROUTER_H
#define XPV_ROUTER_H

#include "http.h"
#include "server_state.h"

/* Fills r with the answer to one complete request; ctx is the xpv_server.
 * An xpv_http_answer_fn. */
void xpv_router_answer(void *ctx, struct MHD_Connection *c, const char *url, const char *method,
                       xpv_reply *r);

#endif
