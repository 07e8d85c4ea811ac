/*
 * slow_clients.h — deadlines for requests to arrive whole, and room for a
 * normal request when connections run out.
 *
 * A connection's first request must arrive within a short header deadline
 * of the connection's opening, a later one within the idle timeout of the
 * previous answer: a client that trickles its headers or body (slowloris)
 * is cut off once its deadline passes, however often it sends a byte
 * (libmicrohttpd's own timeout only closes connections that stay silent).
 * And once more than the limit are open, each new connection closes the
 * oldest one that is not being answered, so a flood of half-sent requests
 * cannot keep a normal request waiting.
 */
#ifndef XPV_SLOW_CLIENTS_H
#define XPV_SLOW_CLIENTS_H

#include "../common/xpv_common.h"

#include <microhttpd.h>

/* Connections libmicrohttpd should allow beyond the watchdog's limit: its
 * pool threads split their limit, so one thread may fill up first, and a
 * cut connection holds its slot until its thread notices. */
#define XPV_SLOW_CLIENTS_HEADROOM 64

typedef struct xpv_slow_clients xpv_slow_clients;

/* Starts the watchdog thread: a first request not answered within header_s
 * of the connection's opening, or a later one within idle_s of the
 * previous answer, has its socket shut down; past max_conns open
 * connections (0: no limit), the oldest one not being answered is shut
 * down as a new one opens. */
xpv_slow_clients *xpv_slow_clients_start(int header_s, int idle_s, int max_conns, xpv_err *err);
/* Stops the watchdog (NULL: nothing); call after the daemon has stopped. */
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
