/*
 * server_state.c — the state the HTTP server's parts share (see
 * server_state.h): each serving thread's index connection, the indexing
 * progress, the damage hooks and the UI name.
 *
 * Threads: each pool thread keeps its own read-only index connection
 * (xpv_server_db), reopened when the index file's generation changes and
 * closed when the thread exits. An odd generation is a rebuild under way.
 */
#include "server_state.h"
#include "../store/index_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int xpv_server_rebuilding(xpv_server *s)
{
    return __atomic_load_n(&s->index_generation, __ATOMIC_SEQ_CST) & 1;
}

/* A read makes SQLite open the -wal and -shm files (by path), so the
 * generation is checked again after it: everything this connection holds
 * is then of the file the generation names. A file SQLite cannot read is
 * reported, so that the indexer checks it. */
int xpv_server_open_reader(xpv_server *s, sqlite3 **db, xpv_err *err)
{
    int generation = __atomic_load_n(&s->index_generation, __ATOMIC_SEQ_CST);
    *db = NULL;
    if (generation & 1) return xpv_err_set(err, XPV_SERVER_REBUILDING);
    if (xpv_index_open_reader(s->db_path, db, err) != 0) return -1;
    int rc = xpv_index_first_read(*db, err);
    int now = __atomic_load_n(&s->index_generation, __ATOMIC_SEQ_CST);
    if (rc != SQLITE_OK) {
        /* unless a rebuild began meanwhile, whose half-made file it read */
        if (((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) && now == generation)
            xpv_server_index_damaged(s);
    } else if (now != generation) {
        rc = xpv_err_set(err, XPV_SERVER_REBUILDING);
    }
    if (rc == SQLITE_OK) return generation;
    sqlite3_close_v2(*db);
    *db = NULL;
    return -1;
}

sqlite3 *xpv_server_db(xpv_server *s, xpv_err *err)
{
    pthread_once(&db_key_once, make_db_key);
    thread_db *t = pthread_getspecific(db_key);
    int generation = __atomic_load_n(&s->index_generation, __ATOMIC_SEQ_CST);
    if (t && t->db && t->generation == generation) return t->db;
    if (!t) {
        t = xpv_xcalloc(1, sizeof *t);
        pthread_setspecific(db_key, t);
    }
    /* v2: statements a cache still holds keep the old file open until they
     * are finalized, and the connection's address is not reused before. */
    sqlite3_close_v2(t->db);
    t->db = NULL;
    t->generation = xpv_server_open_reader(s, &t->db, err);
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
    switch (s->opts.ui) {
    case XPV_UI_PERFETTO:
        return "perfetto";
    case XPV_UI_TENSORBOARD:
        return "tensorboard";
    default:
        return "both";
    }
}

void xpv_server_index_damaged(xpv_server *s)
{
    if (s->on_index_damaged) s->on_index_damaged(s->damage_ctx);
}

void xpv_server_profile_damaged(xpv_server *s, int64_t id)
{
    if (s->on_profile_damaged) s->on_profile_damaged(s->damage_ctx, id);
}

void xpv_server_init(xpv_server *s, const xpv_server_options *o, const char *db_path,
                     const char *root_abs, const char *profile_arg)
{
    memset(s, 0, sizeof *s);
    s->opts = *o;
    s->listen_fd = -1;
    pthread_mutex_init(&s->mu, NULL);
    snprintf(s->db_path, sizeof s->db_path, "%s", db_path);
    snprintf(s->root_abs, sizeof s->root_abs, "%s", root_abs);
    snprintf(s->profile_arg, sizeof s->profile_arg, "%s", profile_arg);
}
