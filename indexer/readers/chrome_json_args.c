/*
 * chrome_json_args.c — an event's args (and the top-level fields kept as
 * args) converted to xpv_arg values for the sink, picking out on the way
 * the ones classification reads (see chrome_json_reader.c "Mapping").
 *
 * Invariants: integers stay integers (UINT above INT64_MAX), a number out
 * of double range is an error naming its offset, a string is interned
 * when short or seen twice and kept inline (TEXT, pointing into the
 * window or scratch) otherwise; r->args holds room for every arg of the
 * event plus the kept fields.
 */
#include "chrome_json_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_INTERN_MAX 256
#define LONG_INTERN_BUDGET (64u << 20)

/* Long arg values (PyTorch call stacks, input shapes) repeat from step to
 * step. The sink's value table takes short strings only, so a long value
 * is interned here once it is seen a second time (a fingerprint table
 * remembers the first), within LONG_INTERN_BUDGET bytes; otherwise it is
 * kept inline. Returns 0 for "keep it inline". */
static uint32_t intern_long(xpv_cj_reader *r, const char *s, size_t n)
{
    uint64_t h = xpv_cj_hash(s, n);
    xpv_cj_icache_ent *e = &r->long_cache[h & (XPV_CJ_LONG_CACHE_SIZE - 1)];
    if (e->id && e->h == h && e->len == n) {
        const char *t = xpv_sink_string(r->sink, e->id, NULL);
        if (memcmp(t, s, n) == 0) return e->id;
    }
    uint64_t *seen = &r->long_seen[(h >> 20) & (XPV_CJ_LONG_SEEN_SIZE - 1)];
    if (*seen != h) {
        *seen = h;
        return 0;
    }
    if (r->long_bytes + n > LONG_INTERN_BUDGET) return 0;
    uint32_t id = xpv_sink_intern(r->sink, s, n);
    r->long_bytes += n;
    e->h = h;
    e->id = id;
    e->len = (uint32_t)n;
    return id;
}

static void note_known(const xpv_cj_reader *r, uint32_t key, const xpv_cj_member *m,
                       xpv_cj_known_args *k)
{
    if (key > r->k_last_known) return; /* the known keys were interned first */
    if (key == r->k_correlation)
        k->correlation = m;
    else if (key == r->k_correlation_id)
        k->correlation_id = m;
    else if (key == r->k_device)
        k->device = m;
    else if (key == r->k_grid)
        k->grid = m;
    else if (key == r->k_block)
        k->block = m;
    else if (key == r->k_regs)
        k->regs = m;
    else if (key == r->k_shmem)
        k->shmem = m;
    else if (key == r->k_occupancy)
        k->occupancy = m;
    else if (key == r->k_step_num)
        k->step_num = m;
    else if (key == r->k_group_id)
        k->group_id = m;
    else if (key == r->k_kernel_details)
        k->kernel_details = m;
    else if (key == r->k_memcpy_details)
        k->memcpy_details = m;
    else if (key == r->k_hlo_op)
        k->hlo_op = m;
    else if (key == r->k_tf_op)
        k->tf_op = m;
    else if (key == r->k_name)
        k->name = m;
    else if (key == r->k_op)
        k->op = m;
}

/* A string arg: interned when it can be, else kept inline as TEXT. */
static void string_arg(xpv_cj_reader *r, const xpv_cj_member *m, xpv_arg *a)
{
    xpv_cj_str t = xpv_cj_text_of(r, &m->val);
    uint32_t id =
        t.len <= VALUE_INTERN_MAX ? xpv_cj_intern(r, t.s, t.len, 1) : intern_long(r, t.s, t.len);
    if (id || t.len == 0) {
        a->type = XPV_ARG_STR;
        a->v.str = id;
    } else {
        a->type = XPV_ARG_TEXT;
        a->text = t.s;
        a->len = t.len;
    }
}

static int convert_arg(xpv_cj_reader *r, const xpv_cj_member *m, uint32_t key, xpv_arg *a)
{
    a->key = key;
    a->text = NULL;
    a->len = 0;
    switch (m->type) {
    case JV_STR:
        string_arg(r, m, a);
        return 0;
    case JV_INT:
        if (m->val.len <= 18) {
            a->type = XPV_ARG_INT;
            a->v.i = js_small_int(m->val.s, m->val.len);
            return 0;
        }
        if (js_to_int64(m->val.s, m->val.len, &a->v.i) == 0) {
            a->type = XPV_ARG_INT;
            return 0;
        }
        if (m->val.s[0] != '-' && js_to_uint64(m->val.s, m->val.len, &a->v.u) == 0) {
            a->type = XPV_ARG_UINT;
            return 0;
        }
        /* fall through */
    case JV_NUM:
        a->type = XPV_ARG_DOUBLE;
        if (js_to_double(m->val.s, m->val.len, &a->v.d) != 0)
            return xpv_cj_fail_at(r, m->val.s, "number out of range");
        return 0;
    case JV_NONFINITE:
        a->type = XPV_ARG_DOUBLE;
        a->v.d = m->val.s[0] == 'N' ? NAN : m->val.s[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    default:
        a->type = XPV_ARG_JSON;
        a->text = m->val.s;
        a->len = m->val.len;
        return 0;
    }
}

static xpv_arg *args_room(xpv_cj_reader *r, size_t n)
{
    if (n > r->cap_args) {
        size_t cap = r->cap_args ? r->cap_args : 64;
        while (cap < n)
            cap *= 2;
        r->args = xpv_xrealloc(r->args, cap * sizeof *r->args);
        r->cap_args = cap;
    }
    return r->args;
}

int xpv_cj_convert_args(xpv_cj_reader *r, xpv_cj_event *pe, xpv_cj_known_args *k, uint32_t *nargs)
{
    xpv_arg *args = args_room(r, pe->nargs + EX_COUNT);
    uint32_t n = 0;
    memset(k, 0, sizeof *k);
    for (uint32_t i = 0; i < pe->nargs; i++) {
        const xpv_cj_member *m = &r->members[pe->args_at + i];
        xpv_cj_str key = xpv_cj_text_of(r, &m->key);
        uint32_t kid = xpv_cj_intern(r, key.s, key.len, 0);
        note_known(r, kid, m, k);
        if (convert_arg(r, m, kid, &args[n++]) != 0) return -1;
    }
    for (int i = 0; i < EX_COUNT; i++)
        if (pe->extra[i].type != JV_NONE)
            if (convert_arg(r, &pe->extra[i], r->k_extra[i], &args[n++]) != 0) return -1;
    *nargs = n;
    return 0;
}
