/*
 * listen.h — opening listening sockets ourselves (then handing them to
 * libmicrohttpd), so a busy port or a bad address gives a clear message
 * instead of a bare "could not start".
 */
#ifndef XPV_LISTEN_H
#define XPV_LISTEN_H

#include "../common/xpv_common.h"

/* Binds host:port (port 0: any free port) and listens. Returns the socket,
 * or -1 with err; *busy is set when the port is already in use. *ipv6 is
 * set for an IPv6 address; *bound_port receives the port. */
int xpv_listen_open(const char *host, int port, int *ipv6, int *bound_port, int *busy,
                    xpv_err *err);

/* 1 when host names only this machine (127.0.0.0/8, ::1, localhost). */
int xpv_listen_is_loopback(const char *host);

#endif
