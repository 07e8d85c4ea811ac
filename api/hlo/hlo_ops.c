/*
 * hlo_ops.c — device time per HLO op (see hlo_ops.h): one pass over each
 * op track of each profile in the scope, with args.
 *
 * Within a profile, ops are keyed by (program, name) where the name is a
 * string id of the profile (or, for the rare name kept inline, an entry of
 * a local pool), so the pass compares integers; ops are turned into text
 * only once per profile, when they merge into the scope's table. Spans of
 * `XLA Ops` lines are held one track at a time, to find nesting (self
 * time), so memory follows the largest op line, not the profile; kernels
 * hold none.
 */
#include "hlo_ops_internal.h"
#include "hlo_cache.h"
#include "hlo_derive.h"
#include "../../common/xpv_hindex.h"
#include "../../common/xpv_lower_bound.h"
#include "../../store/event_store.h"
#include "../../store/profiles.h"

#include <stdlib.h>
#include <string.h>

#define POOL_REF 0x80000000u /* a ref with this bit names a pooled (inline) string */

/* ---- one profile ---- */

typedef struct {
    uint32_t hlo_op, module, category, tf_op, source;
    int has_prog_key; /* a program_id arg, whatever its value (compile.c's test) */
    int has_prog, has_flops, has_model_flops, has_bytes;
    uint64_t prog;
    long double flops, model_flops, bytes;
} op_args;

static uint32_t pool_ref(profile_ctx *p, const char *s, size_t n)
{
    xpv_hprobe pr = xpv_hindex_probe(&p->poolidx, xpv_hash64(s, n));
    for (uint64_t i; xpv_hindex_next(&p->poolidx, &pr, &i);)
        if (strlen(p->pool[i]) == n && memcmp(p->pool[i], s, n) == 0) return (uint32_t)i | POOL_REF;
    if (p->npool == p->cappool) {
        p->cappool = p->cappool ? p->cappool * 2 : 16;
        p->pool = xpv_xrealloc(p->pool, p->cappool * sizeof *p->pool);
    }
    p->pool[p->npool] = xpv_xstrndup(s, n);
    xpv_hindex_insert_at(&p->poolidx, &pr, p->npool);
    return (uint32_t)p->npool++ | POOL_REF;
}

static const char *ref_text(profile_ctx *p, uint32_t ref, size_t *len)
{
    if (ref & POOL_REF) {
        const char *s = p->pool[ref & ~POOL_REF];
        *len = strlen(s);
        return s;
    }
    return xpv_api_string(p->strings, ref, len);
}

/* A string arg as a ref (0 when it is not a string or is empty). */
static uint32_t arg_ref(profile_ctx *p, const xpv_arg *a)
{
    if (a->type == XPV_ARG_STR) return a->v.str;
    if (a->type == XPV_ARG_TEXT && a->len) return pool_ref(p, a->text, a->len);
    return 0;
}

/* A number arg (or a string holding one, as JSON traces write them); 0 when neither. */
static int arg_number(profile_ctx *p, const xpv_arg *a, long double *v, uint64_t *u)
{
    char buf[64];
    const char *s = NULL;
    size_t n = 0;
    switch (a->type) {
    case XPV_ARG_INT:
        *v = (long double)a->v.i, *u = (uint64_t)a->v.i;
        return 1;
    case XPV_ARG_UINT:
        *v = (long double)a->v.u, *u = a->v.u;
        return 1;
    case XPV_ARG_DOUBLE:
        *v = a->v.d, *u = a->v.d >= 0 ? (uint64_t)a->v.d : 0;
        return 1;
    case XPV_ARG_STR:
        s = xpv_api_string(p->strings, a->v.str, &n);
        break;
    case XPV_ARG_TEXT:
        s = a->text, n = a->len;
        break;
    default:
        return 0;
    }
    if (n == 0 || n >= sizeof buf) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    *v = strtold(buf, &end);
    if (*end) return 0;
    *u = strtoull(buf, &end, 10);
    return 1;
}

static void read_args(profile_ctx *p, const xpv_event *ev, op_args *o)
{
    uint32_t jax_op = 0;
    /* field by field: this runs once per event, where a memset of the
     * whole struct (its padding too) showed in profiles */
    o->hlo_op = o->module = o->category = o->tf_op = o->source = 0;
    o->has_prog_key = o->has_prog = o->has_flops = o->has_model_flops = o->has_bytes = 0;
    o->prog = 0;
    o->flops = o->model_flops = o->bytes = 0;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        int k = a->key < p->nkey_of ? p->key_of[a->key] - 1 : -1;
        if (k < 0) continue;
        uint64_t u;
        long double v;
        if (k == K_HLO_OP) o->hlo_op = arg_ref(p, a);
        if (k == K_HLO_MODULE) o->module = arg_ref(p, a);
        if (k == K_CATEGORY) o->category = arg_ref(p, a);
        if (k == K_TF_OP) o->tf_op = arg_ref(p, a);
        if (k == K_JAX_OP) jax_op = arg_ref(p, a);
        if (k == K_SOURCE) o->source = arg_ref(p, a);
        if (k == K_PROGRAM_ID) o->has_prog_key = 1;
        if (k == K_PROGRAM_ID && arg_number(p, a, &v, &u)) o->prog = u, o->has_prog = 1;
        if (k == K_FLOPS && arg_number(p, a, &v, &u)) o->flops = v, o->has_flops = 1;
        if (k == K_MODEL_FLOPS && arg_number(p, a, &v, &u))
            o->model_flops = v, o->has_model_flops = 1;
        if (k == K_BYTES && arg_number(p, a, &v, &u)) o->bytes = v, o->has_bytes = 1;
    }
    if (jax_op) o->tf_op = jax_op; /* JAX's tf_op on GPU is "XlaModule:", which says nothing */
}

/* splitmix64's finaliser over the key: it runs once per event. */
static uint64_t op_hash_of(uint64_t prog, int has_prog, uint32_t name)
{
    uint64_t h = (has_prog ? prog : 0x9e3779b97f4a7c15ull) * 0x9e3779b97f4a7c15ull ^ name;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static local_op *local_op_for(profile_ctx *p, const op_args *a, uint32_t name, uint32_t *index)
{
    uint64_t prog = a->has_prog ? a->prog : 0;
    xpv_hprobe pr = xpv_hindex_probe(&p->opidx, op_hash_of(prog, a->has_prog, name));
    for (uint64_t i; xpv_hindex_next(&p->opidx, &pr, &i);) {
        const local_op *o = &p->ops[i];
        if (o->name == name && o->has_prog == a->has_prog && o->prog == prog)
            return &p->ops[*index = (uint32_t)i];
    }
    if (p->nops == p->capops) {
        p->capops = p->capops ? p->capops * 2 : 64;
        p->ops = xpv_xrealloc(p->ops, p->capops * sizeof *p->ops);
    }
    local_op *o = &p->ops[p->nops];
    memset(o, 0, sizeof *o);
    o->prog = prog, o->has_prog = a->has_prog, o->name = name;
    xpv_hindex_insert_at(&p->opidx, &pr, p->nops);
    return &p->ops[*index = (uint32_t)p->nops++];
}

/* Counts a kernel of name `name` launched by op `op`. An op's kernels
 * mostly share one name: the latest is remembered, to skip the hash. */
static void count_launch(profile_ctx *p, uint32_t op, uint32_t name)
{
    local_op *o = &p->ops[op];
    if (o->last_launch && o->last_name == name) {
        p->launches[o->last_launch - 1].n++;
        return;
    }
    o->last_name = name;
    xpv_hprobe pr = xpv_hindex_probe(&p->launchidx, op_hash_of(op, 1, name));
    for (uint64_t i; xpv_hindex_next(&p->launchidx, &pr, &i);) {
        if (p->launches[i].op != op || p->launches[i].name != name) continue;
        p->launches[i].n++;
        o->last_launch = (uint32_t)i + 1;
        return;
    }
    if (p->nlaunches == p->caplaunches) {
        p->caplaunches = p->caplaunches ? p->caplaunches * 2 : 64;
        p->launches = xpv_xrealloc(p->launches, p->caplaunches * sizeof *p->launches);
    }
    p->launches[p->nlaunches] = (launch){op, name, 1};
    o->last_launch = (uint32_t)p->nlaunches + 1;
    xpv_hindex_insert_at(&p->launchidx, &pr, p->nlaunches++);
}

static int name_cmp(const void *key, const void *elem)
{
    uint32_t x = *(const uint32_t *)key, y = *(const uint32_t *)elem;
    return x < y ? -1 : x > y;
}

/* xpv_compile_is (indexer/analysis/compile.c) over the marks the index
 * keeps: an autotuner kernel, or device work that lies within a compile
 * window and carries no program_id. */
static int is_compile_work(const profile_ctx *p, const xpv_event *ev, const op_args *a)
{
    const xpv_store_compile_marks *m = &p->compile;
    if (ev->kind == XPV_KIND_KERNEL && m->nnames) {
        size_t i = xpv_lower_bound(&ev->name, m->names, m->nnames, sizeof *m->names, name_cmp);
        if (i < m->nnames && m->names[i] == ev->name) return 1;
    }
    if (!m->nwindows || a->has_prog_key || ev->dur_ps < 0) return 0;
    /* the windows are disjoint and sorted: the first that ends no earlier
     * than the event is the one that can hold it */
    int64_t end = xpv_sat_add_i64(ev->ts_ns, ev->dur_ns);
    size_t i = xpv_lower_bound_i64(m->end, m->nwindows, sizeof *m->end, 0, end);
    return i < m->nwindows && m->start[i] <= ev->ts_ns;
}

static int visit_op(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    profile_ctx *p = ctx;
    if (ev->dur_ns < 0) return 0; /* an instant is no device time */
    op_args a;
    read_args(p, ev, &a);
    if (p->mode == MODE_KERNELS && !xpv_store_compile_marks_none(&p->compile) &&
        is_compile_work(p, ev, &a)) {
        p->compile_n++, p->compile_ps += ev->dur_ps;
        return 0;
    }
    uint32_t name = p->mode == MODE_XLA_OPS ? ev->name : a.hlo_op, at;
    if (!name) {
        p->unattributed_n++, p->unattributed_ps += ev->dur_ps;
        return 0;
    }
    local_op *o = local_op_for(p, &a, name, &at);
    if (!o->category) o->category = a.category;
    if (!o->module) o->module = a.module;
    if (!o->tf_op) o->tf_op = a.tf_op;
    if (!o->source) o->source = a.source;
    o->occurrences++;
    o->total_ps += ev->dur_ps;
    if (p->mode == MODE_KERNELS) /* kernels of a stream run one at a time: no nesting */
        o->self_ps += ev->dur_ps;
    if (a.has_flops) o->flops += a.flops, o->has_flops = 1;
    if (a.has_model_flops) o->model_flops += a.model_flops, o->has_model_flops = 1;
    if (a.has_bytes) o->bytes += a.bytes, o->has_bytes = 1;
    if (p->mode == MODE_KERNELS) {
        count_launch(p, at, ev->name);
        return 0;
    }
    if (p->nspans == p->capspans) {
        p->capspans = p->capspans ? p->capspans * 2 : 1024;
        p->spans = xpv_xrealloc(p->spans, p->capspans * sizeof *p->spans);
    }
    p->spans[p->nspans++] = (span){ev->ts_ns, ev->dur_ps, 0, at};
    return 0;
}

/* ---- self time ---- */

static int by_start(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
    return x->dur_ps > y->dur_ps ? -1 : x->dur_ps < y->dur_ps; /* parents first */
}

/* The last whole ns a span covers: starts are stored in whole ns (floored)
 * and lengths in ps, so a span is compared with its neighbours on the ns
 * grid, where an op that starts where another ends is not taken for its
 * child by a rounding. */
static int64_t span_end_ns(const span *s)
{
    int64_t end = s->ts_ns * 1000 + s->dur_ps;
    return end / 1000 - (end % 1000 < 0);
}

/* Self time of each span of one line: its time less the time of the spans
 * that start inside it (its children; on a line of ops they run within
 * it). Two spans with the same start and length are siblings. */
static void self_times(span *s, size_t n)
{
    size_t *stack = xpv_xmalloc((n ? n : 1) * sizeof *stack), depth = 0;
    xpv_sort(s, n, sizeof *s, by_start);
    for (size_t i = 0; i < n; i++) {
        s[i].self_ps = s[i].dur_ps;
        while (depth && span_end_ns(&s[stack[depth - 1]]) <= s[i].ts_ns)
            depth--;
        if (depth) {
            span *parent = &s[stack[depth - 1]];
            if (s[i].ts_ns > parent->ts_ns || s[i].dur_ps < parent->dur_ps)
                parent->self_ps -= s[i].dur_ps; /* clamped at 0 when summed */
        }
        stack[depth++] = i;
    }
    free(stack);
}

/* Adds the track's executions of each op, the launches of its
 * least-launched kernel name on the track, and empties the launches. */
static void fold_launches(profile_ctx *p)
{
    if (!p->nlaunches) return;
    p->least = xpv_xrealloc(p->least, (p->nops + 1) * sizeof *p->least);
    for (size_t i = 0; i < p->nops; i++)
        p->least[i] = -1;
    for (size_t i = 0; i < p->nlaunches; i++) {
        const launch *l = &p->launches[i];
        if (p->least[l->op] < 0 || l->n < p->least[l->op]) p->least[l->op] = l->n;
    }
    for (size_t i = 0; i < p->nops; i++) {
        if (p->least[i] > 0) p->ops[i].executions += p->least[i];
        p->ops[i].last_launch = 0; /* the launches start again */
    }
    p->nlaunches = 0;
    xpv_hindex_clear(&p->launchidx);
}

/* Visits every op of one track and adds the spans' self times to their ops. */
static int scan_track(sqlite3 *db, profile_ctx *p, int64_t track, xpv_err *err)
{
    xpv_store_query q;
    xpv_store_query_all(&q, p->profile_id);
    q.track = track;
    if (p->mode == MODE_KERNELS) q.kinds = XPV_KIND_DEVICE_WORK_BITS;
    p->nspans = 0;
    if (xpv_store_scan(db, &q, visit_op, p, err) < 0) return -1;
    fold_launches(p);
    self_times(p->spans, p->nspans);
    for (size_t i = 0; i < p->nspans; i++)
        p->ops[p->spans[i].op].self_ps += p->spans[i].self_ps > 0 ? p->spans[i].self_ps : 0;
    return 0;
}

/* ---- the scope ---- */

typedef struct {
    uint64_t prog;
    char *name;
} module_name;

typedef struct {
    xpv_hlo_ops *out;
    size_t cap;
    xpv_hindex idx; /* hash of (program, name) -> index in out->ops */
    module_name *modules;
    size_t nmodules, capmodules;
} scope_ctx;

static uint64_t global_hash_of(uint64_t prog, int has_prog, const char *name, size_t len)
{
    return xpv_hash64(name, len) ^ (has_prog ? prog * 0x9e3779b97f4a7c15ull : 1);
}

static char *ref_dup(profile_ctx *p, uint32_t ref)
{
    size_t len;
    const char *s = ref ? ref_text(p, ref, &len) : NULL;
    return s && len ? xpv_xstrndup(s, len) : NULL;
}

static xpv_hlo_op *global_op_named(scope_ctx *g, const char *name, size_t len, int has_prog,
                                   uint64_t prog)
{
    prog = has_prog ? prog : 0;
    xpv_hprobe pr = xpv_hindex_probe(&g->idx, global_hash_of(prog, has_prog, name, len));
    xpv_hlo_ops *out = g->out;
    for (uint64_t i; xpv_hindex_next(&g->idx, &pr, &i);) {
        const xpv_hlo_op *o = &out->ops[i];
        if (o->has_program == has_prog && o->program_id == prog && strlen(o->name) == len &&
            memcmp(o->name, name, len) == 0)
            return &out->ops[i];
    }
    if (out->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 64;
        out->ops = xpv_xrealloc(out->ops, g->cap * sizeof *out->ops);
    }
    xpv_hlo_op *o = &out->ops[out->n];
    memset(o, 0, sizeof *o);
    o->name = xpv_xstrndup(name, len);
    o->program_id = prog, o->has_program = has_prog;
    xpv_hindex_insert_at(&g->idx, &pr, out->n);
    return &out->ops[out->n++];
}

static xpv_hlo_op *global_op_for(scope_ctx *g, profile_ctx *p, const local_op *l)
{
    size_t len;
    const char *name = ref_text(p, l->name, &len);
    return global_op_named(g, name, len, l->has_prog, l->prog);
}

/* Adds one op's occurrences, times and, where it carries them, FLOPs and
 * bytes to o: the scans of several tracks, hosts or cached profiles add up
 * the same way. */
static void add_sums(xpv_hlo_op *o, const xpv_hlo_op *l)
{
    o->occurrences += l->occurrences;
    o->total_ps += l->total_ps;
    o->self_ps += l->self_ps;
    if (l->has_flops) o->flops += l->flops, o->has_flops = 1;
    if (l->has_model_flops) o->model_flops += l->model_flops, o->has_model_flops = 1;
    if (l->has_bytes) o->bytes += l->bytes, o->has_bytes = 1;
    o->flops_derived |= l->flops_derived, o->bytes_derived |= l->bytes_derived;
}

/* An op with no JAX op of its own (a copy in a module of its own, say)
 * keeps the event's tf_op, which on GPU only names the module. */
static int names_framework_op(profile_ctx *p, uint32_t ref)
{
    size_t n;
    const char *s = ref_text(p, ref, &n);
    return s && xpv_hlo_names_framework_op(s, n);
}

static void merge_profile(scope_ctx *g, profile_ctx *p)
{
    for (size_t i = 0; i < p->nops; i++) {
        const local_op *l = &p->ops[i];
        xpv_hlo_op *o = global_op_for(g, p, l);
        if (!o->category && l->category) o->category = ref_dup(p, l->category);
        if (o->category) o->category_carried = 1;
        if (!o->module && l->module) o->module = ref_dup(p, l->module);
        if (!o->framework_op && l->tf_op && names_framework_op(p, l->tf_op))
            o->framework_op = ref_dup(p, l->tf_op);
        if (!o->source && l->source) o->source = ref_dup(p, l->source);
        if (!o->opcode && l->opcode) o->opcode = ref_dup(p, l->opcode);
        add_sums(o, &(xpv_hlo_op){.occurrences = l->occurrences,
                                  .total_ps = l->total_ps,
                                  .self_ps = l->self_ps,
                                  .flops = l->flops,
                                  .model_flops = l->model_flops,
                                  .bytes = l->bytes,
                                  .has_flops = l->has_flops,
                                  .has_model_flops = l->has_model_flops,
                                  .has_bytes = l->has_bytes,
                                  .flops_derived = l->flops_derived,
                                  .bytes_derived = l->bytes_derived});
    }
    if (p->derive_error && !g->out->derive_error)
        g->out->derive_error = xpv_xstrdup(p->derive_error);
    g->out->unattributed_n += p->unattributed_n;
    g->out->unattributed_ps += p->unattributed_ps;
    g->out->compile_n += p->compile_n;
    g->out->compile_ps += p->compile_ps;
}

typedef struct {
    scope_ctx *g;
    profile_ctx *p;
    uint32_t *seen; /* module name ids already parsed */
    size_t nseen;
} modules_ctx;

static void add_module(scope_ctx *g, uint64_t prog, const char *name, size_t len)
{
    for (size_t i = 0; i < g->nmodules; i++)
        if (g->modules[i].prog == prog) return;
    if (g->nmodules == g->capmodules) {
        g->capmodules = g->capmodules ? g->capmodules * 2 : 16;
        g->modules = xpv_xrealloc(g->modules, g->capmodules * sizeof *g->modules);
    }
    g->modules[g->nmodules++] = (module_name){prog, xpv_xstrndup(name, len)};
}

/* An `XLA Modules` event is named "<module>(<program id>)". */
static int visit_module(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    modules_ctx *m = ctx;
    for (size_t i = 0; i < m->nseen; i++)
        if (m->seen[i] == ev->name) return 0;
    m->seen = xpv_xrealloc(m->seen, (m->nseen + 1) * sizeof *m->seen);
    m->seen[m->nseen++] = ev->name;
    size_t len, name_len;
    uint64_t prog;
    const char *s = xpv_api_string(m->p->strings, ev->name, &len);
    if (xpv_hlo_module_split(s, len, &name_len, &prog)) add_module(m->g, prog, s, name_len);
    return 0;
}

int xpv_hlo_names_framework_op(const char *s, size_t len)
{
    return len > 0 && !(len >= 10 && memcmp(s, "XlaModule:", 10) == 0);
}

int xpv_hlo_module_split(const char *s, size_t len, size_t *name_len, uint64_t *prog)
{
    const char *open = len > 2 && s[len - 1] == ')' ? memchr(s, '(', len) : NULL;
    if (!open || open == s || open + 2 > s + len - 1) return 0;
    uint64_t v = 0;
    for (const char *c = open + 1; c < s + len - 1; c++) {
        if (*c < '0' || *c > '9') return 0;
        v = v * 10 + (uint64_t)(*c - '0');
    }
    *name_len = (size_t)(open - s), *prog = v;
    return 1;
}

static int read_modules(sqlite3 *db, scope_ctx *g, profile_ctx *p, xpv_err *err)
{
    size_t n;
    int64_t *tracks = xpv_hlo_tracks_of(db, p->profile_id, "XLA Modules", &n, err);
    if (!tracks) return -1;
    modules_ctx m = {g, p, NULL, 0};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        xpv_store_query q;
        xpv_store_query_all(&q, p->profile_id);
        q.track = tracks[i];
        q.skip_args = 1;
        rc = xpv_store_scan(db, &q, visit_module, &m, err) < 0 ? -1 : 0;
    }
    free(m.seen);
    free(tracks);
    return rc;
}

/* ---- derived FLOPs and bytes ---- */

/* FLOPs and bytes of one op from its module; 0, or -1 with err. */
static int derive_cost(xpv_hlo_derived *d, profile_ctx *p, local_op *o, xpv_err *err)
{
    int64_t exec = p->mode == MODE_XLA_OPS ? o->occurrences : o->executions;
    size_t len;
    xpv_hlo_cost c;
    if (o->has_flops || exec <= 0) return 0;
    const char *name = ref_text(p, o->name, &len);
    int rc = xpv_hlo_derived_cost(d, o->prog, name, len, &c, err);
    if (rc <= 0) return rc;
    o->flops = c.flops * exec, o->has_flops = o->flops_derived = 1;
    if (!o->has_bytes && c.has_bytes)
        o->bytes = c.bytes * exec, o->has_bytes = o->bytes_derived = 1;
    return 0;
}

/* The opcode of an op that carries no category; 0, or -1 with err. */
static int derive_opcode(xpv_hlo_derived *d, profile_ctx *p, local_op *o, xpv_err *err)
{
    size_t len;
    xpv_hlo_str opcode;
    if (o->category) return 0;
    const char *name = ref_text(p, o->name, &len);
    int rc = xpv_hlo_derived_opcode(d, o->prog, name, len, &opcode, err);
    if (rc > 0) o->opcode = pool_ref(p, opcode.p, opcode.n);
    return rc < 0 ? -1 : 0;
}

/* The modules' file changed while they were read, so its pages may have
 * read as zeros: nothing derived from them stands. */
static void forget_derived(profile_ctx *p)
{
    for (size_t i = 0; i < p->nops; i++) {
        local_op *o = &p->ops[i];
        if (o->flops_derived) o->flops = 0, o->has_flops = o->flops_derived = 0;
        if (o->bytes_derived) o->bytes = 0, o->has_bytes = o->bytes_derived = 0;
        if (!o->category) o->opcode = 0;
    }
}

/* Gives the ops that carry no flops the FLOPs (and bytes, where they
 * carry none) derived from the profile's modules, and those that carry
 * no category their opcode. A profile whose modules cannot be read keeps
 * its ops unknown and says why (derive_error). */
static void derive_from_modules(sqlite3 *db, profile_ctx *p)
{
    size_t want = 0;
    for (size_t i = 0; i < p->nops; i++)
        want += (!p->ops[i].has_flops || !p->ops[i].category) && p->ops[i].has_prog;
    if (!want) return;
    xpv_err err = {{0}};
    xpv_hlo_derived *d = xpv_hlo_derived_open(db, p->profile_id, &err);
    for (size_t i = 0; d && i < p->nops; i++) {
        local_op *o = &p->ops[i];
        if (!o->has_prog) continue;
        if (derive_cost(d, p, o, &err) < 0 || derive_opcode(d, p, o, &err) < 0) break;
    }
    if (d && !err.msg[0] && xpv_hlo_derived_unchanged(d, &err) != 0) forget_derived(p);
    if (err.msg[0]) p->derive_error = xpv_xstrdup(err.msg);
    xpv_hlo_derived_free(d);
}

static int collect_profile(sqlite3 *db, scope_ctx *g, int64_t id, xpv_err *err)
{
    profile_ctx p = {.profile_id = id};
    p.strings = xpv_api_strings_open(db, id);
    int rc = xpv_hlo_profile_keys(db, &p, err);
    if (rc == 0) rc = (p.mode = xpv_hlo_profile_mode(db, &p, err)) < 0 ? -1 : 0;
    if (rc == 0 && p.mode == MODE_XLA_OPS) rc = read_modules(db, g, &p, err);
    if (rc == 0 && p.mode == MODE_KERNELS)
        rc = xpv_store_compile_marks_get(db, id, &p.compile, err);
    size_t n = 0;
    int64_t *tracks = NULL;
    if (rc == 0 && p.mode != MODE_NONE) {
        tracks = xpv_hlo_tracks_of(db, id, p.mode == MODE_XLA_OPS ? "XLA Ops" : NULL, &n, err);
        if (!tracks) rc = -1;
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = scan_track(db, &p, tracks[i], err);
    if (rc == 0 && p.mode != MODE_NONE) derive_from_modules(db, &p);
    if (rc == 0 && p.mode != MODE_NONE) {
        merge_profile(g, &p);
        if (p.nops && p.mode == MODE_XLA_OPS) g->out->from_xla_ops++;
        if (p.nops && p.mode == MODE_KERNELS) g->out->from_kernels++;
    }
    free(tracks);
    xpv_hlo_profile_free(&p);
    return rc;
}

static int by_self_time(const void *a, const void *b)
{
    const xpv_hlo_op *x = a, *y = b;
    if (x->self_ps != y->self_ps) return x->self_ps > y->self_ps ? -1 : 1;
    if (x->total_ps != y->total_ps) return x->total_ps > y->total_ps ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->program_id < y->program_id ? -1 : x->program_id > y->program_id;
}

/* Module names by program where the ops did not carry them, categories
 * from the name where the profile did not carry them (from the opcode
 * where the name says nothing), then the order. */
static void finish(scope_ctx *g)
{
    xpv_hlo_ops *out = g->out;
    for (size_t i = 0; i < out->n; i++) {
        xpv_hlo_op *o = &out->ops[i];
        for (size_t m = 0; !o->module && o->has_program && m < g->nmodules; m++)
            if (g->modules[m].prog == o->program_id) o->module = xpv_xstrdup(g->modules[m].name);
        if (!o->category) {
            const char *c = xpv_hlo_category(o->name, strlen(o->name));
            if (strcmp(c, "other") == 0 && o->opcode) c = o->opcode;
            o->category = xpv_xstrdup(c);
            o->category_carried = 0;
        }
        out->total_self_ps += o->self_ps;
    }
    xpv_sort(out->ops, out->n, sizeof *out->ops, by_self_time);
}

/* ---- one profile's result, cached ---- */

/* One profile's ops and module names as collected, before finish(): what
 * the cache keeps, merged into each scope that holds the profile. */
typedef struct {
    xpv_hlo_ops ops;
    module_name *modules;
    size_t nmodules;
    size_t bytes; /* about what it holds */
} profile_result;

static void free_modules(module_name *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(m[i].name);
    free(m);
}

static void result_free(void *v)
{
    profile_result *r = v;
    xpv_hlo_ops_free(&r->ops);
    free_modules(r->modules, r->nmodules);
    free(r);
}

static char *dup_or_null(const char *s)
{
    return s ? xpv_xstrdup(s) : NULL;
}

/* Adds one profile's result into the scope, as merge_profile adds a
 * profile's local ops: in the profile's order, first value kept. */
static void merge_result(void *ctx, const void *value)
{
    scope_ctx *g = ctx;
    const profile_result *r = value;
    for (size_t i = 0; i < r->ops.n; i++) {
        const xpv_hlo_op *l = &r->ops.ops[i];
        xpv_hlo_op *o = global_op_named(g, l->name, strlen(l->name), l->has_program, l->program_id);
        if (!o->category) o->category = dup_or_null(l->category);
        if (o->category) o->category_carried = 1;
        if (!o->module) o->module = dup_or_null(l->module);
        if (!o->framework_op) o->framework_op = dup_or_null(l->framework_op);
        if (!o->source) o->source = dup_or_null(l->source);
        if (!o->opcode) o->opcode = dup_or_null(l->opcode);
        add_sums(o, l);
    }
    if (r->ops.derive_error && !g->out->derive_error)
        g->out->derive_error = xpv_xstrdup(r->ops.derive_error);
    for (size_t i = 0; i < r->nmodules; i++)
        add_module(g, r->modules[i].prog, r->modules[i].name, strlen(r->modules[i].name));
    g->out->unattributed_n += r->ops.unattributed_n;
    g->out->unattributed_ps += r->ops.unattributed_ps;
    g->out->compile_n += r->ops.compile_n;
    g->out->compile_ps += r->ops.compile_ps;
    g->out->from_xla_ops += r->ops.from_xla_ops;
    g->out->from_kernels += r->ops.from_kernels;
}

static size_t str_bytes(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* Collects one profile on its own (see collect_profile); NULL with err. */
static profile_result *profile_result_of(sqlite3 *db, int64_t id, xpv_err *err)
{
    profile_result *r = xpv_xcalloc(1, sizeof *r);
    scope_ctx pg = {.out = &r->ops};
    int rc = collect_profile(db, &pg, id, err);
    xpv_hindex_free(&pg.idx);
    r->modules = pg.modules, r->nmodules = pg.nmodules;
    if (rc != 0) {
        result_free(r);
        return NULL;
    }
    r->bytes = sizeof *r + pg.cap * sizeof *r->ops.ops + pg.capmodules * sizeof *r->modules;
    for (size_t i = 0; i < r->ops.n; i++) {
        const xpv_hlo_op *o = &r->ops.ops[i];
        r->bytes += str_bytes(o->name) + str_bytes(o->category) + str_bytes(o->module) +
                    str_bytes(o->framework_op) + str_bytes(o->source) + str_bytes(o->opcode);
    }
    for (size_t i = 0; i < r->nmodules; i++)
        r->bytes += str_bytes(r->modules[i].name);
    r->bytes += str_bytes(r->ops.derive_error);
    return r;
}

/* Adds one profile's ops into the scope: from the cache when it holds
 * them, else scanned (and cached when there is a cache). */
static int add_profile(sqlite3 *db, scope_ctx *g, xpv_hlo_cache *cache, int64_t id, xpv_err *err)
{
    xpv_hlo_cache_key k = {id, 0};
    int keyed = cache ? xpv_store_profiles_generation(db, id, &k.generation, err) : 0;
    if (keyed < 0) return -1;
    if (keyed && xpv_hlo_cache_use(cache, &k, merge_result, g)) return 0;
    profile_result *r = profile_result_of(db, id, err);
    if (!r) return -1;
    merge_result(g, r);
    if (keyed)
        xpv_hlo_cache_put(cache, &k, r, r->bytes);
    else
        result_free(r);
    return 0;
}

xpv_hlo_cache *xpv_hlo_ops_cache_new(size_t max_bytes)
{
    return xpv_hlo_cache_new(max_bytes, result_free);
}

int xpv_hlo_ops_collect(sqlite3 *db, const xpv_tool_scope *s, xpv_hlo_ops *out, xpv_err *err)
{
    memset(out, 0, sizeof *out);
    scope_ctx g = {.out = out};
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++)
        rc = add_profile(db, &g, s->hlo_cache, s->ids[i], err);
    if (rc == 0) finish(&g);
    free_modules(g.modules, g.nmodules);
    xpv_hindex_free(&g.idx);
    if (rc != 0) xpv_hlo_ops_free(out);
    return rc;
}

void xpv_hlo_ops_free(xpv_hlo_ops *o)
{
    for (size_t i = 0; i < o->n; i++) {
        free(o->ops[i].name);
        free(o->ops[i].category);
        free(o->ops[i].module);
        free(o->ops[i].framework_op);
        free(o->ops[i].source);
        free(o->ops[i].opcode);
    }
    free(o->ops);
    free(o->derive_error);
    memset(o, 0, sizeof *o);
}

static void hold_nothing(void *ctx, const void *value)
{
    (void)ctx, (void)value;
}

int xpv_hlo_ops_warm(sqlite3 *db, xpv_hlo_cache *cache, int64_t id, xpv_err *err)
{
    xpv_hlo_cache_key k = {id, 0};
    int keyed = xpv_store_profiles_generation(db, id, &k.generation, err);
    if (keyed <= 0) return keyed;
    if (xpv_hlo_cache_use(cache, &k, hold_nothing, NULL)) return 1;
    int has = xpv_hlo_profile_has_ops(db, id, 0, err);
    if (has <= 0) return has;
    profile_result *r = profile_result_of(db, id, err);
    if (!r) return -1;
    xpv_hlo_cache_put(cache, &k, r, r->bytes);
    return xpv_hlo_cache_use(cache, &k, hold_nothing, NULL); /* not when over the budget */
}
