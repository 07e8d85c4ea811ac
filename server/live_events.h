/*
 * live_events.h — Server-Sent Events at GET /api/stream: what the indexer
 * publishes (profile-added, profile-updated, profile-removed,
 * index-progress) reaches every open stream at once, so pages update
 * without polling.
 *
 * Events get increasing ids and stay in a ring of the last
 * XPV_LIVE_RING events; a client reconnecting with Last-Event-ID (or
 * ?last_event_id=) is sent what it missed, or a `reset` event telling it to
 * refetch when those events have left the ring (or came from an earlier
 * run of the server: ids start at the start time in ms times 1000). A slow
 * client is never waited for: its cursor in the ring is its bounded queue,
 * and a cursor overtaken by the ring turns into a `reset`.
 *
 * Threads: any thread may publish; libmicrohttpd's threads send. A stream
 * with nothing to send is suspended (MHD_suspend_connection) and resumed by
 * the next event or heartbeat, so an idle client costs no thread and no
 * polling. All state is under one mutex; connections are resumed outside
 * it.
 */
#ifndef XPV_LIVE_EVENTS_H
#define XPV_LIVE_EVENTS_H

#include "http.h"

#include <stdint.h>

#define XPV_LIVE_RING 2048
#define XPV_LIVE_MAX_CLIENTS 64 /* of --max-connections (256): room for requests */
#define XPV_LIVE_HEARTBEAT_SECONDS 15

/* Starts the heartbeat thread. Returns 0 or -1 with err. The daemon must
 * run with MHD_ALLOW_SUSPEND_RESUME. */
int xpv_live_start(xpv_err *err);

/* Ends every stream and stops the heartbeat; call before MHD_stop_daemon
 * (libmicrohttpd must not stop with suspended connections). */
void xpv_live_stop(void);

/* Publishes one event; json is its data (one line). Returns its id. */
uint64_t xpv_live_publish(const char *type, const char *json);

/* The id of the last event published (one less than the first when none). */
uint64_t xpv_live_last_id(void);

/* Streams clients connected now. */
int xpv_live_clients(void);

/* Answers GET /api/stream: text/event-stream, never ending. */
void xpv_live_reply(struct MHD_Connection *c, xpv_reply *r);

#endif
