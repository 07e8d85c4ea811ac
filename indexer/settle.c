/*
 * settle.c — see settle.h. A small open-addressing table keyed by the
 * file's relative path; entries are few (only files being written), so a
 * sweep rebuilds the table rather than deleting in place.
 */
#include "settle.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *key; /* NULL: empty slot */
    int64_t size, mtime_ns;
    int64_t since_ns; /* when (size, mtime) was first seen as it is */
    int seen;         /* observed since the last sweep */
} entry;

struct xpv_settle {
    int64_t settle_ns;
    entry *slots;
    size_t nslots, used; /* nslots is a power of two */
};

xpv_settle *xpv_settle_new(int64_t settle_ns)
{
    assert(settle_ns >= 0);
    xpv_settle *s = xpv_xcalloc(1, sizeof *s);
    s->settle_ns = settle_ns;
    s->nslots = 16;
    s->slots = xpv_xcalloc(s->nslots, sizeof *s->slots);
    return s;
}

void xpv_settle_free(xpv_settle *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nslots; i++)
        free(s->slots[i].key);
    free(s->slots);
    free(s);
}

static entry *lookup(xpv_settle *s, const char *key, int create)
{
    size_t mask = s->nslots - 1, h = (size_t)xpv_hash64(key, strlen(key)) & mask;
    while (s->slots[h].key) {
        if (strcmp(s->slots[h].key, key) == 0) return &s->slots[h];
        h = (h + 1) & mask;
    }
    if (!create) return NULL;
    s->slots[h].key = xpv_xstrdup(key);
    s->used++;
    return &s->slots[h];
}

/* Rebuilds the table with the entries keep() accepts, at a size that
 * leaves it at most half full. */
static void rebuild(xpv_settle *s, int keep_unseen, const char *drop)
{
    entry *old = s->slots;
    size_t nold = s->nslots, n = 0;
    for (size_t i = 0; i < nold; i++)
        n += old[i].key != NULL;
    s->nslots = 16;
    while (s->nslots < 4 * (n + 1))
        s->nslots *= 2;
    s->slots = xpv_xcalloc(s->nslots, sizeof *s->slots);
    s->used = 0;
    for (size_t i = 0; i < nold; i++) {
        entry *o = &old[i];
        if (!o->key) continue;
        if ((!o->seen && !keep_unseen) || (drop && strcmp(o->key, drop) == 0)) {
            free(o->key);
            continue;
        }
        entry *e = lookup(s, o->key, 1);
        free(e->key);
        *e = *o;
        e->seen = keep_unseen ? o->seen : 0;
    }
    free(old);
}

int xpv_settle_observe(xpv_settle *s, const char *key, int64_t size, int64_t mtime_ns,
                       int64_t now_ns)
{
    entry *e = lookup(s, key, 0);
    if (!e) {
        /* First sight: an mtime already settle_ns old means no write is
         * under way (a write moves the mtime), so it is ready at once. */
        if (now_ns - mtime_ns >= s->settle_ns) return 1;
        if (2 * (s->used + 1) > s->nslots) rebuild(s, 1, NULL);
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
    char *key_copy = xpv_xstrdup(key);
    rebuild(s, 1, key_copy); /* ready: nothing left to wait for */
    free(key_copy);
    return 1;
}

void xpv_settle_sweep(xpv_settle *s)
{
    rebuild(s, 0, NULL);
}

int64_t xpv_settle_next_due(const xpv_settle *s, int64_t now_ns)
{
    int64_t best = -1;
    for (size_t i = 0; i < s->nslots; i++) {
        const entry *e = &s->slots[i];
        if (!e->key) continue;
        int64_t due = e->since_ns + s->settle_ns - now_ns;
        if (due < 0) due = 0;
        if (best < 0 || due < best) best = due;
    }
    return best;
}

size_t xpv_settle_count(const xpv_settle *s)
{
    return s->used;
}
