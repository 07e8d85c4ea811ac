/*
 * background_index.c — see background_index.h.
 *
 * The thread owns the only writing connection. Progress goes into the
 * server's `progress` under its lock; the stop flag is the server's.
 *
 * The index is a cache, so the thread also keeps it alive: once a second it
 * checks that the file is still the one it opened (not deleted, replaced
 * or cut shorter than it wrote it), and when a request reports damage it
 * runs SQLite's quick check. A lost or damaged index is created anew and
 * every profile indexed again; serving threads see the new generation and
 * reopen, and answer 503 until the file is back.
 */
#define _GNU_SOURCE
#include "background_index.h"
#include "../api/block_marks.h"
#include "../indexer/index_db.h"
#include "../indexer/indexer.h"

#include <errno.h>
#include <sys/stat.h>
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
    struct stat file;    /* the index file as this thread left it */
    int damage_reported; /* under done_mu */
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

/* Sleeps up to `seconds`, waking early on stop or a damage report.
 * Returns 1 when stopping. */
static int nap(xpv_server *s, int seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&bg.done_mu);
    while (!s->stop && !bg.damage_reported) {
        if (pthread_cond_timedwait(&bg.done_cv, &bg.done_mu, &until) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&bg.done_mu);
    return s->stop;
}

void xpv_server_index_damaged(xpv_server *s)
{
    (void)s;
    pthread_mutex_lock(&bg.done_mu);
    bg.damage_reported = 1;
    pthread_cond_broadcast(&bg.done_cv);
    pthread_mutex_unlock(&bg.done_mu);
}

static void remember_file(xpv_server *s)
{
    if (stat(s->db_path, &bg.file) != 0) memset(&bg.file, 0, sizeof bg.file);
}

/* What happened to the index file, or NULL when it is as this thread left
 * it (and, after a report, passes the quick check). */
static const char *index_damage(xpv_server *s)
{
    struct stat st;
    pthread_mutex_lock(&bg.done_mu);
    int reported = bg.damage_reported;
    bg.damage_reported = 0;
    pthread_mutex_unlock(&bg.done_mu);
    if (stat(s->db_path, &st) != 0) return "deleted";
    if (st.st_ino != bg.file.st_ino || st.st_dev != bg.file.st_dev) return "replaced";
    if (st.st_size < bg.file.st_size) return "truncated";
    if (!reported) return NULL;
    sqlite3_stmt *q;
    int ok = sqlite3_prepare_v2(bg.db, "PRAGMA quick_check(1)", -1, &q, NULL) == SQLITE_OK &&
             sqlite3_step(q) == SQLITE_ROW &&
             strcmp((const char *)sqlite3_column_text(q, 0), "ok") == 0;
    sqlite3_finalize(q);
    return ok ? NULL : "damaged";
}

/* Creates the index anew; every profile is registered and indexed again
 * by the caller. Returns 0, or -1 (said on stderr) to try again later. */
static int rebuild(xpv_server *s, const char *why)
{
    xpv_err err = {{0}};
    fprintf(stderr, "xprof-view: the index %s was %s; rebuilding it\n", s->db_path, why);
    sqlite3_close_v2(bg.db);
    bg.db = NULL;
    /* Opening checks the file again under the opening lock: a damaged one
     * is removed and made anew, and one that another server on the same
     * folder has just rebuilt is taken as it is. */
    if (xpv_index_open(s->db_path, s->root_abs, &bg.db, NULL, &err) != 0) {
        fprintf(stderr, "xprof-view: cannot rebuild the index: %s\n", err.msg);
        return -1;
    }
    remember_file(s);
    __atomic_add_fetch(&s->index_generation, 1, __ATOMIC_RELEASE);
    return 0;
}

static void rescan_loop(xpv_server *s, uint64_t last)
{
    int naps = 0;
    while (!nap(s, 1)) {
        const char *damage = index_damage(s);
        if (damage) {
            if (rebuild(s, damage) != 0) continue;
            last = 0; /* the new index has no profile: register them all */
        } else if (++naps < XPV_RESCAN_SECONDS) {
            continue;
        }
        naps = 0;
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
            remember_file(s);
        }
        xpv_found_list_free(&found);
    }
}

static void *index_thread(void *arg)
{
    xpv_server *s = arg;
    int rc = run_once(s, bg.initial);
    remember_file(s);
    if (rc == 0) rescan_loop(s, fingerprint(bg.initial));
    pthread_mutex_lock(&bg.done_mu);
    bg.finished = 1;
    pthread_cond_broadcast(&bg.done_cv);
    pthread_mutex_unlock(&bg.done_mu);
    return NULL;
}

int xpv_bg_index_start(xpv_server *s, const xpv_found_list *found, xpv_err *err)
{
    if (xpv_index_open(s->db_path, s->root_abs, &bg.db, NULL, err) != 0) return -1;
    remember_file(s);
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
