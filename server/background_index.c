/*
 * background_index.c — see background_index.h.
 *
 * The thread owns the only writing connection. Progress goes into the
 * server's `progress` under its lock; the stop flag is the server's.
 */
#define _GNU_SOURCE
#include "background_index.h"
#include "../api/block_marks.h"
#include "../indexer/index_db.h"
#include "../indexer/indexer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static struct {
    pthread_t thread;
    int started;
    int finished; /* under done_mu */
    pthread_mutex_t done_mu;
    pthread_cond_t done_cv; /* signalled when finished, and to wake a sleeping rescan */
    xpv_server *server;
    const xpv_found_list *initial;
    sqlite3 *db;
} bg = {.done_mu = PTHREAD_MUTEX_INITIALIZER, .done_cv = PTHREAD_COND_INITIALIZER};

static void on_progress(void *ctx, const xpv_index_progress *p)
{
    xpv_server *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->progress.total = p->total;
    s->progress.done = p->done;
    snprintf(s->progress.current, sizeof s->progress.current, "%s", p->current ? p->current : "");
    pthread_mutex_unlock(&s->mu);
}

static void set_active(xpv_server *s, int active, const char *error)
{
    pthread_mutex_lock(&s->mu);
    s->progress.active = active;
    if (!active) {
        s->progress.runs++;
        s->progress.current[0] = 0;
        snprintf(s->progress.error, sizeof s->progress.error, "%s", error ? error : "");
    }
    pthread_mutex_unlock(&s->mu);
}

/* Computes resume marks for every indexed profile's blocks, so the first
 * timeline windows are as fast as later ones (cached blocks are skipped). */
static void warm_marks(xpv_server *s)
{
    if (s->marks) xpv_block_marks_warm_all(s->marks, bg.db, &s->stop);
}

static int run_once(xpv_server *s, const xpv_found_list *found)
{
    xpv_err err = {{0}};
    set_active(s, 1, NULL);
    int rc = xpv_indexer_run(bg.db, found, on_progress, s, &s->stop, &err);
    if (rc == 0) warm_marks(s);
    if (rc != 0 && !s->stop) fprintf(stderr, "xprof-view: indexing: %s\n", err.msg);
    set_active(s, 0, rc != 0 && !s->stop ? err.msg : NULL);
    return rc;
}

/* A cheap summary of what discovery saw: changes when any file is added,
 * removed, resized, touched or becomes (un)readable. */
static uint64_t fingerprint(const xpv_found_list *l)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < l->n; i++) {
        const xpv_found *f = &l->items[i];
        uint64_t parts[4] = {xpv_hash64(f->rel_path, strlen(f->rel_path)), (uint64_t)f->size,
                             (uint64_t)f->mtime_ns, f->error ? 1u : 0u};
        h = xpv_hash64(parts, sizeof parts) ^ (h * 1099511628211ULL);
    }
    return h;
}

/* Sleeps up to `seconds`, waking early on stop. Returns 1 when stopping. */
static int nap(xpv_server *s, int seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&bg.done_mu);
    while (!s->stop) {
        if (pthread_cond_timedwait(&bg.done_cv, &bg.done_mu, &until) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&bg.done_mu);
    return s->stop;
}

static void rescan_loop(xpv_server *s, uint64_t last)
{
    while (!nap(s, XPV_RESCAN_SECONDS)) {
        xpv_found_list found;
        xpv_err err = {{0}};
        if (xpv_discover(s->profile_arg, &found, &err) != 0) continue; /* e.g. dir gone for now */
        found.limits = s->opts->limits;
        uint64_t now = fingerprint(&found);
        if (now != last && !s->stop) {
            int pending = xpv_indexer_register(bg.db, &found, &err);
            if (pending < 0)
                fprintf(stderr, "xprof-view: rescan: %s\n", err.msg);
            else if (run_once(s, &found) == 0)
                last = now;
        }
        xpv_found_list_free(&found);
    }
}

static void *index_thread(void *arg)
{
    xpv_server *s = arg;
    if (run_once(s, bg.initial) == 0) rescan_loop(s, fingerprint(bg.initial));
    pthread_mutex_lock(&bg.done_mu);
    bg.finished = 1;
    pthread_cond_broadcast(&bg.done_cv);
    pthread_mutex_unlock(&bg.done_mu);
    return NULL;
}

int xpv_bg_index_start(xpv_server *s, const xpv_found_list *found, xpv_err *err)
{
    if (xpv_index_open(s->db_path, s->root_abs, &bg.db, NULL, err) != 0) return -1;
    bg.server = s;
    bg.initial = found;
    bg.finished = 0;
    if (pthread_create(&bg.thread, NULL, index_thread, s) != 0) {
        sqlite3_close(bg.db);
        bg.db = NULL;
        return xpv_err_set(err, "cannot start the indexing thread");
    }
    bg.started = 1;
    return 0;
}

int xpv_bg_index_stop(xpv_server *s, double wait_seconds)
{
    if (!bg.started) return 1;
    pthread_mutex_lock(&bg.done_mu);
    s->stop = 1;
    pthread_cond_broadcast(&bg.done_cv);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)wait_seconds;
    until.tv_nsec += (long)((wait_seconds - (double)(time_t)wait_seconds) * 1e9);
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    int interrupted = 0;
    while (!bg.finished) {
        if (pthread_cond_timedwait(&bg.done_cv, &bg.done_mu, &until) == ETIMEDOUT) {
            if (interrupted) break;
            /* Cut a long SQLite step short; the profile stays pending. */
            sqlite3_interrupt(bg.db);
            interrupted = 1;
            until.tv_sec += 1;
        }
    }
    int finished = bg.finished;
    pthread_mutex_unlock(&bg.done_mu);
    if (!finished) return 0;
    pthread_join(bg.thread, NULL);
    sqlite3_close(bg.db);
    bg.db = NULL;
    bg.started = 0;
    return 1;
}
