/*
 * live_events.c — see live_events.h.
 *
 * Invariants (all under hub.mu): ring slot id % XPV_LIVE_RING holds event
 * id for first_id <= id < next_id; a client's cursor is the last id it was
 * sent; a client is on the list from its response's creation until
 * libmicrohttpd frees that response; `suspended` is set only by the
 * client's own reader, just before it suspends, and cleared only by the one
 * thread that then resumes it. `resuming` counts threads between clearing
 * it and MHD_resume_connection, so stop waits for them.
 */
#define _GNU_SOURCE
#include "live_events.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define CHUNK_MAX (64 * 1024) /* events formatted per reader call */

typedef struct {
    uint64_t id;
    const char *type; /* a string literal */
    char *data;
} live_event;

typedef struct client {
    struct MHD_Connection *conn;
    uint64_t cursor;
    uint64_t beat; /* heartbeats answered */
    int suspended, reset;
    int left;    /* its client closed the connection: end the stream */
    xpv_buf out; /* formatted, not yet sent */
    size_t sent;
    struct client *prev, *next;
} client;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    live_event ring[XPV_LIVE_RING];
    uint64_t first_id, next_id;
    client *clients;
    int nclients, resuming, closing, started;
    int probe_wanted; /* an early beat (see heartbeat) */
    uint64_t beat;
    pthread_t beat_thread;
} hub = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* Whether the client closed its end. A stream's client sends nothing
 * after its request (and no browser half-closes a connection it reads
 * from), so end of input or a reset on the socket means it left. Looking
 * is one syscall; a failed write would take a round trip to show it. */
static int client_left(const client *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return 0;
    char byte;
    ssize_t got = recv(ci->connect_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Takes every suspended client off suspension (under mu), noting those
 * whose client left when `look` is set; the caller resumes them with
 * resume_all after unlocking. */
static struct MHD_Connection **collect_suspended(int look, int *n)
{
    struct MHD_Connection **list = NULL;
    *n = 0;
    for (client *c = hub.clients; c; c = c->next) {
        if (!c->suspended) continue;
        if (!list) list = xpv_xmalloc((size_t)hub.nclients * sizeof *list);
        if (look) c->left = client_left(c);
        c->suspended = 0;
        list[(*n)++] = c->conn;
    }
    if (*n) hub.resuming++;
    return list;
}

static void resume_all(struct MHD_Connection **list, int n)
{
    for (int i = 0; i < n; i++)
        MHD_resume_connection(list[i]);
    free(list);
    if (!n) return;
    pthread_mutex_lock(&hub.mu);
    hub.resuming--;
    pthread_cond_broadcast(&hub.cv);
    pthread_mutex_unlock(&hub.mu);
}

uint64_t xpv_live_publish(const char *type, const char *json)
{
    assert(!strchr(json, '\n'));
    pthread_mutex_lock(&hub.mu);
    uint64_t id = hub.next_id++;
    live_event *e = &hub.ring[id % XPV_LIVE_RING];
    free(e->data);
    *e = (live_event){id, type, xpv_xstrdup(json)};
    if (hub.next_id - hub.first_id > XPV_LIVE_RING) hub.first_id = hub.next_id - XPV_LIVE_RING;
    int n = 0;
    struct MHD_Connection **list = hub.closing ? NULL : collect_suspended(0, &n);
    pthread_mutex_unlock(&hub.mu);
    resume_all(list, n);
    return id;
}

uint64_t xpv_live_last_id(void)
{
    pthread_mutex_lock(&hub.mu);
    uint64_t id = hub.next_id - 1;
    pthread_mutex_unlock(&hub.mu);
    return id;
}

int xpv_live_clients(void)
{
    pthread_mutex_lock(&hub.mu);
    int n = hub.nclients;
    pthread_mutex_unlock(&hub.mu);
    return n;
}

/* ---- one stream ---- */

/* Formats what the client has not been sent yet into c->out (under mu). */
static void fill(client *c)
{
    if (c->reset || c->cursor + 1 < hub.first_id || c->cursor >= hub.next_id) {
        /* Missed events are gone (or never were ours): start over. */
        c->cursor = hub.next_id - 1;
        c->reset = 0;
        xpv_buf_printf(&c->out, "event: reset\ndata: {\"last_id\":%" PRIu64 "}\n\n", c->cursor);
    }
    while (c->cursor + 1 < hub.next_id && c->out.len < CHUNK_MAX) {
        const live_event *e = &hub.ring[(c->cursor + 1) % XPV_LIVE_RING];
        assert(e->id == c->cursor + 1);
        xpv_buf_printf(&c->out, "id: %" PRIu64 "\nevent: %s\ndata: %s\n\n", e->id, e->type,
                       e->data);
        c->cursor = e->id;
    }
    if (c->out.len == 0 && c->beat != hub.beat) xpv_buf_puts(&c->out, ": keep-alive\n\n");
    c->beat = hub.beat;
}

static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    client *c = cls;
    pthread_mutex_lock(&hub.mu);
    if (c->left) {
        pthread_mutex_unlock(&hub.mu);
        return MHD_CONTENT_READER_END_WITH_ERROR; /* libmicrohttpd closes it */
    }
    if (c->sent == c->out.len) {
        xpv_buf_reset(&c->out);
        c->sent = 0;
        if (hub.closing) {
            pthread_mutex_unlock(&hub.mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        fill(c);
    }
    size_t n = c->out.len - c->sent;
    if (n == 0) {
        /* Nothing to say: park the connection until publish or the
         * heartbeat resumes it. Suspending under mu means no one can
         * resume it before it is suspended. */
        c->suspended = 1;
        MHD_suspend_connection(c->conn);
        pthread_mutex_unlock(&hub.mu);
        return 0;
    }
    if (n > max) n = max;
    memcpy(buf, c->out.data + c->sent, n);
    c->sent += n;
    pthread_mutex_unlock(&hub.mu);
    return (ssize_t)n;
}

static void free_stream(void *cls)
{
    client *c = cls;
    pthread_mutex_lock(&hub.mu);
    assert(!c->suspended);
    if (c->prev)
        c->prev->next = c->next;
    else
        hub.clients = c->next;
    if (c->next) c->next->prev = c->prev;
    hub.nclients--;
    pthread_cond_broadcast(&hub.cv);
    pthread_mutex_unlock(&hub.mu);
    xpv_buf_free(&c->out);
    free(c);
}

/* The id a reconnecting client last saw: Last-Event-ID, or last_event_id
 * in the query for clients that cannot set headers. 0 when absent. */
static int last_seen(struct MHD_Connection *conn, uint64_t *id)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
    if (!v) v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "last_event_id");
    if (!v || !*v) return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || *end || v[0] == '-') return -1;
    *id = n;
    return 1;
}

/* A stream arriving with the list half full asks for an early beat (under
 * mu), which finds the streams of closed tabs before they fill the list. */
static void want_probe(void)
{
    if (hub.started && !hub.closing && hub.nclients >= XPV_LIVE_MAX_CLIENTS / 2) {
        hub.probe_wanted = 1;
        pthread_cond_broadcast(&hub.cv);
    }
}

void xpv_live_reply(struct MHD_Connection *conn, xpv_reply *r)
{
    uint64_t seen = 0;
    int has = last_seen(conn, &seen);
    pthread_mutex_lock(&hub.mu);
    want_probe();
    if (!hub.started || hub.closing || hub.nclients >= XPV_LIVE_MAX_CLIENTS) {
        pthread_mutex_unlock(&hub.mu);
        xpv_reply_error(r, 503, "too many event streams open (at most %d)", XPV_LIVE_MAX_CLIENTS);
        return;
    }
    client *c = xpv_xcalloc(1, sizeof *c);
    c->conn = conn;
    c->beat = hub.beat;
    c->cursor = has > 0 ? seen : hub.next_id - 1;
    c->reset = has < 0;
    /* retry: how soon a browser reconnects; hello: the id to compare with. */
    xpv_buf_printf(&c->out, "retry: 1000\nevent: hello\ndata: {\"last_id\":%" PRIu64 "}\n\n",
                   hub.next_id - 1);
    c->next = hub.clients;
    if (hub.clients) hub.clients->prev = c;
    hub.clients = c;
    hub.nclients++;
    pthread_mutex_unlock(&hub.mu);
    r->stream =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, c, free_stream);
    if (!r->stream) {
        free_stream(c);
        xpv_reply_error(r, 500, "cannot create the event stream");
        return;
    }
    r->content_type = "text/event-stream";
    r->cacheable = 0;
}

/* ---- heartbeat, start, stop ---- */

#define PROBE_GAP_MS 100 /* between early beats: arrivals cannot make a storm */

static struct timespec after_ms(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static int before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec != b->tv_sec ? a->tv_sec < b->tv_sec : a->tv_nsec < b->tv_nsec;
}

/* Every XPV_LIVE_HEARTBEAT_SECONDS, and soon after a stream arrives with
 * the list half full, every suspended stream is resumed: a comment line
 * keeps proxies from closing an idle stream, and a stream whose client
 * left ends (client_left). A suspended connection cannot notice a close by
 * itself, so without the early beat the tabs closed since the last one
 * would count against the cap. */
static void *heartbeat(void *arg)
{
    (void)arg;
    struct timespec until = after_ms(XPV_LIVE_HEARTBEAT_SECONDS * 1000L);
    struct timespec next_probe = {0, 0}; /* the first may come at once */
    pthread_mutex_lock(&hub.mu);
    while (!hub.closing) {
        const struct timespec *wake =
            (hub.probe_wanted && before(&next_probe, &until)) ? &next_probe : &until;
        if (pthread_cond_timedwait(&hub.cv, &hub.mu, wake) != ETIMEDOUT || hub.closing)
            continue; /* woken: the wake time may have changed */
        if (wake == &until) until = after_ms(XPV_LIVE_HEARTBEAT_SECONDS * 1000L);
        hub.probe_wanted = 0;
        next_probe = after_ms(PROBE_GAP_MS);
        hub.beat++;
        int n = 0;
        struct MHD_Connection **list = collect_suspended(1, &n);
        pthread_mutex_unlock(&hub.mu);
        resume_all(list, n);
        pthread_mutex_lock(&hub.mu);
    }
    pthread_mutex_unlock(&hub.mu);
    return NULL;
}

int xpv_live_start(xpv_err *err)
{
    pthread_mutex_lock(&hub.mu);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    hub.first_id = hub.next_id =
        ((uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000) * 1000;
    hub.closing = 0;
    hub.probe_wanted = 0;
    pthread_mutex_unlock(&hub.mu);
    if (pthread_create(&hub.beat_thread, NULL, heartbeat, NULL) != 0)
        return xpv_err_set(err, "cannot start the event-stream heartbeat");
    pthread_mutex_lock(&hub.mu);
    hub.started = 1;
    pthread_mutex_unlock(&hub.mu);
    return 0;
}

void xpv_live_stop(void)
{
    pthread_mutex_lock(&hub.mu);
    if (!hub.started) {
        pthread_mutex_unlock(&hub.mu);
        return;
    }
    hub.closing = 1;
    pthread_cond_broadcast(&hub.cv);
    int n = 0;
    struct MHD_Connection **list = collect_suspended(0, &n);
    pthread_mutex_unlock(&hub.mu);
    resume_all(list, n); /* each reader now ends its stream */
    pthread_join(hub.beat_thread, NULL);
    pthread_mutex_lock(&hub.mu);
    while (hub.resuming)
        pthread_cond_wait(&hub.cv, &hub.mu);
    hub.started = 0;
    for (size_t i = 0; i < XPV_LIVE_RING; i++) {
        free(hub.ring[i].data);
        hub.ring[i].data = NULL;
    }
    pthread_mutex_unlock(&hub.mu);
}
