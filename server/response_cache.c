/*
 * response_cache.c — see response_cache.h. Each thread owns its table (a
 * thread-specific pointer), so no lock is taken; the table is freed when
 * the thread ends.
 */
#define _GNU_SOURCE
#include "response_cache.h"
#include "../store/index_db.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 128
#define MAX_BODY (256u << 10)
#define MAX_BYTES (8u << 20) /* per thread */
#define MAX_KEY 2048

typedef struct {
    char *key;
    int status;
    const char *content_type; /* always a string literal */
    char disposition[300];
    xpv_buf body;
} slot;

typedef struct {
    sqlite3 *db; /* the connection data_version was read on */
    sqlite3_stmt *version_stmt;
    int64_t version;
    size_t bytes; /* bodies held */
    slot slots[SLOTS];
} thread_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void clear_slots(thread_cache *t)
{
    for (int i = 0; i < SLOTS; i++) {
        free(t->slots[i].key);
        xpv_buf_free(&t->slots[i].body);
        memset(&t->slots[i], 0, sizeof t->slots[i]);
    }
    t->bytes = 0;
}

static void free_cache(void *p)
{
    thread_cache *t = p;
    clear_slots(t);
    sqlite3_finalize(t->version_stmt);
    free(t);
}

static void make_key(void)
{
    pthread_key_create(&cache_key, free_cache);
}

/* The thread's table, emptied when the index changed since last time.
 * *changed (may be NULL) says whether it had. */
static thread_cache *current(xpv_server *s, int *changed)
{
    xpv_err err = {{0}};
    sqlite3 *db = xpv_server_db(s, &err);
    if (!db) return NULL;
    pthread_once(&cache_once, make_key);
    thread_cache *t = pthread_getspecific(cache_key);
    if (!t) {
        t = xpv_xcalloc(1, sizeof *t);
        t->version = -1;
        pthread_setspecific(cache_key, t);
    }
    if (t->db != db) { /* a new connection: its data versions count anew */
        sqlite3_finalize(t->version_stmt);
        t->version_stmt = NULL;
        t->db = db;
        t->version = -1;
    }
    int64_t v = xpv_index_data_version(db, &t->version_stmt);
    if (v < 0) return NULL;
    if (changed) *changed = v != t->version;
    if (v != t->version) {
        clear_slots(t);
        t->version = v;
    }
    return t;
}

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *k, const char *v)
{
    (void)kind;
    xpv_buf *b = cls;
    xpv_buf_putc(b, '&');
    xpv_buf_puts(b, k);
    xpv_buf_putc(b, '=');
    if (v) xpv_buf_puts(b, v);
    return b->len > MAX_KEY ? MHD_NO : MHD_YES;
}

static int build_key(struct MHD_Connection *c, const char *path, xpv_buf *key)
{
    xpv_buf_puts(key, path);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, key);
    return key->len <= MAX_KEY ? 0 : -1;
}

static slot *slot_for(thread_cache *t, const xpv_buf *key)
{
    return &t->slots[xpv_hash64(key->data, key->len) % SLOTS];
}

int xpv_response_cache_get(xpv_server *s, struct MHD_Connection *c, const char *path, xpv_reply *r)
{
    thread_cache *t = current(s, NULL);
    xpv_buf key = {0};
    int hit = 0;
    if (t && build_key(c, path, &key) == 0) {
        slot *sl = slot_for(t, &key);
        if (sl->key && strcmp(sl->key, key.data) == 0) {
            r->status = sl->status;
            r->content_type = sl->content_type;
            r->cacheable = 1;
            memcpy(r->disposition, sl->disposition, sizeof r->disposition);
            xpv_buf_reset(&r->body);
            xpv_buf_append(&r->body, sl->body.data ? sl->body.data : "", sl->body.len);
            hit = 1;
        }
    }
    xpv_buf_free(&key);
    return hit;
}

void xpv_response_cache_put(xpv_server *s, struct MHD_Connection *c, const char *path,
                            const xpv_reply *r)
{
    if (r->status != 200 || r->stream || r->static_data || !r->cacheable || r->body.len > MAX_BODY)
        return;
    /* The body was read after _get saw the version; if the index changed
     * since, the body may be of either state: keeping it under the new
     * version could serve a stale answer until the next change. */
    int changed = 0;
    thread_cache *t = current(s, &changed);
    xpv_buf key = {0};
    if (t && !changed && build_key(c, path, &key) == 0) {
        slot *sl = slot_for(t, &key);
        t->bytes -= sl->body.len;
        if (t->bytes + r->body.len > MAX_BYTES) clear_slots(t);
        t->bytes += r->body.len;
        free(sl->key);
        sl->key = xpv_xstrdup(key.data);
        sl->status = r->status;
        sl->content_type = r->content_type;
        memcpy(sl->disposition, r->disposition, sizeof sl->disposition);
        xpv_buf_reset(&sl->body);
        xpv_buf_append(&sl->body, r->body.data ? r->body.data : "", r->body.len);
    }
    xpv_buf_free(&key);
}
