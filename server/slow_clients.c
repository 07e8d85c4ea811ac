/*
 * slow_clients.c — see slow_clients.h.
 *
 * Every open connection has an entry (its socket context) in one list
 * under the watchdog's mutex. libmicrohttpd reports a connection closed
 * before it closes the socket, and the entry leaves the list then, under
 * the same mutex: so the watchdog only ever shuts down a socket that is
 * still the connection's own, never a reused descriptor. It shuts the
 * socket down rather than closing it; libmicrohttpd sees the end of the
 * stream and cleans up as for any client that went away. A connection cut
 * for room stays in the list (and counted as cut) until then.
 */
#define _GNU_SOURCE
#include "slow_clients.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

typedef struct entry {
    struct entry *prev, *next;
    int fd;
    int answering; /* the current request is being answered */
    int cut;       /* already shut down */
    int served;    /* a request was answered: the next one may idle first */
    double since;  /* when the current request's clock started */
} entry;

struct xpv_slow_clients {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int stop;
    double header_s, idle_s;
    int max_conns; /* 0: no limit */
    int n, ncut;   /* entries in the list; of them, cut */
    entry head;    /* sentinel of a circular list */
};

static int waiting(const entry *e)
{
    return !__atomic_load_n(&e->answering, __ATOMIC_RELAXED) && !e->cut;
}

static void cut(xpv_slow_clients *w, entry *e)
{
    shutdown(e->fd, SHUT_RDWR);
    e->cut = 1;
    w->ncut++;
}

static void cut_late(xpv_slow_clients *w)
{
    double now = xpv_now_mono();
    for (entry *e = w->head.next; e != &w->head; e = e->next)
        if (waiting(e) && now - e->since >= (e->served ? w->idle_s : w->header_s)) cut(w, e);
}

/* Past the limit, the connection waiting longest makes room for fresh. */
static void make_room(xpv_slow_clients *w, const entry *fresh)
{
    while (w->max_conns && w->n - w->ncut > w->max_conns) {
        entry *oldest = NULL;
        for (entry *e = w->head.next; e != &w->head; e = e->next)
            if (e != fresh && waiting(e) && (!oldest || e->since < oldest->since)) oldest = e;
        if (!oldest) return; /* every other one is being answered */
        cut(w, oldest);
    }
}

static void *watch(void *arg)
{
    xpv_slow_clients *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&w->cv, &w->mu, &until);
        cut_late(w);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

xpv_slow_clients *xpv_slow_clients_start(int header_s, int idle_s, int max_conns, xpv_err *err)
{
    xpv_slow_clients *w = xpv_xcalloc(1, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->header_s = header_s < idle_s ? header_s : idle_s;
    w->idle_s = idle_s;
    w->max_conns = max_conns;
    w->head.next = w->head.prev = &w->head;
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        xpv_err_set(err, "cannot start the slow-client watchdog");
        free(w);
        return NULL;
    }
    return w;
}

void xpv_slow_clients_stop(xpv_slow_clients *w)
{
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    assert(w->head.next == &w->head); /* the daemon closed every connection */
    free(w);
}

void xpv_slow_clients_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                                    enum MHD_ConnectionNotificationCode code)
{
    xpv_slow_clients *w = cls;
    entry *e = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        e = xpv_xcalloc(1, sizeof *e);
        e->fd = info ? info->connect_fd : -1;
        e->answering = e->fd < 0; /* nothing to watch without a socket */
        e->since = xpv_now_mono();
        pthread_mutex_lock(&w->mu);
        e->next = w->head.next, e->prev = &w->head;
        w->head.next->prev = e, w->head.next = e;
        w->n++;
        make_room(w, e);
        pthread_mutex_unlock(&w->mu);
        *socket_context = e;
    } else if (e) {
        pthread_mutex_lock(&w->mu);
        e->prev->next = e->next, e->next->prev = e->prev;
        w->n--;
        w->ncut -= e->cut;
        pthread_mutex_unlock(&w->mu);
        free(e);
        *socket_context = NULL;
    }
}

void xpv_slow_clients_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                                   enum MHD_RequestTerminationCode toe)
{
    (void)con_cls, (void)toe;
    xpv_slow_clients *w = cls;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    entry *e = info ? info->socket_context : NULL;
    if (!e) return;
    pthread_mutex_lock(&w->mu);
    __atomic_store_n(&e->answering, 0, __ATOMIC_RELAXED);
    e->served = 1;
    e->since = xpv_now_mono();
    pthread_mutex_unlock(&w->mu);
}

void xpv_slow_clients_answering(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    entry *e = info ? info->socket_context : NULL;
    /* Atomic rather than under the mutex: this runs on every request, and
     * at worst the watchdog sees it one round late. */
    if (e) __atomic_store_n(&e->answering, 1, __ATOMIC_RELAXED);
}
