/*
 * access.h — who may read this server (access.c): the name a request's
 * Host header gives (against DNS rebinding), the one origin besides the
 * UI's own that the Perfetto listener grants (CORS), and the access token
 * a server reachable from the network asks of every request.
 *
 * Both listeners answer only to names of this server; a token, when the
 * server has one, is asked of every request of the main listener (the
 * Perfetto listener is bound to 127.0.0.1 and grants only ui.perfetto.dev).
 */
#ifndef XPV_ACCESS_H
#define XPV_ACCESS_H

#include "http.h"
#include "server_state.h"

#define XPV_ACCESS_PERFETTO_ORIGIN "https://ui.perfetto.dev"
#define XPV_ACCESS_TOKEN_HEX 32 /* 128 random bits */

/* 1 when the request's Host header names this server: a loopback name or
 * any IP address (an address cannot be rebound to another machine), the
 * --host name, an --allow-host name, and the machine's own name when the
 * server is reachable from the network. A request without Host (HTTP/1.0)
 * passes. Otherwise 0, with a JSON 403 in r saying how to allow the name. */
int xpv_access_host_ok(const xpv_server *s, struct MHD_Connection *c, xpv_reply *r);

/* The request's Origin when this server grants it on the Perfetto
 * listener (ui.perfetto.dev, or http://NAME:PORT of the main listener with
 * a NAME the Host check accepts); NULL otherwise. */
const char *xpv_access_granted_origin(const xpv_server *s, struct MHD_Connection *c);

/* 1 when the server asks no token or the request carries it (cookie,
 * ?token= or Authorization: Bearer); *from_query is set when it came in
 * the query, so the answer should set the cookie. Otherwise 0, with a 401
 * in r: an HTML page for the UI's own paths (page), else JSON. */
int xpv_access_token_ok(const xpv_server *s, struct MHD_Connection *c, int page, int *from_query,
                        xpv_reply *r);

/* Makes r set the token's cookie (HttpOnly, SameSite=Strict). */
void xpv_access_set_cookie(const xpv_server *s, xpv_reply *r);

/* Writes a new random token (XPV_ACCESS_TOKEN_HEX hex digits and a NUL)
 * from the kernel's random source. Returns 0, or -1 with err. */
int xpv_access_new_token(char *out, size_t cap, xpv_err *err);

/* 1 when token is fit to be one (8 to 128 of A-Z a-z 0-9 - . _ ~, which
 * need no escaping in a URL or a cookie). */
int xpv_access_token_valid(const char *token);

#endif
