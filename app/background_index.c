/*
 * background_index.c — see background_index.h.
 *
 * The thread owns the only writing connection, the watcher's waiting end,
 * the settle tracker, the last walk's file list and the set of profile ids
 * clients have been told about: none of it is shared. Progress goes into
 * the server's `progress` under its lock; events go through live_events.c,
 * which has its own; the stop flag is the server's.
 *
 * The index is a cache, so the thread also keeps it alive: once a second it
 * checks that the file is still the one it opened (not deleted, replaced
 * or cut shorter than it wrote it), and when a request reports damage it
 * runs SQLite's quick check. A lost or damaged index is created anew and
 * every profile indexed again; serving threads see the new generation and
 * reopen, and answer 503 until the file is back. Damage SQLite cannot see
 * (an event block that fails its checksum) is reported per profile: the
 * thread decodes that profile's blocks and, if one is damaged, marks the
 * profile pending and indexes it again, alone.
 */
#define _GNU_SOURCE
#include "background_index.h"
#include "../server/live_events.h"
#include "../api/api.h"
#include "../api/block_marks.h"
#include "../api/findings/findings.h"
#include "../store/event_store.h"
#include "../store/kernel_device_stats.h"
#include "../store/string_chunks.h"
#include "../api/hlo/hlo_warm.h"
#include "../api/device_rows.h"
#include "../store/index_db.h"
#include "../indexer/indexer.h"
#include "../indexer/settle.h"
#include "../indexer/watch.h"
#include "../common/xpv_idset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_EVENT_SECONDS 0.25 /* at most 4 index-progress events a second */
#define COALESCE_MS 25              /* a burst of changes is one walk... */
#define COALESCE_MAX_MS 250         /* ...but a steady stream still gets walked */
#define INDEX_CHECK_MS 1000         /* how often the index file is looked at */
#define INDEX_NICE 5                /* the indexing thread's nice value */
#define REBUILD_RETRY_MAX_S 30      /* the longest wait before a failed rebuild is retried */

static struct {
    pthread_t thread;
    int started;
    int finished; /* under done_mu */
    pthread_mutex_t done_mu;
    pthread_cond_t done_cv; /* signalled when finished */
    struct stat file;       /* the index file as this thread left it */
    int damage_reported;    /* under done_mu */
    xpv_idset suspects;     /* profiles with a damaged block reported; under done_mu */
    xpv_server *server;
    const xpv_options *opts;
    const xpv_found_list *initial;
    sqlite3 *db;
    xpv_watch *watch;
    xpv_settle *settle;
    xpv_found_list own;        /* the last walk, once there was one */
    const xpv_found_list *cur; /* the last walk: initial, then own */
    xpv_idset announced;       /* profiles clients know of */
    xpv_idset indexed;         /* profiles indexed in the current run */
    xpv_idset to_warm;         /* profiles whose findings are still to keep */
    double last_progress_event;
    double rebuild_wait; /* seconds before a failed rebuild is tried again, 0 none */
    double rebuild_due;  /* when it is (monotonic seconds) */
} bg = {.done_mu = PTHREAD_MUTEX_INITIALIZER, .done_cv = PTHREAD_COND_INITIALIZER};

/* The stop flag is written by the main thread: read it atomically. */
static int stopping(xpv_server *s)
{
    return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

/* ---- events ---- */

static void publish_progress(xpv_server *s, int force)
{
    double now = xpv_now_mono();
    if (!force && now - bg.last_progress_event < PROGRESS_EVENT_SECONDS) return;
    bg.last_progress_event = now;
    xpv_server_progress p;
    xpv_server_progress_get(s, &p);
    xpv_buf b = {0};
    xpv_buf_printf(&b, "{\"active\":%s,\"total\":%d,\"done\":%d,\"runs\":%lld,\"current\":",
                   p.active ? "true" : "false", p.total, p.done, (long long)p.runs);
    if (p.current[0])
        xpv_buf_json_str(&b, p.current, strlen(p.current));
    else
        xpv_buf_puts(&b, "null");
    xpv_buf_putc(&b, '}');
    xpv_live_publish("index-progress", b.data);
    xpv_buf_free(&b);
}

/* {"profile": {...}, "latest": "<id>"|null}: the profile as /api/profiles
 * gives it, and which profile `latest` is now. */
static void publish_profile(const char *type, int64_t id)
{
    xpv_buf b = {0};
    xpv_buf_puts(&b, "{\"profile\":");
    if (xpv_api_profile(bg.db, id, &b) != 200) {
        xpv_buf_free(&b);
        return; /* gone meanwhile: its removal follows */
    }
    int64_t latest;
    char hex[17];
    if (xpv_api_latest_id(bg.db, &latest, NULL) == 1) {
        xpv_profile_id_hex(latest, hex);
        xpv_buf_printf(&b, ",\"latest\":\"%s\"}", hex);
    } else {
        xpv_buf_puts(&b, ",\"latest\":null}");
    }
    xpv_live_publish(type, b.data);
    xpv_buf_free(&b);
}

/* A profile's row was committed: new to clients, or changed. Trace-JSON
 * twins of an xplane are not listed, so not announced either. */
static void announce(const xpv_found *f)
{
    if (f->companion_of >= 0) return;
    int64_t id = xpv_profile_id_for(f->rel_path);
    int is_new = xpv_idset_add(&bg.announced, id);
    publish_profile(is_new ? "profile-added" : "profile-updated", id);
}

static void publish_removed(int64_t id, const char *rel_path)
{
    if (!xpv_idset_del(&bg.announced, id)) return;
    char hex[17];
    xpv_profile_id_hex(id, hex);
    xpv_buf b = {0};
    xpv_buf_printf(&b, "{\"id\":\"%s\",\"path\":", hex);
    xpv_buf_json_str(&b, rel_path, strlen(rel_path));
    xpv_buf_putc(&b, '}');
    xpv_live_publish("profile-removed", b.data);
    xpv_buf_free(&b);
}

/* ---- indexing runs ---- */

static void on_progress(void *ctx, const xpv_index_progress *p)
{
    xpv_server *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->progress.total = p->total;
    s->progress.done = p->done;
    snprintf(s->progress.current, sizeof s->progress.current, "%s", p->current ? p->current : "");
    pthread_mutex_unlock(&s->mu);
    if (p->finished) {
        xpv_idset_add(&bg.indexed, xpv_profile_id_for(p->finished->rel_path));
        announce(p->finished);
    }
    publish_progress(s, p->done == 0 && !p->finished);
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
    publish_progress(s, 1);
}

/* Computes resume marks for the blocks of the profiles just indexed, so
 * their first timeline windows are as fast as later ones. */
static void warm_marks(xpv_server *s)
{
    xpv_err err = {{0}};
    for (size_t i = 0; s->marks && i < bg.indexed.n && !stopping(s); i++)
        if (xpv_block_marks_warm(s->marks, bg.db, bg.indexed.ids[i], &s->stop, &err) < 0 &&
            !bg.opts->quiet) /* windows still answer, decoding whole blocks */
            fprintf(stderr, "xprof-view: warming the resume marks: %s\n", err.msg);
}

/* Scans the HLO ops of the profiles just indexed into the HLO tools'
 * cache, and on the first run those of the newest run too (an index built
 * before this server started), so that the tools' first answer, hosts
 * merged, reads the cache. Before indexing is reported done: a client
 * waiting for that finds them warm. */
static void warm_hlo(xpv_server *s, int first_run)
{
    xpv_err err = {{0}};
    if (!s->hlo_cache) return;
    int rc =
        xpv_hlo_warm_profiles(bg.db, s->hlo_cache, bg.indexed.ids, bg.indexed.n, &s->stop, &err);
    if (rc >= 0 && first_run) rc = xpv_hlo_warm_latest_run(bg.db, s->hlo_cache, &s->stop, &err);
    if (rc < 0 && !bg.opts->quiet) /* the tools still answer, scanning on request */
        fprintf(stderr, "xprof-view: warming the HLO tools: %s\n", err.msg);
}

/* Builds the derived device rows (Steps, XLA Modules, XLA Ops) of the
 * profiles just indexed, and on the first run those of the newest run, so
 * that the timeline's first tracks answer and an evidence link's window
 * read them instead of scanning every device event. Before indexing is
 * reported done, like the HLO ops. */
static void warm_devrows(xpv_server *s, int first_run)
{
    xpv_err err = {{0}};
    if (s->devrows &&
        xpv_devrows_warm(bg.db, s->devrows, bg.indexed.ids, bg.indexed.n, first_run, &s->stop,
                         &err) < 0 &&
        !bg.opts->quiet) /* the timeline still answers, building them on request */
        fprintf(stderr, "xprof-view: warming the device rows: %s\n", err.msg);
}

static void keep_findings(xpv_server *s, int64_t id)
{
    xpv_err err = {{0}};
    char hex[17];
    if (xpv_api_findings_keep(bg.db, id, &s->opts.findings, &err) >= 0 || stopping(s) ||
        bg.opts->quiet)
        return;
    xpv_profile_id_hex(id, hex); /* /findings still answers, computing */
    fprintf(stderr, "xprof-view: profile %s: keeping the findings: %s\n", hex, err.msg);
}

/* Queues the findings of the profiles just indexed, and on the first run
 * those of every listed profile (an index built before this server
 * started: those kept already cost a read), so that a profile page's
 * first /findings reads them. They are computed after indexing is
 * reported done, a profile at a time while no file waits (follow): a
 * pod's hundreds of profiles never hold back a new capture. A request
 * that comes sooner computes its answer itself. */
static void queue_findings(const xpv_found_list *found, int first_run)
{
    for (size_t i = 0; i < bg.indexed.n; i++)
        xpv_idset_add(&bg.to_warm, bg.indexed.ids[i]);
    for (size_t i = 0; first_run && i < found->n; i++)
        if (found->items[i].companion_of < 0)
            xpv_idset_add(&bg.to_warm, xpv_profile_id_for(found->items[i].rel_path));
}

/* Keeps one queued profile's findings; the index keeps its size on disk
 * once the queue is empty. */
static void warm_one_findings(xpv_server *s)
{
    int64_t id = bg.to_warm.ids[0];
    xpv_idset_del(&bg.to_warm, id);
    keep_findings(s, id);
    if (!bg.to_warm.n) xpv_index_trim_wal(bg.db);
}

static int run_once(xpv_server *s, const xpv_found_list *found)
{
    xpv_err err = {{0}};
    xpv_idset_clear(&bg.indexed);
    set_active(s, 1, NULL);
    xpv_index_options run = {bg.opts->jobs, on_progress, s, &s->stop};
    int rc = xpv_indexer_run(bg.db, found, &run, &err);
    if (rc == 0) warm_marks(s);
    if (rc == 0) warm_hlo(s, found == bg.initial);
    if (rc == 0) warm_devrows(s, found == bg.initial);
    if (rc == 0) queue_findings(found, found == bg.initial);
    if (rc == 0) xpv_index_trim_wal(bg.db); /* the index keeps its size on disk */
    if (rc != 0 && !stopping(s)) fprintf(stderr, "xprof-view: indexing: %s\n", err.msg);
    set_active(s, 0, rc != 0 && !stopping(s) ? err.msg : NULL);
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

/* ---- keeping the index alive ---- */

static void on_index_damaged(void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&bg.done_mu);
    bg.damage_reported = 1;
    if (bg.watch) xpv_watch_wake(bg.watch);
    pthread_mutex_unlock(&bg.done_mu);
}

static void on_profile_damaged(void *ctx, int64_t id)
{
    (void)ctx;
    pthread_mutex_lock(&bg.done_mu);
    if (xpv_idset_add(&bg.suspects, id) && bg.watch) xpv_watch_wake(bg.watch);
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
    return xpv_index_quick_check(bg.db) ? NULL : "damaged";
}

/* The generation is odd while the file is made anew (server_state.h):
 * only this thread changes it, so a load and an add do not race. */
static void generation_odd(xpv_server *s)
{
    if (!(__atomic_load_n(&s->index_generation, __ATOMIC_SEQ_CST) & 1))
        __atomic_add_fetch(&s->index_generation, 1, __ATOMIC_SEQ_CST);
}

static void generation_even(xpv_server *s)
{
    if (__atomic_load_n(&s->index_generation, __ATOMIC_SEQ_CST) & 1)
        __atomic_add_fetch(&s->index_generation, 1, __ATOMIC_SEQ_CST);
}

/* A rebuild that failed is tried again after a wait that doubles, up to
 * REBUILD_RETRY_MAX_S (a missing cache folder fails every time); serving
 * threads answer 503 until one succeeds. */
static int rebuild_failed(const char *what, const xpv_err *err)
{
    bg.rebuild_wait = bg.rebuild_wait > 0 ? bg.rebuild_wait * 2 : 1;
    if (bg.rebuild_wait > REBUILD_RETRY_MAX_S) bg.rebuild_wait = REBUILD_RETRY_MAX_S;
    bg.rebuild_due = xpv_now_mono() + bg.rebuild_wait;
    fprintf(stderr, "xprof-view: %s: %s; trying again in %.0f s\n", what, err->msg,
            bg.rebuild_wait);
    return -1;
}

/* Creates the index anew and indexes every profile of the last walk into
 * it. Returns 0, or -1 (said on stderr) to try again later. */
static int rebuild(xpv_server *s, const char *why, uint64_t *last)
{
    xpv_err err = {{0}};
    fprintf(stderr, "xprof-view: the index %s was %s; rebuilding it\n", s->db_path, why);
    /* Odd: serving threads answer 503 rather than open the new file before
     * its profiles are listed (a thread's first request included). */
    generation_odd(s);
    sqlite3_close_v2(bg.db);
    bg.db = NULL;
    /* The cache folder is ours to make again, as at start-up (someone
     * cleaned ~/.cache); a folder given with --db is not. */
    char cache[XPV_SERVER_PATH_MAX];
    if (!bg.opts->db_path && xpv_index_cache_dir(cache, sizeof cache, &err) != 0)
        return rebuild_failed("cannot make the cache folder again", &err);
    /* Opening checks the file again under the opening lock: a damaged one
     * is removed and made anew, and one that another server on the same
     * folder has just rebuilt is taken as it is. */
    if (xpv_index_open(s->db_path, s->root_abs, &bg.db, NULL, &err) != 0)
        return rebuild_failed("cannot rebuild the index", &err);
    remember_file(s);
    *last = 0; /* the new index has no profile: register them all */
    if (xpv_indexer_register(bg.db, bg.cur, &err) < 0) return rebuild_failed("rebuild", &err);
    /* Even again: serving threads move to the new file only now, so they
     * find every profile listed (pending until indexed), never an empty
     * index. */
    generation_even(s);
    bg.rebuild_wait = 0;
    if (run_once(s, bg.cur) == 0) *last = fingerprint(bg.cur);
    remember_file(s);
    return 0;
}

/* Checks the blocks and packed kernel rows of each profile reported
 * damaged and indexes again those that are. */
static void recheck_profiles(xpv_server *s, uint64_t *last)
{
    pthread_mutex_lock(&bg.done_mu);
    xpv_idset ids = bg.suspects;
    memset(&bg.suspects, 0, sizeof bg.suspects);
    pthread_mutex_unlock(&bg.done_mu);
    int marked = 0;
    for (size_t i = 0; i < ids.n && !stopping(s); i++) {
        xpv_err err = {{0}};
        char hex[17];
        xpv_profile_id_hex(ids.ids[i], hex);
        int bad = xpv_store_verify(bg.db, ids.ids[i], &s->stop, &err);
        if (bad == 0 && !stopping(s))
            bad = xpv_store_kernel_device_stats_verify(bg.db, ids.ids[i], &err);
        if (bad == 0 && !stopping(s)) bad = xpv_store_string_chunks_verify(bg.db, ids.ids[i], &err);
        if (bad != 1) continue;
        fprintf(stderr, "xprof-view: profile %s: %s; indexing it again\n", hex, err.msg);
        if (xpv_index_mark_pending(bg.db, ids.ids[i], &err) == 0)
            marked++;
        else
            fprintf(stderr, "xprof-view: profile %s: %s\n", hex, err.msg);
    }
    xpv_idset_free(&ids);
    if (!marked || stopping(s)) return;
    if (run_once(s, bg.cur) != 0) *last = 0; /* walk and try again */
    remember_file(s);
}

/* ---- following the directory ---- */

static int admit(void *ctx, const char *rel_path, int64_t size, int64_t mtime_ns)
{
    return xpv_settle_observe(bg.settle, rel_path, size, mtime_ns, *(const int64_t *)ctx);
}

/* Publishes profile-removed for what the last walk had and `next` lacks
 * (after `next` is registered, so a client refetching sees it gone). */
static void publish_vanished(const xpv_found_list *prev, const xpv_found_list *next)
{
    xpv_idset now = {0};
    for (size_t i = 0; i < next->n; i++)
        xpv_idset_add(&now, xpv_profile_id_for(next->items[i].rel_path));
    for (size_t i = 0; i < prev->n; i++) {
        int64_t id = xpv_profile_id_for(prev->items[i].rel_path);
        if (!xpv_idset_has(&now, id)) publish_removed(id, prev->items[i].rel_path);
    }
    xpv_idset_free(&now);
}

/* Walks the directory again and indexes what changed. */
static void rescan(xpv_server *s, uint64_t *last)
{
    xpv_found_list next;
    xpv_err err = {{0}};
    int64_t now = xpv_now_wall_ns();
    if (xpv_discover_again(s->profile_arg, bg.cur, admit, &now, &next, &err) != 0)
        return; /* e.g. the directory is gone for now */
    next.limits = bg.opts->limits;
    xpv_settle_sweep(bg.settle);
    uint64_t fp = fingerprint(&next);
    if (fp == *last || stopping(s)) {
        xpv_found_list_free(&next);
        return;
    }
    if (xpv_indexer_register(bg.db, &next, &err) < 0) {
        fprintf(stderr, "xprof-view: rescan: %s\n", err.msg);
        xpv_found_list_free(&next);
        return;
    }
    publish_vanished(bg.cur, &next);
    xpv_found_list old = bg.own;
    bg.own = next;
    bg.cur = &bg.own;
    xpv_found_list_free(&old);
    if (run_once(s, bg.cur) == 0) *last = fp;
    remember_file(s);
}

/* How long to sleep: until the first settling file is due, or the index
 * file is looked at again. */
static int next_wait_ms(void)
{
    int64_t due = xpv_settle_next_due(bg.settle, xpv_now_wall_ns());
    int64_t ms = due < 0 ? INDEX_CHECK_MS : due / 1000000 + 1;
    return ms > INDEX_CHECK_MS ? INDEX_CHECK_MS : (int)ms;
}

/* How long to sleep before a failed rebuild is tried again. */
static int retry_wait_ms(void)
{
    double ms = (bg.rebuild_due - xpv_now_mono()) * 1000 + 1;
    return ms < 1 ? 1 : ms > INDEX_CHECK_MS ? INDEX_CHECK_MS : (int)ms;
}

static void follow(xpv_server *s, uint64_t last)
{
    double last_walk = xpv_now_mono();
    while (!stopping(s)) {
        if (bg.rebuild_wait > 0) { /* no index to warm, walk or check */
            xpv_watch_wait(bg.watch, retry_wait_ms());
            if (!stopping(s) && xpv_now_mono() >= bg.rebuild_due)
                rebuild(s, "not rebuilt yet", &last);
            continue;
        }
        /* Findings are warmed only while no file waits: a file settling or
         * a change seen first walks and indexes, then warming resumes. */
        int warm = bg.to_warm.n > 0 && xpv_settle_count(bg.settle) == 0;
        int changed = xpv_watch_wait(bg.watch, warm ? 0 : next_wait_ms());
        if (stopping(s)) break;
        const char *damage = index_damage(s);
        if (damage) {
            rebuild(s, damage, &last);
            continue;
        }
        recheck_profiles(s, &last);
        /* Let a burst of writes finish before walking, within bounds. */
        double until = xpv_now_mono() + COALESCE_MAX_MS / 1000.0;
        while (changed && !stopping(s) && xpv_now_mono() < until &&
               xpv_watch_wait(bg.watch, COALESCE_MS) == 1)
            ;
        int due = xpv_settle_count(bg.settle) > 0 ||
                  xpv_now_mono() - last_walk >= XPV_SAFETY_RESCAN_SECONDS;
        if (!changed && !due) {
            if (warm) warm_one_findings(s);
            continue;
        }
        last_walk = xpv_now_mono();
        rescan(s, &last);
    }
}

static void *index_thread(void *arg)
{
    xpv_server *s = arg;
    /* Requests first: indexing (and the threads it starts, which inherit
     * this) yields the CPU to them, so a burst of new captures does not
     * slow the pages down. On an idle machine it changes nothing. */
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), INDEX_NICE) != 0 && !bg.opts->quiet)
        fprintf(stderr, "xprof-view: cannot lower the indexing thread's priority: %s\n",
                strerror(errno));
    int rc = run_once(s, bg.initial);
    remember_file(s);
    if (rc == 0) follow(s, fingerprint(bg.initial));
    pthread_mutex_lock(&bg.done_mu);
    bg.finished = 1;
    pthread_cond_broadcast(&bg.done_cv);
    pthread_mutex_unlock(&bg.done_mu);
    return NULL;
}

static int open_watch(xpv_server *s, xpv_err *err)
{
    char why[300];
    struct stat st; /* one file served: watch its directory, not below it */
    int recursive = stat(s->profile_arg, &st) != 0 || S_ISDIR(st.st_mode);
    xpv_watch *w =
        xpv_watch_open(s->root_abs, recursive, bg.opts->poll_seconds, why, sizeof why, err);
    if (!w) return -1;
    pthread_mutex_lock(&bg.done_mu); /* request threads wake it on damage */
    bg.watch = w;
    pthread_mutex_unlock(&bg.done_mu);
    if (why[0] && !bg.opts->poll_seconds && !bg.opts->quiet)
        fprintf(stderr, "xprof-view: polling the profile directory every %d s (%s)\n",
                xpv_watch_poll_seconds(bg.watch), why);
    pthread_mutex_lock(&s->mu);
    snprintf(s->progress.watch, sizeof s->progress.watch, "%s", xpv_watch_mode(bg.watch));
    s->progress.poll_seconds = xpv_watch_poll_seconds(bg.watch);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void xpv_bg_index_attach(xpv_server *s)
{
    s->damage_ctx = &bg;
    s->on_index_damaged = on_index_damaged;
    s->on_profile_damaged = on_profile_damaged;
}

int xpv_bg_index_start(xpv_server *s, const xpv_options *o, const xpv_found_list *found,
                       xpv_err *err)
{
    bg.opts = o;
    if (xpv_index_open(s->db_path, s->root_abs, &bg.db, NULL, err) != 0) return -1;
    remember_file(s);
    if (open_watch(s, err) != 0) {
        sqlite3_close(bg.db);
        bg.db = NULL;
        return -1;
    }
    bg.server = s;
    bg.initial = bg.cur = found;
    bg.settle = xpv_settle_new((int64_t)bg.opts->settle_ms * 1000000);
    for (size_t i = 0; i < found->n; i++) /* listed (pending) from the start */
        if (found->items[i].companion_of < 0)
            xpv_idset_add(&bg.announced, xpv_profile_id_for(found->items[i].rel_path));
    bg.finished = 0;
    if (pthread_create(&bg.thread, NULL, index_thread, s) != 0) {
        sqlite3_close(bg.db);
        bg.db = NULL;
        return xpv_err_set(err, "cannot start the indexing thread");
    }
    bg.started = 1;
    return 0;
}

static void release(void)
{
    sqlite3_close(bg.db);
    bg.db = NULL;
    pthread_mutex_lock(&bg.done_mu);
    xpv_watch *w = bg.watch;
    bg.watch = NULL;
    pthread_mutex_unlock(&bg.done_mu);
    xpv_watch_close(w);
    xpv_settle_free(bg.settle);
    bg.settle = NULL;
    xpv_found_list_free(&bg.own);
    xpv_idset_free(&bg.announced);
    xpv_idset_free(&bg.indexed);
    xpv_idset_free(&bg.to_warm);
    xpv_idset_free(&bg.suspects);
    memset(&bg.suspects, 0, sizeof bg.suspects);
    memset(&bg.announced, 0, sizeof bg.announced);
    memset(&bg.indexed, 0, sizeof bg.indexed);
    memset(&bg.to_warm, 0, sizeof bg.to_warm);
    bg.started = 0;
}

int xpv_bg_index_stop(xpv_server *s, double wait_seconds)
{
    if (!bg.started) return 1;
    pthread_mutex_lock(&bg.done_mu);
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
    xpv_watch_wake(bg.watch);
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
            if (bg.db) sqlite3_interrupt(bg.db); /* NULL while a rebuild opens it */
            interrupted = 1;
            until.tv_sec += 1;
        }
    }
    int finished = bg.finished;
    pthread_mutex_unlock(&bg.done_mu);
    if (!finished) return 0;
    pthread_join(bg.thread, NULL);
    release();
    return 1;
}
