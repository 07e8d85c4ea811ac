/*
 * hlo_modules.c — the XLA/HLO modules a scope's profiles ran, for the
 * TensorBoard `module_list` route and /api/profiles/{id}/modules.
 *
 * Where the modules come from, per profile (as hlo_ops.c decides its ops):
 *  - "xla_modules": the device planes' `XLA Modules` lines (TPU). Each
 *    event is one execution, named "<module>(<program id>)"; a name not so
 *    written is the module's name, with no program id.
 *  - "kernels" (raw GPU planes of xplane and JAX trace JSON profiles, which
 *    have no such line): the `hlo_module` (and `program_id`) args of the
 *    device's kernels, copies and memsets. An occurrence is one device
 *    event, and the time is their summed device time: a module's executions
 *    are not written on such planes, so they are not counted (never guessed).
 *  - "hlo_proto": the compiled modules of an xplane (the `Hlo Proto` stats
 *    of its /host:metadata plane, hlo_file.h), each listed even when it ran
 *    no kernel in the capture (occurrences 0). A module the events name is
 *    that module when (name, program id) match, or, named with no program
 *    id, when one proto has that name.
 * Modules are keyed by (name, program id) and merged over the scope's hosts.
 * module_list names a module with a proto "<name>(<program id>)", as XProf
 * does (and as the HLO view and memory_viewer resolve it); one without a
 * proto keeps the name its events give.
 * Times are integer ps, summed exactly. A profile keeps a handful of
 * modules, so they are looked up by a linear search, starting from the
 * last one found (kernels of one module come in runs).
 */
#include "../api.h"
#include "../api_util.h"
#include "hlo_file.h"
#include "hlo_ops.h"
#include "../../store/event_store.h"
#include "../../store/strings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SRC_NONE, SRC_XLA_MODULES, SRC_KERNELS };

typedef struct {
    char *name;
    uint64_t prog;
    int has_prog, has_proto;
    int source;   /* where its executions came from; SRC_NONE: none (a proto only) */
    uint32_t key; /* the profile's string id it was found by (0: none); local only */
    int64_t occurrences, total_ps;
} module;

typedef struct {
    module *m;
    size_t n, cap;
} module_set;

typedef struct {
    int source;
    uint32_t k_module, k_prog; /* string ids of the arg names (0: absent) */
    xpv_api_strings *strings;
    module_set mods;
    size_t last;
} profile_ctx;

static void set_free(module_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->m[i].name);
    free(s->m);
    memset(s, 0, sizeof *s);
}

/* The module (name, prog) of s, added with no occurrence when new. */
static module *set_find(module_set *s, const char *name, size_t len, int has_prog, uint64_t prog)
{
    for (size_t i = 0; i < s->n; i++) {
        module *m = &s->m[i];
        if (m->has_prog == has_prog && m->prog == prog && strlen(m->name) == len &&
            memcmp(m->name, name, len) == 0)
            return m;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->m = xpv_xrealloc(s->m, s->cap * sizeof *s->m);
    }
    module *m = &s->m[s->n++];
    memset(m, 0, sizeof *m);
    m->name = xpv_xstrndup(name, len);
    m->has_prog = has_prog, m->prog = has_prog ? prog : 0;
    return m;
}

static void count(profile_ctx *p, module *m, const xpv_event *ev)
{
    m->occurrences++;
    m->total_ps += ev->dur_ps;
    p->last = (size_t)(m - p->mods.m);
}

/* An `XLA Modules` event: one execution of the module its name names. */
static int visit_execution(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    profile_ctx *p = ctx;
    if (ev->dur_ns < 0) return 0;
    if (p->last < p->mods.n && p->mods.m[p->last].key == ev->name) {
        count(p, &p->mods.m[p->last], ev);
        return 0;
    }
    for (size_t i = 0; i < p->mods.n; i++)
        if (p->mods.m[i].key == ev->name) {
            count(p, &p->mods.m[i], ev);
            return 0;
        }
    size_t len, name_len;
    uint64_t prog = 0;
    const char *s = xpv_api_string(p->strings, ev->name, &len);
    int has_prog = xpv_hlo_module_split(s, len, &name_len, &prog);
    module *m = set_find(&p->mods, s, has_prog ? name_len : len, has_prog, prog);
    m->key = ev->name;
    count(p, m, ev);
    return 0;
}

/* The program id of a device event (as a number or a string of digits). */
static int event_prog(profile_ctx *p, const xpv_arg *a, uint64_t *prog)
{
    if (a->type == XPV_ARG_INT && a->v.i >= 0) return *prog = (uint64_t)a->v.i, 1;
    if (a->type == XPV_ARG_UINT) return *prog = a->v.u, 1;
    size_t n = 0;
    const char *s = a->type == XPV_ARG_STR    ? xpv_api_string(p->strings, a->v.str, &n)
                    : a->type == XPV_ARG_TEXT ? a->text
                                              : NULL;
    if (a->type == XPV_ARG_TEXT) n = a->len;
    if (!s || !n || n > 20) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    return *prog = v, 1;
}

/* A device event: counted for the module its hlo_module arg names. */
static int visit_kernel(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    profile_ctx *p = ctx;
    const xpv_arg *name = NULL;
    uint64_t prog = 0;
    int has_prog = 0;
    if (ev->dur_ns < 0) return 0;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        if (a->key == p->k_module) name = a;
        if (a->key == p->k_prog) has_prog = event_prog(p, a, &prog);
    }
    size_t len = 0;
    const char *s = !name                        ? NULL
                    : name->type == XPV_ARG_STR  ? xpv_api_string(p->strings, name->v.str, &len)
                    : name->type == XPV_ARG_TEXT ? name->text
                                                 : NULL;
    if (name && name->type == XPV_ARG_TEXT) len = name->len;
    if (!s || !len) return 0;
    module *last = p->last < p->mods.n ? &p->mods.m[p->last] : NULL;
    if (last && last->has_prog == has_prog && last->prog == (has_prog ? prog : 0) &&
        strlen(last->name) == len && memcmp(last->name, s, len) == 0)
        count(p, last, ev);
    else
        count(p, set_find(&p->mods, s, len, has_prog, prog), ev);
    return 0;
}

/* The string ids of the arg names hlo_module and program_id in the profile. */
static int lookup_keys(sqlite3 *db, int64_t id, profile_ctx *p, xpv_err *err)
{
    static const char *const KEYS[] = {"hlo_module", "program_id"};
    uint32_t ids[2];
    if (xpv_store_strings_ids(db, id, KEYS, 2, ids, err) != 0) return -1;
    p->k_module = ids[0], p->k_prog = ids[1];
    return 0;
}

/* Scans the profile's `XLA Modules` lines, or else its device events with
 * hlo_module; p->source says which gave modules. */
static int scan_profile(sqlite3 *db, int64_t id, profile_ctx *p, xpv_err *err)
{
    size_t n;
    int64_t *tracks = xpv_hlo_tracks_of(db, id, "XLA Modules", &n, err);
    if (!tracks) return -1;
    p->source = n ? SRC_XLA_MODULES : SRC_NONE;
    if (!n && p->k_module) {
        int jax = xpv_hlo_jax_format(db, id, err);
        free(tracks);
        if (jax < 0) return -1;
        tracks = jax ? xpv_hlo_tracks_of(db, id, NULL, &n, err) : xpv_xmalloc(1);
        if (!tracks) return -1;
        if (!jax) n = 0;
        p->source = n ? SRC_KERNELS : SRC_NONE;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        xpv_store_query q;
        xpv_store_query_all(&q, id);
        q.track = tracks[i];
        if (p->source == SRC_XLA_MODULES) q.skip_args = 1;
        if (p->source == SRC_KERNELS) q.kinds = XPV_KIND_DEVICE_WORK_BITS;
        rc = xpv_store_scan(db, &q, p->source == SRC_KERNELS ? visit_kernel : visit_execution, p,
                            err) < 0
                 ? -1
                 : 0;
    }
    free(tracks);
    return rc;
}

/* The name and program id of blob b: its metadata name "jit_dot(79)" split
 * (79 is the id the device events carry), or else its HloModule name and
 * metadata id, as XProf names a module. 0 when it has no name. */
static int proto_module(const xpv_hlo_file *f, const xpv_hlo_blob *b, xpv_hlo_str *name,
                        uint64_t *prog)
{
    size_t len;
    if (b->name.p && xpv_hlo_module_split(b->name.p, b->name.n, &len, prog)) {
        name->p = b->name.p, name->n = (uint32_t)len;
        return 1;
    }
    *name = xpv_hlo_file_module_name(f, b);
    *prog = b->program_id;
    return name->p && name->n;
}

/* The module of s with a proto named like m, when it is the only one. */
static module *only_proto_named(module_set *s, const module *m)
{
    module *only = NULL;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->m[i].has_proto || strcmp(s->m[i].name, m->name) != 0) continue;
        if (only) return NULL;
        only = &s->m[i];
    }
    return only;
}

/* Folds each module its events named with no program id into the one proto
 * of that name (a module listed once, not twice). */
static void fold_unnumbered(module_set *s)
{
    for (size_t i = 0; i < s->n;) {
        module *m = &s->m[i], *p = m->has_prog ? NULL : only_proto_named(s, m);
        if (!p) {
            i++;
            continue;
        }
        p->occurrences += m->occurrences;
        p->total_ps += m->total_ps;
        free(m->name);
        *m = s->m[--s->n];
    }
}

/* Adds the compiled modules of the profile's xplane to p->mods. */
static void add_protos(sqlite3 *db, int64_t id, profile_ctx *p)
{
    xpv_hlo_file f;
    /* NULL err: a file that cannot be read now (moved, or changed and being
     * indexed again) has no modules to add, as xpv_hlo_file_has_modules
     * says; the modules its events name are listed still */
    if (xpv_hlo_file_open(db, id, &f, NULL) <= 0) return;
    for (size_t i = 0; i < f.n; i++) {
        xpv_hlo_str name;
        uint64_t prog;
        if (proto_module(&f, &f.blobs[i], &name, &prog))
            set_find(&p->mods, name.p, name.n, 1, prog)->has_proto = 1;
    }
    xpv_hlo_file_close(&f);
    fold_unnumbered(&p->mods);
}

static int by_name(const void *a, const void *b)
{
    const module *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    if (x->has_prog != y->has_prog) return x->has_prog - y->has_prog;
    return x->prog < y->prog ? -1 : x->prog > y->prog;
}

/* The scope's modules, merged over its profiles and sorted by name, then
 * program id. Returns 0, or -1 with err. */
static int collect(sqlite3 *db, const xpv_tool_scope *s, module_set *out, xpv_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        profile_ctx p = {0};
        p.strings = xpv_api_strings_open(db, s->ids[i]);
        rc = lookup_keys(db, s->ids[i], &p, err);
        if (rc == 0) rc = scan_profile(db, s->ids[i], &p, err);
        if (rc == 0) add_protos(db, s->ids[i], &p);
        for (size_t j = 0; rc == 0 && j < p.mods.n; j++) {
            const module *l = &p.mods.m[j];
            module *g = set_find(out, l->name, strlen(l->name), l->has_prog, l->prog);
            g->has_proto |= l->has_proto;
            if (l->occurrences) g->source = p.source;
            g->occurrences += l->occurrences;
            g->total_ps += l->total_ps;
        }
        set_free(&p.mods);
        xpv_api_strings_free(p.strings);
    }
    if (rc == 0) xpv_sort(out->m, out->n, sizeof *out->m, by_name);
    if (rc != 0) set_free(out);
    return rc;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int xpv_api_module_list(sqlite3 *db, const int64_t *ids, size_t n, xpv_buf *out)
{
    module_set mods;
    xpv_err err = {{0}};
    if (collect(db, &(xpv_tool_scope){.ids = ids, .n = n}, &mods, &err) != 0)
        return xpv_api_error(out, 500, "%s", err.msg);
    if (!mods.n) return xpv_api_error(out, 404, "No Data");
    char **names = xpv_xmalloc(mods.n * sizeof *names);
    for (size_t i = 0; i < mods.n; i++) {
        const module *m = &mods.m[i];
        size_t len = strlen(m->name) + 24;
        names[i] = xpv_xmalloc(len);
        if (m->has_proto)
            snprintf(names[i], len, "%s(%llu)", m->name, (unsigned long long)m->prog);
        else
            memcpy(names[i], m->name, len - 23);
    }
    xpv_sort(names, mods.n, sizeof *names, by_str);
    xpv_buf_putc(out, '[');
    for (size_t i = 0; i < mods.n; i++) {
        if (i && strcmp(names[i], names[i - 1]) == 0) continue; /* sorted: unique */
        if (i) xpv_buf_putc(out, ',');
        xpv_buf_json_str(out, names[i], strlen(names[i]));
    }
    xpv_buf_putc(out, ']');
    for (size_t i = 0; i < mods.n; i++)
        free(names[i]);
    free(names);
    set_free(&mods);
    return 200;
}

int xpv_api_profile_modules(sqlite3 *db, int64_t id, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int known = xpv_api_profile_state_get(db, id, &ps, out);
    if (known != 200) return known;
    module_set mods;
    xpv_err err = {{0}};
    if (collect(db, &(xpv_tool_scope){.ids = &id, .n = 1}, &mods, &err) != 0)
        return xpv_api_error(out, 500, "%s", err.msg);
    if (!mods.n) return xpv_api_error(out, 404, "No Data");
    xpv_buf_puts(out, "{\"modules\":[");
    for (size_t i = 0; i < mods.n; i++) {
        const module *m = &mods.m[i];
        xpv_buf_puts(out, i ? ",{\"name\":" : "{\"name\":");
        xpv_buf_json_str(out, m->name, strlen(m->name));
        xpv_buf_puts(out, ",\"program_id\":");
        if (m->has_prog)
            xpv_buf_printf(out, "\"%llu\"", (unsigned long long)m->prog);
        else
            xpv_buf_puts(out, "null");
        xpv_buf_printf(out, ",\"source\":\"%s\",\"occurrences\":",
                       m->source == SRC_KERNELS       ? "kernels"
                       : m->source == SRC_XLA_MODULES ? "xla_modules"
                                                      : "hlo_proto");
        xpv_api_put_int(out, m->occurrences);
        xpv_buf_puts(out, ",\"total_time_us\":");
        xpv_buf_json_double(out, (double)m->total_ps / 1e6);
        xpv_buf_putc(out, '}');
    }
    xpv_buf_puts(out, "]}");
    set_free(&mods);
    return 200;
}
