/*
 * server_state.h — the state the HTTP server's parts share (server_state.c):
 * the server object, each serving thread's index connection, the indexing
 * progress, the damage hooks and the UI name. Below the server's start and
 * stop (server.h), which run the listeners whose answers read it.
 *
 * Invariants: the index is opened read-only by every serving thread, each
 * with its own connection (xpv_server_db); only the background indexer
 * writes. Fields under `mu` are the only mutable state after start-up.
 */
#ifndef XPV_SERVER_STATE_H
#define XPV_SERVER_STATE_H

#include "server_options.h"
#include "http.h"
#include "../common/xpv_common.h"

#include <pthread.h>
#include <sqlite3.h>

#define XPV_SERVER_PATH_MAX 4096

typedef struct {
    int active; /* a run is in progress */
    int total;  /* profiles pending when the current (or last) run started */
    int done;
    char current[1024]; /* relative path being indexed, "" when idle */
    int64_t runs;       /* completed runs (start-up and rescans) */
    char error[512];    /* the last run's failure, "" when none */
    char watch[16];     /* how the directory is followed: "inotify", "poll", "" (not) */
    int poll_seconds;   /* between polls when watch is "poll" */
} xpv_server_progress;

typedef struct xpv_server {
    xpv_server_options opts;
    char db_path[XPV_SERVER_PATH_MAX];
    char root_abs[XPV_SERVER_PATH_MAX];    /* the profile directory */
    char profile_arg[XPV_SERVER_PATH_MAX]; /* what discovery walks: the directory or the one file */
    int port;                              /* the main listener's port */
    int perfetto_port;                     /* 0 when the hand-off listener is not running */
    pthread_mutex_t mu;
    xpv_server_progress progress; /* under mu */
    /* Bumped (atomically) as the index file is made anew: odd from the
     * moment the old file is let go until the new one lists every profile,
     * so no serving thread opens a half-made index. */
    int index_generation;
    volatile int stop;
    struct xpv_block_marks *marks;          /* resume marks for long event blocks (thread-safe) */
    struct xpv_hlo_cache *hlo_cache;        /* the HLO tools' per-profile op sums (thread-safe) */
    struct xpv_devrows_cache *devrows;      /* the timeline's derived device rows (thread-safe) */
    struct xpv_slow_clients *slow_clients;  /* cuts off requests that arrive too slowly */
    xpv_http_site main_site, perfetto_site; /* what each listener answers with */
    /* Set by whoever runs the indexer before xpv_server_start, and only
     * read after: how a request that finds the index or a profile damaged
     * asks for a rebuild. */
    void (*on_index_damaged)(void *ctx);
    void (*on_profile_damaged)(void *ctx, int64_t id);
    void *damage_ctx;
    struct MHD_Daemon *daemon; /* the main listener, while started */
    int listen_fd;
} xpv_server;

/* Sets up s for serving db_path: the state, no thread, no socket yet. */
void xpv_server_init(xpv_server *s, const xpv_server_options *o, const char *db_path,
                     const char *root_abs, const char *profile_arg);

/* The calling thread's read-only index connection, opened on first use and
 * closed when the thread exits. NULL (with err) when it cannot be opened,
 * or while the index is being made anew. */
sqlite3 *xpv_server_db(xpv_server *s, xpv_err *err);

/* 1 while the indexer makes the index file anew (the generation is odd),
 * when requests are answered 503 with this message. */
int xpv_server_rebuilding(xpv_server *s);
#define XPV_SERVER_REBUILDING "the index is being rebuilt; try again shortly"

/* Opens a read-only connection on the index, for a request's thread or a
 * streamed answer: the generation it belongs to, or -1 (with err) when the
 * file cannot be read or is being made anew. */
int xpv_server_open_reader(xpv_server *s, sqlite3 **db, xpv_err *err);

/* The index was found deleted, replaced, truncated or damaged by a request:
 * the indexer thread checks it and rebuilds it (background_index.c). */
void xpv_server_index_damaged(xpv_server *s);

/* A request found a damaged event block of profile id: the indexer thread
 * checks that profile's blocks and, when they are damaged, indexes that
 * profile again (background_index.c); the rest of the index is untouched. */
void xpv_server_profile_damaged(xpv_server *s, int64_t id);

/* Copies the progress under the lock. */
void xpv_server_progress_get(xpv_server *s, xpv_server_progress *out);

const char *xpv_server_ui_name(const xpv_server *s);

#endif
