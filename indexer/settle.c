/*
 * settle.c — see settle.h. The files being watched are few (only those
 * being written), so they sit in one array with an xpv_hindex over their
 * paths' hashes; dropping some (a sweep, or a file found ready) compacts
 * the array and indexes it again rather than removing in place.
 */
#include "settle.h"
#include "../common/xpv_hindex.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *key;
    int64_t size, mtime_ns;
    int64_t since_ns; /* when (size, mtime) was first seen as it is */
    int seen;         /* observed since the last sweep */
} entry;

struct xpv_settle {
    int64_t settle_ns;
    entry *v; /* in no order */
    size_t n, cap;
    xpv_hindex index; /* hash of key -> index in v */
};

xpv_settle *xpv_settle_new(int64_t settle_ns)
{
    assert(settle_ns >= 0);
    xpv_settle *s = xpv_xcalloc(1, sizeof *s);
    s->settle_ns = settle_ns;
    return s;
}

void xpv_settle_free(xpv_settle *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].key);
    free(s->v);
    xpv_hindex_free(&s->index);
    free(s);
}

static uint64_t key_hash(const char *key)
{
    return xpv_hash64(key, strlen(key));
}

static entry *lookup(xpv_settle *s, const char *key, int create)
{
    xpv_hprobe p = xpv_hindex_probe(&s->index, key_hash(key));
    for (uint64_t i; xpv_hindex_next(&s->index, &p, &i);)
        if (strcmp(s->v[i].key, key) == 0) return &s->v[i];
    if (!create) return NULL;
    s->v = xpv_grow_to_index(s->v, &s->cap, s->n, sizeof *s->v, 0);
    xpv_hindex_insert_at(&s->index, &p, s->n);
    s->v[s->n] = (entry){.key = xpv_xstrdup(key)};
    return &s->v[s->n++];
}

/* Keeps the entries that are seen (all with keep_unseen) but entry `drop`
 * (SIZE_MAX: none), and indexes them again. */
static void rebuild(xpv_settle *s, int keep_unseen, size_t drop)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        entry *e = &s->v[i];
        if ((!e->seen && !keep_unseen) || i == drop) {
            free(e->key);
            continue;
        }
        e->seen = keep_unseen ? e->seen : 0;
        s->v[n++] = *e;
    }
    s->n = n;
    xpv_hindex_clear(&s->index);
    for (size_t i = 0; i < n; i++)
        xpv_hindex_add(&s->index, key_hash(s->v[i].key), i);
}

int xpv_settle_observe(xpv_settle *s, const char *key, int64_t size, int64_t mtime_ns,
                       int64_t now_ns)
{
    entry *e = lookup(s, key, 0);
    if (!e) {
        /* First sight: an mtime already settle_ns old means no write is
         * under way (a write moves the mtime), so it is ready at once. */
        if (now_ns - mtime_ns >= s->settle_ns) return 1;
        e = lookup(s, key, 1);
        *e = (entry){e->key, size, mtime_ns, now_ns, 1};
        return 0;
    }
    e->seen = 1;
    if (e->size != size || e->mtime_ns != mtime_ns) {
        e->size = size;
        e->mtime_ns = mtime_ns;
        e->since_ns = now_ns;
        return s->settle_ns == 0;
    }
    if (now_ns - e->since_ns < s->settle_ns) return 0;
    rebuild(s, 1, (size_t)(e - s->v)); /* ready: nothing left to wait for */
    return 1;
}

void xpv_settle_sweep(xpv_settle *s)
{
    rebuild(s, 0, SIZE_MAX);
}

int64_t xpv_settle_next_due(const xpv_settle *s, int64_t now_ns)
{
    int64_t best = -1;
    for (size_t i = 0; i < s->n; i++) {
        const entry *e = &s->v[i];
        int64_t due = e->since_ns + s->settle_ns - now_ns;
        if (due < 0) due = 0;
        if (best < 0 || due < best) best = due;
    }
    return best;
}

size_t xpv_settle_count(const xpv_settle *s)
{
    return s->n;
}
