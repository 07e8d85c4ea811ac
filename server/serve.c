/*
 * serve.c — the main listener: start-up (the daemon, the background
 * indexer, the printed URLs) and a clean shutdown on SIGINT/SIGTERM.
 * What a request gets is decided in router.c.
 *
 * Threads: libmicrohttpd's pool answers requests, each pool thread with its
 * own read-only index connection; one background thread indexes; the main
 * thread only waits for a signal. Signals are blocked in every thread and
 * taken synchronously with sigwait, so no handler runs at a random point.
 */
#define _GNU_SOURCE
#include "serve.h"
#include "background_index.h"
#include "http.h"
#include "listen.h"
#include "live_events.h"
#include "perfetto_listener.h"
#include "router.h"
#include "slow_clients.h"
#include "server.h"
#include "static_files.h"
#include "../api/block_marks.h"
#include "../api/hlo_cache.h"
#include "../indexer/index_db.h"

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Resume marks take about 0.4 MB per million events. */
#define XPV_MARKS_BUDGET ((size_t)256 << 20)
/* A profile's HLO op sums take about 100 bytes and the op's names per op. */
#define XPV_HLO_CACHE_BUDGET ((size_t)64 << 20)

static pthread_key_t db_key;
static pthread_once_t db_key_once = PTHREAD_ONCE_INIT;

/* A pool thread's connection, and the index generation it was opened on. */
typedef struct {
    sqlite3 *db;
    int generation;
} thread_db;

static void close_thread_db(void *p)
{
    thread_db *t = p;
    sqlite3_close_v2(t->db);
    free(t);
}
static void make_db_key(void)
{
    pthread_key_create(&db_key, close_thread_db);
}

sqlite3 *xpv_server_db(xpv_server *s, xpv_err *err)
{
    pthread_once(&db_key_once, make_db_key);
    thread_db *t = pthread_getspecific(db_key);
    int generation = __atomic_load_n(&s->index_generation, __ATOMIC_ACQUIRE);
    if (t && t->generation == generation) return t->db;
    if (!t) {
        t = xpv_xcalloc(1, sizeof *t);
        pthread_setspecific(db_key, t);
    }
    /* v2: statements a cache still holds keep the old file open until they
     * are finalized, and the connection's address is not reused before. */
    sqlite3_close_v2(t->db);
    t->db = NULL;
    if (xpv_index_open_reader(s->db_path, &t->db, err) != 0) return NULL;
    t->generation = generation;
    return t->db;
}

void xpv_server_progress_get(xpv_server *s, xpv_server_progress *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->progress;
    pthread_mutex_unlock(&s->mu);
}

const char *xpv_server_ui_name(const xpv_server *s)
{
    switch (s->opts->ui) {
    case XPV_UI_PERFETTO:
        return "perfetto";
    case XPV_UI_TENSORBOARD:
        return "tensorboard";
    default:
        return "both";
    }
}

static size_t pool_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 4) n = 4;
    if (n > 16) n = 16;
    return (size_t)n;
}

static struct MHD_Daemon *start_main(xpv_server *s, int fd, int ipv6)
{
    /* Suspend/resume: an idle /api/stream is parked, not polled. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
                     (ipv6 ? MHD_USE_IPv6 : 0);
    s->main_site = (xpv_http_site){xpv_router_answer, s, 0};
    return MHD_start_daemon(
        flags, 0, NULL, NULL, xpv_http_on_request, &s->main_site, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)pool_threads(), MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)s->opts->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)s->opts->client_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(256 * 1024), MHD_OPTION_NOTIFY_CONNECTION, xpv_slow_clients_on_connection,
        s->slow_clients, MHD_OPTION_NOTIFY_COMPLETED, xpv_slow_clients_on_completed,
        s->slow_clients, MHD_OPTION_END);
}

/* ---- start-up output ---- */

static void print_urls(xpv_server *s, const char *url, size_t nfound)
{
    const xpv_options *o = s->opts;
    printf("xprof-view %s: %zu profile file%s under %s\n", XPV_VERSION, nfound,
           nfound == 1 ? "" : "s", s->root_abs);
    printf("serving at %s   (Ctrl-C to stop)\n", url);
    /* latest.json, not an id: "latest" is decided when the link is opened,
     * after indexing has told a good capture from a broken newer one. */
    if (s->perfetto_port && nfound)
        printf("open the latest profile in Perfetto UI (needs internet):\n"
               "  https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/latest.json\n",
               s->perfetto_port);
    if (!o->quiet && nfound)
        printf("indexing runs in the background; profiles show as pending until done\n");
    fflush(stdout);
}

static void open_browser(const char *url)
{
    pid_t pid;
    char *argv[] = {"xdg-open", (char *)url, NULL};
    if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ) != 0)
        fprintf(stderr, "xprof-view: --open: cannot run xdg-open; open %s yourself\n", url);
}

static void make_url(const char *host, int port, int ipv6, char *out, size_t n)
{
    if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
        snprintf(out, n, "http://127.0.0.1:%d/", port);
    else if (ipv6)
        snprintf(out, n, "http://[%s]:%d/", host, port);
    else
        snprintf(out, n, "http://%s:%d/", host, port);
}

/* ---- the whole run ---- */

static int wait_for_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int sig = 0;
    sigwait(&set, &sig);
    return sig;
}

static void block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void init_server(xpv_server *s, const xpv_options *o, const char *db_path,
                        const char *profile_arg, const xpv_found_list *found)
{
    memset(s, 0, sizeof *s);
    s->opts = o;
    pthread_mutex_init(&s->mu, NULL);
    snprintf(s->db_path, sizeof s->db_path, "%s", db_path);
    snprintf(s->root_abs, sizeof s->root_abs, "%s", found->root_abs);
    snprintf(s->profile_arg, sizeof s->profile_arg, "%s", profile_arg);
}

int xpv_serve(const xpv_options *o, const char *db_path, const char *profile_arg,
              xpv_found_list *found)
{
    static xpv_server server;
    xpv_server *s = &server;
    xpv_err err = {{0}};
    init_server(s, o, db_path, profile_arg, found);
    block_signals();
    if (!xpv_listen_is_loopback(o->host))
        fprintf(stderr,
                "xprof-view: warning: listening on %s: anyone who can reach this machine "
                "on port %d can read these profiles\n",
                o->host, o->port);
    int ipv6 = 0, busy = 0;
    int fd = xpv_listen_open(o->host, o->port, &ipv6, &s->port, &busy, &err);
    if (fd < 0) {
        fprintf(stderr, "xprof-view: %s\n", err.msg);
        return busy ? 3 : 1;
    }
    xpv_static_init();
    s->marks = xpv_block_marks_new(XPV_MARKS_BUDGET);
    s->hlo_cache = xpv_hlo_ops_cache_new(XPV_HLO_CACHE_BUDGET);
    if (xpv_live_start(&err) != 0) fprintf(stderr, "xprof-view: /api/stream is off: %s\n", err.msg);
    s->slow_clients = xpv_slow_clients_start(o->client_timeout_s, &err);
    struct MHD_Daemon *d = s->slow_clients ? start_main(s, fd, ipv6) : NULL;
    if (!d) {
        fprintf(stderr, "xprof-view: cannot start the HTTP server on %s:%d\n", o->host, s->port);
        close(fd);
        xpv_live_stop();
        xpv_slow_clients_stop(s->slow_clients);
        xpv_block_marks_free(s->marks);
        xpv_hlo_cache_free(s->hlo_cache);
        return 1;
    }
    if (o->perfetto_port && xpv_perfetto_start(s, o->perfetto_port, &err) != 0)
        fprintf(stderr,
                "xprof-view: warning: %s; the Perfetto UI link is off (use "
                "--perfetto-port=N, 0 to disable)\n",
                err.msg);
    if (xpv_bg_index_start(s, found, &err) != 0)
        fprintf(stderr, "xprof-view: background indexing is off: %s\n", err.msg);
    char url[512];
    make_url(o->host, s->port, ipv6, url, sizeof url);
    print_urls(s, url, found->n);
    if (o->open_browser) open_browser(url);
    int sig = wait_for_signal();
    fprintf(stderr, "\nxprof-view: %s received, shutting down\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    if (!xpv_bg_index_stop(s, 3.0))
        fprintf(stderr, "xprof-view: indexing was interrupted; it resumes on the next start\n");
    xpv_perfetto_stop();
    xpv_live_stop(); /* libmicrohttpd must not stop with a stream suspended */
    MHD_stop_daemon(d);
    xpv_slow_clients_stop(s->slow_clients);
    close(fd);
    xpv_static_free();
    xpv_block_marks_free(s->marks);
    xpv_hlo_cache_free(s->hlo_cache);
    return 0;
}
