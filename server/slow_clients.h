/*
 * slow_clients.h — a deadline for each request to arrive whole: a client
 * that trickles its headers or body (slowloris) is cut off once the
 * deadline passes, however often it sends a byte. libmicrohttpd's own
 * timeout only closes connections that stay silent.
 */
#ifndef XPV_SLOW_CLIENTS_H
#define XPV_SLOW_CLIENTS_H

#include "../common/xpv_common.h"

#include <microhttpd.h>

typedef struct xpv_slow_clients xpv_slow_clients;

/* Starts the watchdog thread: a request not answered within deadline_s of
 * its first byte (of the connection's opening, or of the previous answer
 * on a kept-alive connection) has its socket shut down. */
xpv_slow_clients *xpv_slow_clients_start(int deadline_s, xpv_err *err);
/* Stops the watchdog; call after the daemon has stopped. */
void xpv_slow_clients_stop(xpv_slow_clients *w);

/* For MHD_OPTION_NOTIFY_CONNECTION (cls: the watchdog). */
void xpv_slow_clients_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                                    enum MHD_ConnectionNotificationCode code);
/* For MHD_OPTION_NOTIFY_COMPLETED (cls: the watchdog): the clock restarts
 * for the next request on the connection. */
void xpv_slow_clients_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                                   enum MHD_RequestTerminationCode toe);
/* The request on c arrived whole and is being answered: no deadline until
 * it completes (a long download or an event stream is not slow). */
void xpv_slow_clients_answering(struct MHD_Connection *c);

#endif
