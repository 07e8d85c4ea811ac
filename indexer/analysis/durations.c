/*
 * durations.c — every duration of every summary group, for exact medians.
 *
 * Values are kept per group in int64 arrays until `mem_cap` bytes are used;
 * past that, each new value is appended as a 12-byte record (group, value)
 * to an unlinked temporary file (tmpfile(), under $TMPDIR, never the profile
 * directory) and read back group by group when the summaries are written.
 * Memory cost: 8 bytes per value up to the cap, then a constant.
 */
#include "analysis_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t group;
    int64_t v;
} __attribute__((packed)) spill_rec;

void xpv_durs_init(xpv_durs *d, size_t mem_cap)
{
    memset(d, 0, sizeof *d);
    d->mem_cap = mem_cap;
}

static int spill(xpv_durs *d, uint32_t group, int64_t v)
{
    if (!d->spill && !d->spill_failed) {
        d->spill = tmpfile();
        if (!d->spill)
            d->spill_failed = 1;
        else
            setvbuf(d->spill, NULL, _IOFBF, 1 << 20);
    }
    if (!d->spill) return -1;
    spill_rec r = {group, v};
    if (fwrite(&r, sizeof r, 1, d->spill) != 1) return -1;
    d->nspilled++;
    return 0;
}

void xpv_durs_add(xpv_durs *d, xpv_dur_list *l, uint32_t group, int64_t v)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 4;
        size_t grow = (size_t)(cap - l->cap) * sizeof *l->v;
        if (d->mem_bytes + grow > d->mem_cap && spill(d, group, v) == 0) return;
        l->v = xpv_xrealloc(l->v, (size_t)cap * sizeof *l->v);
        d->mem_bytes += grow;
        l->cap = cap;
    }
    l->v[l->n++] = v;
}

int xpv_durs_replay(xpv_durs *d, void (*fn)(void *ctx, uint32_t group, int64_t v), void *ctx,
                    xpv_err *err)
{
    if (!d->spill) return 0;
    if (fflush(d->spill) != 0 || fseek(d->spill, 0, SEEK_SET) != 0)
        return xpv_err_set(err, "analysis temp file: %s", strerror(errno));
    spill_rec buf[4096];
    int64_t seen = 0;
    size_t got;
    while ((got = fread(buf, sizeof buf[0], 4096, d->spill)) > 0) {
        for (size_t i = 0; i < got; i++)
            fn(ctx, buf[i].group, buf[i].v);
        seen += (int64_t)got;
    }
    if (seen != d->nspilled)
        return xpv_err_set(err, "analysis temp file: read %lld of %lld durations", (long long)seen,
                           (long long)d->nspilled);
    return fseek(d->spill, 0, SEEK_END) == 0 ? 0 : xpv_err_set(err, "analysis temp file: seek");
}

void xpv_durs_free(xpv_durs *d)
{
    if (d->spill) fclose(d->spill);
    d->spill = NULL;
}
