/*
 * server.c — the HTTP server's start (the main listener's socket and
 * libmicrohttpd pool, the caches requests share, the Perfetto hand-off
 * listener) and its stop. The state its parts share is server_state.c's;
 * what a request gets is decided in router.c.
 *
 * Threads: libmicrohttpd's pool answers requests, each pool thread with its
 * own read-only index connection (xpv_server_db), polling with epoll.
 *
 * Floods: thousands of connections (the file limit raised to fit), a
 * short deadline for a request's headers, and past the limit the oldest
 * connection not being answered makes room (slow_clients.h). Reachable
 * from the network, one client address may hold only so many connections;
 * on loopback every client, the user's browser too, has the same address,
 * so there such a limit would only lock the browser out.
 */
#define _GNU_SOURCE
#include "server.h"
#include "http.h"
#include "listen.h"
#include "live_events.h"
#include "perfetto_listener.h"
#include "router.h"
#include "slow_clients.h"
#include "static_files.h"
#include "../api/block_marks.h"
#include "../api/hlo/hlo_cache.h"
#include "../api/device_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Resume marks take about 0.4 MB per million events. */
#define XPV_MARKS_BUDGET ((size_t)256 << 20)
/* A profile's HLO op sums take about 100 bytes and the op's names per op. */
#define XPV_HLO_CACHE_BUDGET ((size_t)64 << 20)
/* The derived device rows of the profiles open in the timeline: about 64
 * bytes per XLA op run, so a 10 M-event GPU profile's fit several times. */
#define XPV_DEVROWS_BUDGET ((size_t)512 << 20)
/* A browser sends a request's headers at once; a client that has not
 * within this is not a browser. */
#define XPV_HEADER_DEADLINE_S 5
/* Connections one address may hold when the server is reachable from the
 * network: a browser opens six or so per page, a few pages at once. */
#define XPV_PER_ADDRESS_CONNECTIONS 64
/* Descriptors besides the connections: the index, the Perfetto listener,
 * inotify, the indexer's files. */
#define XPV_FD_RESERVE 256

static size_t pool_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 4) n = 4;
    if (n > 16) n = 16;
    return (size_t)n;
}

/* Raises the soft limit on open files to fit the connections (plus
 * headroom and the reserve); returns the connections that fit. */
static int fit_open_files(int want)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)want + XPV_SLOW_CLIENTS_HEADROOM + XPV_FD_RESERVE;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return want;
    if (rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur >= need) return want;
    long fit = (long)rl.rlim_cur - XPV_SLOW_CLIENTS_HEADROOM - XPV_FD_RESERVE;
    if (fit < 16) fit = 16;
    fprintf(stderr,
            "xprof-view: warning: the open-file limit (%llu) allows %ld connections, not %d "
            "(raise it with ulimit -n)\n",
            (unsigned long long)rl.rlim_cur, fit, want);
    return (int)fit;
}

static struct MHD_Daemon *start_main(xpv_server *s, int fd, int ipv6)
{
    /* Suspend/resume: an idle /api/stream is parked, not polled. */
    unsigned flags = xpv_http_daemon_flags() | MHD_ALLOW_SUSPEND_RESUME | (ipv6 ? MHD_USE_IPv6 : 0);
    unsigned per_address =
        xpv_listen_is_loopback(s->opts.host) ? 0 : (unsigned)XPV_PER_ADDRESS_CONNECTIONS;
    s->main_site = (xpv_http_site){xpv_router_answer, s, 1};
    return MHD_start_daemon(
        flags, 0, NULL, NULL, xpv_http_on_request, &s->main_site, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)pool_threads(), MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(s->opts.max_connections + XPV_SLOW_CLIENTS_HEADROOM),
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)s->opts.client_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(256 * 1024), MHD_OPTION_NOTIFY_CONNECTION, xpv_slow_clients_on_connection,
        s->slow_clients, MHD_OPTION_NOTIFY_COMPLETED, xpv_slow_clients_on_completed,
        s->slow_clients, MHD_OPTION_END);
}

static void free_shared(xpv_server *s)
{
    xpv_live_stop(); /* libmicrohttpd must not stop with a stream suspended */
    if (s->daemon) MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    xpv_slow_clients_stop(s->slow_clients);
    s->slow_clients = NULL;
    if (s->listen_fd >= 0) close(s->listen_fd);
    s->listen_fd = -1;
    xpv_block_marks_free(s->marks);
    xpv_hlo_cache_free(s->hlo_cache);
    xpv_devrows_cache_free(s->devrows);
    s->marks = NULL;
    s->hlo_cache = NULL;
    s->devrows = NULL;
}

int xpv_server_start(xpv_server *s, int *ipv6, int *busy, xpv_err *err)
{
    const xpv_server_options *o = &s->opts;
    *ipv6 = *busy = 0;
    s->listen_fd = xpv_listen_open(o->host, o->port, ipv6, &s->port, busy, err);
    if (s->listen_fd < 0) return -1;
    xpv_static_init();
    s->marks = xpv_block_marks_new(XPV_MARKS_BUDGET);
    s->hlo_cache = xpv_hlo_ops_cache_new(XPV_HLO_CACHE_BUDGET);
    s->devrows = xpv_devrows_cache_new(XPV_DEVROWS_BUDGET);
    xpv_err live_err = {{0}};
    if (xpv_live_start(&live_err) != 0)
        fprintf(stderr, "xprof-view: /api/stream is off: %s\n", live_err.msg);
    s->opts.max_connections = fit_open_files(o->max_connections);
    s->slow_clients = xpv_slow_clients_start(XPV_HEADER_DEADLINE_S, o->client_timeout_s,
                                             s->opts.max_connections, err);
    s->daemon = s->slow_clients ? start_main(s, s->listen_fd, *ipv6) : NULL;
    if (!s->daemon) {
        xpv_err_set(err, "cannot start the HTTP server on %s:%d", o->host, s->port);
        free_shared(s);
        xpv_static_free();
        return -1;
    }
    xpv_err p_err = {{0}};
    if (o->perfetto_port && xpv_perfetto_start(s, o->perfetto_port, &p_err) != 0)
        fprintf(stderr,
                "xprof-view: warning: %s; the Perfetto UI link is off (use "
                "--perfetto-port=N, 0 to disable)\n",
                p_err.msg);
    return 0;
}

void xpv_server_stop(xpv_server *s)
{
    xpv_perfetto_stop();
    free_shared(s);
    xpv_static_free();
}
