/*
 * background_index.h — indexing on its own thread and connection, so the
 * server answers at once while profiles are read (they show as "pending").
 *
 * After the first run the thread follows the profile directory live: a
 * watcher (indexer/watch.h: inotify, or polling where inotify sees
 * nothing) wakes it, it walks the directory again without reading any file
 * it already knows (indexer/discover.h), admits new or changed files once
 * they have settled (indexer/settle.h), indexes them, and publishes what
 * changed as events on /api/stream (live_events.h). A walk that finds
 * nothing changed touches no table.
 */
#ifndef XPV_BACKGROUND_INDEX_H
#define XPV_BACKGROUND_INDEX_H

#include "cli.h"
#include "../server/server.h"
#include "../indexer/discover.h"

/* A walk even when the watcher saw nothing, in case it missed something. */
#define XPV_SAFETY_RESCAN_SECONDS 30

/* Makes the indexer the server's answer to a request that finds the index
 * or a profile damaged: called before the server starts, so no request
 * thread reads the hooks while they are set. A report that comes before
 * the thread starts is kept and acted on once it runs. */
void xpv_bg_index_attach(xpv_server *s);

/* Starts the thread; `found` (already registered) is indexed first, and it
 * and o must stay valid until xpv_bg_index_stop returns. Returns 0 or -1
 * with err. */
int xpv_bg_index_start(xpv_server *s, const xpv_options *o, const xpv_found_list *found,
                       xpv_err *err);

/* Asks the thread to stop and waits for it up to wait_seconds; a profile
 * cut short stays pending and is indexed on the next start. Returns 1 when
 * the thread ended, 0 when it is still busy (the process may exit anyway:
 * its transaction is uncommitted and SQLite discards it). */
int xpv_bg_index_stop(xpv_server *s, double wait_seconds);

#endif
