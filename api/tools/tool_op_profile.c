/*
 * tool_op_profile.c — XProf's op_profile tool: the HLO ops of hlo_ops.c
 * grouped as XProf's "by category" view groups them, category, then
 * program, then op, written as one flat table in tree order (each group row
 * before its children), with `level` 1, 2, 3 saying which.
 *
 * XProf answers this tool with a tree (a protobuf as JSON); a flat table
 * with a level column is what the DataTable, JSON and CSV writers share, and
 * a reader rebuilds the tree from the order. A group's time is the sum of
 * its ops'; its share is of self time, so shares add up to 100% at every
 * level (`percent` of all ops, `percent_of_parent` of the row's group).
 * Groups and ops are ordered by self time, most first. A group's GFLOP/s
 * and GiB/s are over the time of its ops that carry flops / bytes, so an
 * op that carries none does not dilute them with time of unknown work.
 * flops_source / bytes_source say whether those figures were carried by
 * the profile ("measured") or derived from HLO shapes ("derived";
 * hlo_derive.h), a group holding both "measured,derived".
 */
#include "../hlo/hlo_ops.h"
#include "../hlo/hlo_table.h"

#include <stdlib.h>
#include <string.h>

static const xpv_table_col COLS[] = {
    {"level", "Level", XPV_COL_NUMBER},
    {"name", "Name", XPV_COL_STRING},
    {"category", "Category", XPV_COL_STRING},
    {"program_id", "Program id", XPV_COL_STRING},
    {"hlo_module", "Module", XPV_COL_STRING},
    {"hlo_op_name", "HLO op name", XPV_COL_STRING},
    {"occurrences", "#Occurrences", XPV_COL_NUMBER},
    {"total_time", "Total time (µs)", XPV_COL_NUMBER},
    {"avg_time", "Avg. time (µs)", XPV_COL_NUMBER},
    {"total_self_time", "Total self time (µs)", XPV_COL_NUMBER},
    {"percent", "Self time (% of all ops)", XPV_COL_NUMBER},
    {"percent_of_parent", "Self time (% of parent)", XPV_COL_NUMBER},
    {"flops", "FLOPs", XPV_COL_NUMBER},
    {"bytes_accessed", "Bytes accessed", XPV_COL_NUMBER},
    {"flop_rate", "GFLOP/s", XPV_COL_NUMBER},
    {"memory_bw", "Memory BW (GiB/s)", XPV_COL_NUMBER},
    {"flops_source", "FLOPs source", XPV_COL_STRING},
    {"bytes_source", "Bytes source", XPV_COL_STRING},
};

enum {
    C_LEVEL,
    C_NAME,
    C_CATEGORY,
    C_PROGRAM,
    C_MODULE,
    C_OP,
    C_OCC,
    C_TOTAL,
    C_AVG,
    C_SELF,
    C_PCT,
    C_PARENT_PCT,
    C_FLOPS,
    C_BYTES,
    C_RATE,
    C_BW,
    C_FLOPS_SOURCE,
    C_BYTES_SOURCE,
    NCOLS
};

/* A category, or a program within a category: the sums of its ops. */
typedef struct {
    const xpv_hlo_op *first; /* names the group: its category, program, module */
    size_t parent;           /* programs: their category's index */
    int64_t occurrences, total_ps, self_ps;
    long double flops, bytes;
    int64_t flops_ps, bytes_ps; /* time of the ops that carry flops / bytes */
    int has_flops, has_bytes;
    int flops_measured, flops_derived, bytes_measured, bytes_derived;
} group;

typedef struct {
    group *g;
    size_t n, cap;
} groups;

static int same_program(const xpv_hlo_op *a, const xpv_hlo_op *b)
{
    return a->has_program == b->has_program && a->program_id == b->program_id;
}

/* The index of the group o belongs to (a new one if none), summing o into it. */
static size_t group_of(groups *gs, const xpv_hlo_op *o, size_t parent, int programs)
{
    size_t i = 0;
    while (i < gs->n &&
           !(strcmp(gs->g[i].first->category, o->category) == 0 &&
             (!programs || (gs->g[i].parent == parent && same_program(gs->g[i].first, o)))))
        i++;
    if (i == gs->n) {
        if (gs->n == gs->cap)
            gs->g = xpv_xrealloc(gs->g, (gs->cap = gs->cap * 2 + 8) * sizeof *gs->g);
        memset(&gs->g[i], 0, sizeof gs->g[i]);
        gs->g[i].first = o, gs->g[i].parent = parent;
        gs->n++;
    }
    group *g = &gs->g[i];
    g->occurrences += o->occurrences, g->total_ps += o->total_ps, g->self_ps += o->self_ps;
    if (o->has_flops) g->flops += o->flops, g->flops_ps += o->total_ps, g->has_flops = 1;
    if (o->has_bytes) g->bytes += o->bytes, g->bytes_ps += o->total_ps, g->has_bytes = 1;
    g->flops_measured |= o->has_flops && !o->flops_derived, g->flops_derived |= o->flops_derived;
    g->bytes_measured |= o->has_bytes && !o->bytes_derived, g->bytes_derived |= o->bytes_derived;
    return i;
}

static void put_shares(xpv_table *t, size_t r, int64_t self_ps, int64_t parent_ps, int64_t all_ps)
{
    if (all_ps > 0) xpv_table_set_double(t, r, C_PCT, 100.0 * (double)self_ps / (double)all_ps);
    if (parent_ps > 0)
        xpv_table_set_double(t, r, C_PARENT_PCT, 100.0 * (double)self_ps / (double)parent_ps);
}

static void put_group(xpv_table *t, int level, const group *g, int64_t parent_ps, int64_t all_ps)
{
    const xpv_hlo_op *o = g->first;
    size_t r = xpv_table_add_row(t);
    xpv_table_set_int(t, r, C_LEVEL, level);
    xpv_hlo_table_set_str(t, r, C_CATEGORY, o->category);
    if (level == 1) {
        xpv_hlo_table_set_str(t, r, C_NAME, o->category);
    } else {
        xpv_hlo_table_set_op_names(t, r, o, C_PROGRAM, C_MODULE, C_CATEGORY, XPV_HLO_SKIP);
        /* named by its module, or by its id where the module is not known */
        if (o->module)
            xpv_hlo_table_set_str(t, r, C_NAME, o->module);
        else
            xpv_hlo_table_set_op_names(t, r, o, C_NAME, XPV_HLO_SKIP, XPV_HLO_SKIP, XPV_HLO_SKIP);
    }
    xpv_table_set_int(t, r, C_OCC, g->occurrences);
    xpv_table_set_ps_us(t, r, C_TOTAL, (double)g->total_ps);
    xpv_table_set_ps_us(t, r, C_SELF, (double)g->self_ps);
    put_shares(t, r, g->self_ps, parent_ps, all_ps);
    xpv_hlo_table_set_sum(t, r, C_FLOPS, g->has_flops, g->flops);
    xpv_hlo_table_set_sum(t, r, C_BYTES, g->has_bytes, g->bytes);
    xpv_hlo_table_set_rate(t, r, C_RATE, g->has_flops, g->flops, g->flops_ps);
    xpv_hlo_table_set_bw(t, r, C_BW, g->has_bytes, g->bytes, g->bytes_ps);
    xpv_hlo_table_set_source(t, r, C_FLOPS_SOURCE, g->flops_measured, g->flops_derived);
    xpv_hlo_table_set_source(t, r, C_BYTES_SOURCE, g->bytes_measured, g->bytes_derived);
}

static void put_op(xpv_table *t, const xpv_hlo_op *o, int64_t parent_ps, int64_t all_ps)
{
    size_t r = xpv_table_add_row(t);
    xpv_table_set_int(t, r, C_LEVEL, 3);
    xpv_hlo_table_set_str(t, r, C_NAME, o->name);
    xpv_hlo_table_set_op_names(t, r, o, C_PROGRAM, C_MODULE, C_CATEGORY, C_OP);
    xpv_table_set_int(t, r, C_OCC, o->occurrences);
    xpv_table_set_ps_us(t, r, C_TOTAL, (double)o->total_ps);
    if (o->occurrences)
        xpv_table_set_double(t, r, C_AVG, (double)o->total_ps / (1e6 * (double)o->occurrences));
    xpv_table_set_ps_us(t, r, C_SELF, (double)o->self_ps);
    put_shares(t, r, o->self_ps, parent_ps, all_ps);
    xpv_hlo_table_set_sum(t, r, C_FLOPS, o->has_flops, o->flops);
    xpv_hlo_table_set_sum(t, r, C_BYTES, o->has_bytes, o->bytes);
    xpv_hlo_table_set_rate(t, r, C_RATE, o->has_flops, o->flops, o->total_ps);
    xpv_hlo_table_set_bw(t, r, C_BW, o->has_bytes, o->bytes, o->total_ps);
    xpv_hlo_table_set_source(t, r, C_FLOPS_SOURCE, o->has_flops && !o->flops_derived,
                             o->flops_derived);
    xpv_hlo_table_set_source(t, r, C_BYTES_SOURCE, o->has_bytes && !o->bytes_derived,
                             o->bytes_derived);
}

/* Sort keys: groups by self time (most first), then first appearance. */
typedef struct {
    size_t parent_rank; /* programs: their category's rank; ops: their program's */
    int64_t self_ps;
    size_t index;
} order;

static int by_order(const void *a, const void *b)
{
    const order *x = a, *y = b;
    if (x->parent_rank != y->parent_rank) return x->parent_rank < y->parent_rank ? -1 : 1;
    if (x->self_ps != y->self_ps) return x->self_ps > y->self_ps ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorts the keys and gives each entry its rank (rank[index]). */
static void rank(order *o, size_t n, size_t *rank)
{
    xpv_sort(o, n, sizeof *o, by_order);
    for (size_t i = 0; i < n; i++)
        rank[o[i].index] = i;
}

typedef struct {
    groups cats, progs;
    size_t *op_prog, *cat_rank, *prog_rank;
    order *cat_order, *prog_order, *op_order;
} tree;

static void build_tree(tree *tr, const xpv_hlo_ops *ops)
{
    size_t n = ops->n;
    tr->op_prog = xpv_xmalloc((n + 1) * sizeof *tr->op_prog);
    for (size_t i = 0; i < n; i++) {
        size_t c = group_of(&tr->cats, &ops->ops[i], 0, 0);
        tr->op_prog[i] = group_of(&tr->progs, &ops->ops[i], c, 1);
    }
    tr->cat_order = xpv_xmalloc((tr->cats.n + 1) * sizeof *tr->cat_order);
    tr->cat_rank = xpv_xmalloc((tr->cats.n + 1) * sizeof *tr->cat_rank);
    for (size_t c = 0; c < tr->cats.n; c++)
        tr->cat_order[c] = (order){0, tr->cats.g[c].self_ps, c};
    rank(tr->cat_order, tr->cats.n, tr->cat_rank);
    tr->prog_order = xpv_xmalloc((tr->progs.n + 1) * sizeof *tr->prog_order);
    tr->prog_rank = xpv_xmalloc((tr->progs.n + 1) * sizeof *tr->prog_rank);
    for (size_t p = 0; p < tr->progs.n; p++)
        tr->prog_order[p] = (order){tr->cat_rank[tr->progs.g[p].parent], tr->progs.g[p].self_ps, p};
    rank(tr->prog_order, tr->progs.n, tr->prog_rank);
    tr->op_order = xpv_xmalloc((n + 1) * sizeof *tr->op_order);
    for (size_t i = 0; i < n; i++) /* ops are sorted already: keep their order */
        tr->op_order[i] = (order){tr->prog_rank[tr->op_prog[i]], 0, i};
    xpv_sort(tr->op_order, n, sizeof *tr->op_order, by_order);
}

static void free_tree(tree *tr)
{
    free(tr->cats.g), free(tr->progs.g), free(tr->op_prog), free(tr->cat_rank);
    free(tr->prog_rank), free(tr->cat_order), free(tr->prog_order), free(tr->op_order);
}

int xpv_tool_op_profile_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    return xpv_hlo_ops_has_data(db, s, 0, err);
}

xpv_table *xpv_tool_op_profile(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    _Static_assert(sizeof COLS / sizeof COLS[0] == NCOLS, "a column id per column");
    xpv_hlo_ops ops;
    if (xpv_hlo_ops_collect(db, s, &ops, err) != 0) return NULL;
    tree tr = {0};
    build_tree(&tr, &ops);
    xpv_table *t = xpv_table_new(COLS, NCOLS);
    int64_t all = ops.total_self_ps;
    size_t next = 0; /* the next op, in tree order */
    for (size_t k = 0; k < tr.progs.n; k++) {
        size_t p = tr.prog_order[k].index;
        const group *prog = &tr.progs.g[p], *cat = &tr.cats.g[prog->parent];
        if (k == 0 || tr.progs.g[tr.prog_order[k - 1].index].parent != prog->parent)
            put_group(t, 1, cat, all, all);
        put_group(t, 2, prog, cat->self_ps, all);
        for (; next < ops.n && tr.op_prog[tr.op_order[next].index] == p; next++)
            put_op(t, &ops.ops[tr.op_order[next].index], prog->self_ps, all);
    }
    xpv_hlo_table_set_properties(t, &ops);
    xpv_table_set_property(t, "group_by", "category,program,op");
    free_tree(&tr);
    xpv_hlo_ops_free(&ops);
    return t;
}
