/*
 * index_jobs.c — indexing several files at once (--jobs). Worker threads
 * each take the next queued file and index it, reader, event store and
 * analysis, into a part: a private database in memory (for a large file,
 * beside the index) with the same schema (index_db.h), but for the
 * kernel rows (put in the table's key order) and the strings, which the
 * worker keeps in memory (xpv_index_part_rows) so that each is inserted
 * once, into the index (the most numerous rows: ~9 k instructions a row,
 * each time one is inserted). The
 * calling thread is the index's only writer: it moves each finished part
 * in, one short transaction each, and reports progress, so serving threads
 * wait on the index no longer than for one copy of rows.
 *
 * Invariants: the index connection is touched by the calling thread only;
 * parts are moved in in queue order, which is the order one job commits
 * in, so block ids, and so event ids, are the same whatever the number of
 * jobs; workers run at most `window` files ahead of the last part moved
 * in, which bounds the disk and memory the parts take; every part is freed,
 * moved in or not.
 */
#define _GNU_SOURCE
#include "../store/index_db.h"
#include "../store/kernel_stats.h"
#include "index_jobs.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { PART_QUEUED, PART_RUNNING, PART_READY, PART_FAILED };

typedef struct {
    char path[4200];
    int state;
    xpv_err err;
    xpv_index_part_rows rows;   /* the part's kernel rows and strings, for the writer */
    xpv_index_part_image image; /* an in-memory part's, else NULL */
} part_slot;

/* Files up to this size are indexed into a part in memory, which spares
 * the part's file its writes and the writer its reads (system time); a
 * larger one's part goes to disk: up to `window` parts wait at once, and a
 * compressed trace's part can be ten times its file. */
#define PART_IN_MEMORY_MAX (16 << 20)

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const xpv_index_job *queue;
    part_slot *slots;
    size_t n, next, moved, window;
    int quit;
    double move_cpu_s; /* the writer's CPU time spent moving parts in */
    int workers, cpus;
    int64_t *bytes_after; /* by queue index: the bytes of the files queued after it */
    const xpv_input_limits *limits;
    volatile int *stop;
} job_pool;

int xpv_index_jobs_inline(int64_t size, int64_t bytes_after, int workers, int cpus)
{
    return workers >= cpus && bytes_after >= size * (int64_t)(workers - 1);
}

/* Indexes one file into its part; the error, if any, stays in the slot. */
static int index_part(job_pool *pool, size_t i)
{
    const xpv_index_job *job = &pool->queue[i];
    part_slot *slot = &pool->slots[i];
    int in_memory = job->f->size <= PART_IN_MEMORY_MAX;
    enum xpv_sink_stages stages =
        xpv_index_jobs_inline(job->f->size, pool->bytes_after[i], pool->workers, pool->cpus)
            ? XPV_SINK_STAGES_INLINE
            : XPV_SINK_STAGES_THREADED;
    sqlite3 *part = NULL;
    if (xpv_index_open_part(in_memory ? NULL : slot->path, &part, &slot->err) != 0) return -1;
    int rc = xpv_indexer_seed_part(part, job->f, job->id, &slot->err);
    if (rc == 0)
        rc = xpv_indexer_index_file(part, job->f, job->id, pool->limits, stages, &slot->rows,
                                    &slot->err);
    /* the writer's insert wants them in key order: sorted here, in parallel */
    if (rc == 0) xpv_store_kernel_rows_order(&slot->rows.kernel);
    /* an error of indexing's own is the one to report */
    xpv_err *close_err = rc == 0 ? &slot->err : NULL;
    if (xpv_index_close_part(part, rc == 0 && in_memory ? &slot->image : NULL, close_err) != 0)
        rc = -1;
    return rc;
}

static void *worker_main(void *arg)
{
    job_pool *pool = arg;
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        while (!pool->quit && pool->next < pool->n && pool->next >= pool->moved + pool->window)
            pthread_cond_wait(&pool->cv, &pool->mu);
        if (pool->quit || pool->next >= pool->n || xpv_stop_requested(pool->stop)) break;
        size_t i = pool->next++;
        pool->slots[i].state = PART_RUNNING;
        pthread_mutex_unlock(&pool->mu);
        if (i + 1 < pool->n) xpv_indexer_read_ahead(pool->queue[i + 1].f);
        int rc = index_part(pool, i);
        pthread_mutex_lock(&pool->mu);
        pool->slots[i].state = rc == 0 ? PART_READY : PART_FAILED;
        pthread_cond_broadcast(&pool->cv);
    }
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

/* Waits for part i to be ready or failed; 0 when the run is stopped first.
 * The stop flag is set without a signal on cv, so the wait wakes to look. */
static int wait_part(job_pool *pool, size_t i, const xpv_index_options *o)
{
    int state;
    pthread_mutex_lock(&pool->mu);
    while ((state = pool->slots[i].state) < PART_READY && !xpv_stop_requested(o->stop)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&pool->cv, &pool->mu, &until);
    }
    pthread_mutex_unlock(&pool->mu);
    return state >= PART_READY ? state : 0;
}

static void mark_moved(job_pool *pool, size_t count)
{
    pthread_mutex_lock(&pool->mu);
    pool->moved = count;
    pthread_cond_broadcast(&pool->cv);
    pthread_mutex_unlock(&pool->mu);
}

static double thread_cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The writer's side: moves parts in, in queue order, while workers run. */
static int move_parts_in(sqlite3 *db, job_pool *pool, const xpv_index_options *o, xpv_err *err)
{
    xpv_index_progress p = {(int)pool->n, 0, NULL, NULL};
    for (size_t i = 0; i < pool->n && !xpv_stop_requested(o->stop); i++) {
        const xpv_found *f = pool->queue[i].f;
        xpv_indexer_report(o, &p, f, NULL);
        int state = wait_part(pool, i, o);
        if (state == 0) break;
        if (state == PART_FAILED) {
            *err = pool->slots[i].err;
            return xpv_err_prefix(err, "indexing %s", f->rel_path);
        }
        double cpu0 = thread_cpu_seconds();
        int rc = xpv_index_move_part(db, pool->slots[i].path, &pool->slots[i].image,
                                     pool->queue[i].id, &pool->slots[i].rows, err);
        xpv_index_part_rows_free(&pool->slots[i].rows);
        if (rc != 0) return xpv_err_prefix(err, "indexing %s", f->rel_path);
        pool->move_cpu_s += thread_cpu_seconds() - cpu0;
        unlink(pool->slots[i].path);
        mark_moved(pool, i + 1);
        xpv_indexer_report(o, &p, f, f);
    }
    xpv_indexer_report(o, &p, NULL, NULL);
    return 0;
}

static int name_parts(job_pool *pool, const char *db_path, xpv_err *err)
{
    for (size_t i = 0; i < pool->n; i++)
        if (xpv_index_part_path(db_path, i, pool->slots[i].path, sizeof pool->slots[i].path, err))
            return -1;
    return 0;
}

int xpv_indexer_run_parallel(sqlite3 *db, const xpv_found_list *found, const xpv_index_job *queue,
                             size_t n, int jobs, const xpv_index_options *o, xpv_err *err)
{
    const char *db_path = sqlite3_db_filename(db, "main");
    assert(db_path && *db_path && jobs > 1);
    xpv_index_remove_stale_parts(db_path);
    job_pool pool = {.queue = queue,
                     .n = n,
                     .window = 4 * (size_t)jobs,
                     .limits = &found->limits,
                     .stop = o->stop};
    pool.workers = n < (size_t)jobs ? (int)n : jobs;
    pool.cpus = xpv_cpu_count();
    pool.bytes_after = xpv_xcalloc(n, sizeof *pool.bytes_after);
    for (size_t i = n - 1; i > 0; i--)
        pool.bytes_after[i - 1] = pool.bytes_after[i] + queue[i].f->size;
    pool.slots = xpv_xcalloc(n, sizeof *pool.slots);
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.cv, NULL);
    pthread_t *threads = xpv_xcalloc((size_t)jobs, sizeof *threads);
    int started = 0, rc = name_parts(&pool, db_path, err);
    while (rc == 0 && started < jobs && (size_t)started < n) {
        int e = pthread_create(&threads[started], NULL, worker_main, &pool);
        if (e != 0)
            rc = xpv_err_set(err, "cannot start indexing threads: %s", strerror(e));
        else
            started++;
    }
    if (rc == 0) rc = move_parts_in(db, &pool, o, err);
    /* The writer's share is what bounds the speed-up (bench/run_jobs.sh). */
    const char *timing = getenv("XPV_TIMING");
    if (timing && *timing && strcmp(timing, "0") != 0)
        fprintf(stderr, "xprof-view: index writer: %.3f s CPU moving %zu parts in\n",
                pool.move_cpu_s, pool.moved);
    pthread_mutex_lock(&pool.mu);
    pool.quit = 1;
    pthread_cond_broadcast(&pool.cv);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    for (size_t i = 0; i < n; i++) {
        if (pool.slots[i].state != PART_QUEUED) unlink(pool.slots[i].path);
        xpv_index_part_rows_free(&pool.slots[i].rows);
        xpv_index_part_image_free(&pool.slots[i].image);
    }
    free(threads);
    free(pool.bytes_after);
    free(pool.slots);
    pthread_mutex_destroy(&pool.mu);
    pthread_cond_destroy(&pool.cv);
    return rc;
}
