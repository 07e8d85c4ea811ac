/*
 * xplane_attrib.c — placing GPU kernels on HLO instructions (see
 * xplane_attrib.h for the rules).
 *
 * A module is decoded once, with an index of its instruction names, which
 * is all that naming kernels needs. At its first graph execution it is
 * prepared once more: its launchers (instructions outside fused
 * computations that can put work on the device), in module order, with an
 * index of them as XLA spells kernel names, a reuse group per fusion (same
 * name stem and signature), and each launcher's inputs. A graph execution
 * is then placed by the rules of xplane_attrib.h, each a pass over its
 * events, in turn until none places more; the rules that weigh data links
 * are in xplane_attrib_links.c. Scratch marks are stamped with a per-run
 * generation, so a run costs its own length plus the launchers its gaps
 * span, never a clear of the module's arrays.
 */
#include "xplane_attrib.h"
#include "xplane_attrib_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODULE_BUDGET ((size_t)1 << 30)
#define SIG_DEPTH 4

/* ---- names ---- */

static int text_is(xpv_hlo_str s, const char *p, size_t n)
{
    return s.n == n && (n == 0 || memcmp(s.p, p, n) == 0);
}

/* The kernel spelling of an instruction name: `.` and `-` made `_`. */
static uint64_t kernel_hash(const char *p, size_t n, char *buf, size_t cap)
{
    size_t k = n < cap ? n : cap;
    for (size_t i = 0; i < k; i++)
        buf[i] = (p[i] == '.' || p[i] == '-') ? '_' : p[i];
    return xpv_hash64(buf, k);
}

/* The name without its `.N` suffix: what identical fusions share. */
static size_t stem_len(xpv_hlo_str s)
{
    size_t n = s.n;
    while (n && s.p[n - 1] >= '0' && s.p[n - 1] <= '9')
        n--;
    return (n && n < s.n && s.p[n - 1] == '.') ? n - 1 : s.n;
}

/* Instructions that put nothing on the device of their own. */
static int is_free(xpv_hlo_str op)
{
    static const char *const FREE[] = {"parameter",         "constant",
                                       "get-tuple-element", "tuple",
                                       "bitcast",           "while",
                                       "conditional",       "call",
                                       "after-all",         "add-dependency",
                                       "opt-barrier",       "partition-id",
                                       "replica-id",        "domain",
                                       "copy-done",         "all-reduce-done",
                                       "all-gather-done",   "collective-permute-done",
                                       "async-done",        "send-done",
                                       "recv-done",         "async-start",
                                       "async-update",      NULL};
    for (const char *const *f = FREE; *f; f++)
        if (text_is(op, *f, strlen(*f))) return 1;
    return 0;
}

/* Instructions whose result is (part of) their operands: a data link runs
 * through them. Control flow is not one: its result is its callee's. */
static int moves_nothing(xpv_hlo_str op)
{
    static const char *const MOVES_NOTHING[] = {"get-tuple-element", "tuple",          "bitcast",
                                                "opt-barrier",       "add-dependency", NULL};
    for (const char *const *f = MOVES_NOTHING; *f; f++)
        if (text_is(op, *f, strlen(*f))) return 1;
    return 0;
}

/* ---- preparing a module ---- */

/* Instructions whose callees launch work of their own, as the caller's
 * steps: control flow, and async-start (the wrapped instruction runs on
 * another stream, or as a command of the caller's graph). A fusion's, a
 * reduction's or a sort's callee runs inside its kernel instead. */
static int runs_callees(xpv_hlo_str op)
{
    return xpv_attrib_is_control_flow(op) || text_is(op, "async-start", 11);
}

static void mark_fused(const xpv_hlo_module *m, uint8_t *fused, uint32_t c, int depth)
{
    if (depth > 64 || fused[c]) return;
    fused[c] = 1;
    const xpv_hlo_computation *comp = &m->computations[c];
    for (uint32_t i = comp->first; i < comp->first + comp->n; i++)
        for (uint32_t k = 0; k < m->instrs[i].called.n; k++) {
            uint32_t callee;
            if (xpv_hlo_computation_by_id(m, m->instrs[i].called.v[k], &callee))
                mark_fused(m, fused, callee, depth + 1);
        }
}

/* Computations whose instructions run inside another instruction's kernel. */
static uint8_t *fused_computations(const xpv_hlo_module *m)
{
    uint8_t *fused = xpv_xcalloc(m->ncomputations + 1, 1);
    for (uint32_t i = 0; i < m->ninstrs; i++) {
        const xpv_hlo_instr *in = &m->instrs[i];
        /* an async wrapper's callee launches its own work too; some XLA
         * versions list it on the async-done as well */
        if (runs_callees(in->opcode) || text_is(in->opcode, "async-done", 10) ||
            text_is(in->opcode, "async-update", 12))
            continue;
        for (uint32_t k = 0; k < in->called.n; k++) {
            uint32_t callee;
            if (xpv_hlo_computation_by_id(m, in->called.v[k], &callee))
                mark_fused(m, fused, callee, 0);
        }
    }
    return fused;
}

/* An instruction's own fields, less those that name it or place it
 * (name, metadata, id, operand and callee ids) and those XLA fills for
 * some instructions of a group and not others (backend config, frontend
 * attributes: seen on one of four identical concatenations): opcode,
 * shape, slice bounds, dimensions, literals. */
/* v in decimal, as "%llu" writes it: signatures are built for every
 * instruction of every module, and printf was most of their cost. */
static void put_uint(xpv_buf *b, uint64_t v)
{
    char d[20];
    size_t n = 0;
    do
        d[sizeof d - ++n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    xpv_buf_append(b, d + sizeof d - n, n);
}

static void put_fields(const xpv_hlo_instr *in, xpv_buf *b)
{
    xpv_pb msg = xpv_pb_open(in->raw.p, in->raw.n);
    xpv_pb_field f;
    xpv_err ignored;
    while (xpv_pb_next(&msg, &f, &ignored) == 1) {
        if (f.num == 1 || f.num == 7 || f.num == 35 || f.num == 36 || f.num == 37 || f.num == 38)
            continue; /* name, metadata, id, operand, control-predecessor and callee ids */
        if (f.num == 43 || f.num == 68) continue; /* backend config, frontend attributes */
        put_uint(b, f.num);
        xpv_buf_putc(b, ':');
        if (f.wire == XPV_PB_LEN)
            xpv_buf_append(b, f.data, f.len);
        else
            put_uint(b, f.v);
        xpv_buf_putc(b, '|');
    }
}

/* What makes two fused computations the same kernel: each instruction's
 * own fields, its operands (by position) and callees, recursively. */
static void put_computation(const xpv_hlo_module *m, uint32_t c, xpv_buf *b, int depth)
{
    const xpv_hlo_computation *comp = &m->computations[c];
    for (uint32_t i = comp->first; i < comp->first + comp->n; i++) {
        const xpv_hlo_instr *in = &m->instrs[i];
        put_fields(in, b);
        for (uint32_t k = 0; k < in->operands.n; k++) {
            const xpv_hlo_instr *op = xpv_hlo_instr_by_id(m, in->operands.v[k]);
            int64_t at = op ? (int64_t)(op - m->instrs) - comp->first : -1;
            if (at < 0) xpv_buf_putc(b, '-'); /* an operand of another computation, or none */
            put_uint(b, at < 0 ? (uint64_t)-at : (uint64_t)at);
            xpv_buf_putc(b, ',');
        }
        for (uint32_t k = 0; k < in->called.n && depth < SIG_DEPTH; k++) {
            uint32_t callee;
            if (xpv_hlo_computation_by_id(m, in->called.v[k], &callee))
                put_computation(m, callee, b, depth + 1);
        }
        xpv_buf_putc(b, ';');
    }
}

static uint64_t signature(const xpv_hlo_module *m, const xpv_hlo_instr *in, xpv_buf *b)
{
    b->len = 0;
    xpv_buf_append(b, in->name.p, stem_len(in->name));
    xpv_buf_putc(b, '|');
    put_fields(in, b);
    for (uint32_t k = 0; k < in->called.n; k++) {
        uint32_t callee;
        if (xpv_hlo_computation_by_id(m, in->called.v[k], &callee))
            put_computation(m, callee, b, 0);
    }
    return xpv_hash64(b->data, b->len);
}

/* 1 when kernel name k is instruction name s as XLA spells kernels. */
static int spells(xpv_hlo_str s, const char *k, size_t n)
{
    if (s.n != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = (s.p[i] == '.' || s.p[i] == '-') ? '_' : s.p[i];
        if (c != k[i]) return 0;
    }
    return 1;
}

static void index_names(xpv_attrib_module *am)
{
    const xpv_hlo_module *m = &am->m;
    for (uint32_t i = 0; i < m->ninstrs; i++) {
        xpv_hprobe p =
            xpv_hindex_probe(&am->by_name, xpv_hash64(m->instrs[i].name.p, m->instrs[i].name.n));
        uint64_t v;
        int dup = 0;
        while (!dup && xpv_hindex_next(&am->by_name, &p, &v))
            dup = text_is(m->instrs[v].name, m->instrs[i].name.p, m->instrs[i].name.n);
        if (!dup) xpv_hindex_insert_at(&am->by_name, &p, i);
    }
}

static void index_kernels(xpv_attrib_module *am)
{
    const xpv_hlo_module *m = &am->m;
    char buf[512];
    for (uint32_t l = 0; l < am->nlaunchers; l++) {
        xpv_hlo_str s = m->instrs[am->launchers[l]].name;
        if (s.n > sizeof buf) continue;
        xpv_hprobe p = xpv_hindex_probe(&am->by_kernel, kernel_hash(s.p, s.n, buf, sizeof buf));
        uint64_t v;
        int dup = 0;
        while (!dup && xpv_hindex_next(&am->by_kernel, &p, &v))
            dup = spells(m->instrs[am->launchers[v]].name, buf, s.n);
        if (dup) am->ambiguous[v] = 1; /* `a.1` and `a_1` spell one kernel: neither */
        if (!dup) xpv_hindex_insert_at(&am->by_kernel, &p, l);
    }
}

/* Links each fusion launcher to the next one of its reuse group. */
static void link_groups(xpv_attrib_module *am)
{
    xpv_hindex last = {0};
    xpv_buf b = {0};
    for (uint32_t l = 0; l < am->nlaunchers; l++) {
        am->group_next[l] = NONE, am->group_head[l] = l;
        if (!am->is_fusion[l]) continue;
        uint64_t sig = signature(&am->m, &am->m.instrs[am->launchers[l]], &b);
        uint64_t *prev = xpv_hindex_put(&last, sig, NONE);
        if (*prev != NONE) am->group_next[*prev] = l, am->group_head[l] = am->group_head[*prev];
        *prev = l;
    }
    xpv_hindex_free(&last);
    xpv_buf_free(&b);
}

/* The launchers instruction i reads, through instructions that move
 * nothing, appended to am->inputs (depth-capped: such chains are short). */
static void add_inputs(xpv_attrib_module *am, uint32_t i, size_t *fill, size_t *cap, int depth)
{
    const xpv_hlo_module *m = &am->m;
    const xpv_hlo_instr *in = &m->instrs[i];
    for (uint32_t k = 0; k < in->operands.n; k++) {
        const xpv_hlo_instr *op = xpv_hlo_instr_by_id(m, in->operands.v[k]);
        if (!op) continue;
        uint32_t o = (uint32_t)(op - m->instrs);
        if (am->launcher_of_instr[o] != NONE) {
            if (*fill == *cap) {
                *cap = *cap ? *cap * 2 : 1024;
                am->inputs = xpv_xrealloc(am->inputs, *cap * sizeof *am->inputs);
            }
            am->inputs[(*fill)++] = am->launcher_of_instr[o];
        } else if (depth < 8 && moves_nothing(op->opcode)) {
            add_inputs(am, o, fill, cap, depth + 1);
        }
    }
}

/* callees[] of every computation: those its while, conditional, call and
 * async-start instructions run (a fusion's callees run inside its kernel);
 * site[] of an async-start's callee: that async-start; caller[] and
 * call_site[]: the first computation and instruction that run it. */
static void link_callees(xpv_attrib_module *am)
{
    const xpv_hlo_module *m = &am->m;
    am->callee_at = xpv_xcalloc(m->ncomputations + 1, sizeof *am->callee_at);
    am->callees = xpv_xmalloc((m->ninstrs + 1) * sizeof *am->callees);
    am->scope = xpv_xcalloc(m->ncomputations + 1, sizeof *am->scope);
    am->repeats = xpv_xcalloc(m->ncomputations + 1, sizeof *am->repeats);
    am->caller = xpv_xmalloc((m->ncomputations + 1) * sizeof *am->caller);
    am->site = xpv_xmalloc((m->ncomputations + 1) * sizeof *am->site);
    am->call_site = xpv_xmalloc((m->ncomputations + 1) * sizeof *am->call_site);
    am->looped = xpv_xcalloc(m->ncomputations + 1, 1);
    for (uint32_t c = 0; c <= m->ncomputations; c++)
        am->caller[c] = am->site[c] = am->call_site[c] = NONE;
    uint32_t fill = 0, cap = m->ninstrs + 1;
    for (uint32_t c = 0; c < m->ncomputations; c++) {
        am->callee_at[c] = fill;
        const xpv_hlo_computation *comp = &m->computations[c];
        for (uint32_t i = comp->first; i < comp->first + comp->n; i++) {
            const xpv_hlo_instr *in = &m->instrs[i];
            if (!runs_callees(in->opcode)) continue;
            for (uint32_t k = 0; k < in->called.n; k++) {
                uint32_t callee;
                if (!xpv_hlo_computation_by_id(m, in->called.v[k], &callee)) continue;
                if (text_is(in->opcode, "async-start", 11)) am->site[callee] = i;
                if (text_is(in->opcode, "while", 5)) am->looped[callee] = 1;
                if (am->caller[callee] == NONE && callee != c)
                    am->caller[callee] = c, am->call_site[callee] = i;
                if (fill == cap)
                    am->callees = xpv_xrealloc(am->callees, (cap *= 2) * sizeof *am->callees);
                am->callees[fill++] = callee;
            }
        }
    }
    am->callee_at[m->ncomputations] = fill;
}

/* inputs[] of every launcher: the data links the placement rules weigh. */
static void link_inputs(xpv_attrib_module *am)
{
    const xpv_hlo_module *m = &am->m;
    am->launcher_of_instr = xpv_xmalloc((m->ninstrs + 1) * sizeof *am->launcher_of_instr);
    for (uint32_t i = 0; i < m->ninstrs; i++)
        am->launcher_of_instr[i] = NONE;
    for (uint32_t l = 0; l < am->nlaunchers; l++)
        am->launcher_of_instr[am->launchers[l]] = l;
    am->input_at = xpv_xcalloc(am->nlaunchers + 1, sizeof *am->input_at);
    size_t fill = 0, cap = 0;
    for (uint32_t l = 0; l < am->nlaunchers; l++) {
        am->input_at[l] = (uint32_t)fill;
        add_inputs(am, am->launchers[l], &fill, &cap, 0);
    }
    am->input_at[am->nlaunchers] = (uint32_t)fill;
}

/* 1 when XLA may run instruction `in` as a copy (a memcpy node when in a
 * graph): a copy, or a fusion that only slices or updates in place (a scan
 * body's dynamic slice of stacked weights runs as MemcpyD2D without
 * command buffers, as CUDA's memcpy kernels with them). */
static int may_copy(const xpv_hlo_module *m, const xpv_hlo_instr *in)
{
    static const char *const ROOTS[] = {"dynamic-slice", "dynamic-update-slice", "slice", "copy",
                                        NULL};
    uint32_t c;
    if (text_is(in->opcode, "copy", 4)) return 1;
    if (!text_is(in->opcode, "fusion", 6) || in->called.n != 1 ||
        !xpv_hlo_computation_by_id(m, in->called.v[0], &c))
        return 0;
    const xpv_hlo_instr *root = xpv_hlo_instr_by_id(m, m->computations[c].root_id);
    for (const char *const *r = ROOTS; root && *r; r++)
        if (text_is(root->opcode, *r, strlen(*r))) return 1;
    return 0;
}

/* What graph executions need, built at the first one: a profile without
 * command buffers (TPU, command buffers off) only names its kernels. */
static void prepare_runs(xpv_attrib_module *am)
{
    const xpv_hlo_module *m = &am->m;
    uint8_t *fused = fused_computations(m);
    am->launchers = xpv_xmalloc((m->ninstrs + 1) * sizeof *am->launchers);
    for (uint32_t i = 0; i < m->ninstrs; i++)
        if (!fused[m->instrs[i].computation] && !is_free(m->instrs[i].opcode))
            am->launchers[am->nlaunchers++] = i;
    free(fused);
    size_t n = am->nlaunchers + 1;
    am->is_fusion = xpv_xcalloc(n, 1);
    am->ambiguous = xpv_xcalloc(n, 1);
    am->is_copy = xpv_xcalloc(n, 1);
    for (uint32_t l = 0; l < am->nlaunchers; l++) {
        const xpv_hlo_instr *in = &m->instrs[am->launchers[l]];
        am->is_fusion[l] = text_is(in->opcode, "fusion", 6);
        am->is_copy[l] = (uint8_t)may_copy(m, in);
    }
    am->group_next = xpv_xmalloc(n * sizeof *am->group_next);
    am->group_head = xpv_xmalloc(n * sizeof *am->group_head);
    uint32_t **scratch[] = {&am->named, &am->used, &am->count, &am->cand};
    for (size_t k = 0; k < sizeof scratch / sizeof *scratch; k++)
        *scratch[k] = xpv_xcalloc(n, sizeof **scratch[k]);
    if (!xpv_hlo_computation_by_id(m, m->entry_computation_id, &am->entry)) am->entry = NONE;
    index_kernels(am);
    link_groups(am);
    link_inputs(am);
    link_callees(am);
    xpv_attrib_order_prepare(am);
}

static int ready(xpv_attrib_module *am)
{
    if (am->state) return am->state > 0;
    xpv_err err;
    const xpv_hlo_blob *b = am->blob;
    if (xpv_hlo_decode(am->owner->data, b->data, b->len, MODULE_BUDGET, &am->m, &err) != 0) {
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "module %.*s: its HloProto cannot be read (%s); its kernels keep "
                 "the op names the profile gives",
                 (int)(b->name.n < 200 ? b->name.n : 200), b->name.p, err.msg);
        xpv_sink_fact(am->owner->sink, "warning", msg);
        am->state = -1;
        return 0;
    }
    am->ops = xpv_xcalloc(am->m.ninstrs + 1, sizeof *am->ops);
    am->op_ready = xpv_xcalloc(am->m.ninstrs + 1, 1);
    index_names(am);
    am->state = 1;
    return 1;
}

/* ---- the space's modules ---- */

/* "jit_step(14584)": the name and the program id in parentheses. */
static int split_name(xpv_hlo_str s, size_t *name_len, uint64_t *prog)
{
    if (s.n < 3 || s.p[s.n - 1] != ')') return 0;
    size_t open = s.n - 1;
    uint64_t v = 0, scale = 1;
    while (open > 0 && s.p[open - 1] >= '0' && s.p[open - 1] <= '9' &&
           scale < 10000000000000000000ULL)
        v += (uint64_t)(s.p[--open] - '0') * scale, scale *= 10;
    if (open == 0 || open == s.n - 1 || s.p[open - 1] != '(') return 0;
    *name_len = open - 1, *prog = v;
    return 1;
}

xpv_attrib *xpv_attrib_open(const uint8_t *data, size_t size, xpv_sink *sink)
{
    xpv_hlo_blob *blobs;
    size_t n;
    xpv_err err;
    if (xpv_hlo_find_blobs(data, size, &blobs, &n, &err) != 0) {
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "compiled modules cannot be found (%s); kernels keep the op "
                 "names the profile gives",
                 err.msg);
        xpv_sink_fact(sink, "warning", msg);
        return NULL;
    }
    if (!n) return NULL;
    xpv_attrib *a = xpv_xcalloc(1, sizeof *a);
    a->sink = sink, a->data = data, a->blobs = blobs, a->nblobs = n;
    a->mods = xpv_xcalloc(n, sizeof *a->mods);
    for (size_t i = 0; i < n; i++) {
        xpv_attrib_module *am = &a->mods[i];
        size_t len = blobs[i].name.n;
        am->owner = a, am->blob = &blobs[i], am->prog = blobs[i].program_id;
        split_name(blobs[i].name, &len, &am->prog);
        am->name = xpv_sink_intern(sink, blobs[i].name.p, len);
    }
    a->unattributed = xpv_sink_intern_cstr(sink, XPV_ATTRIB_UNATTRIBUTED);
    return a;
}

static void module_free(xpv_attrib_module *am)
{
    if (am->state > 0) xpv_hlo_module_free(&am->m);
    uint32_t *arrays[] = {
        am->launchers, am->group_next, am->group_head, am->named,    am->used,
        am->count,     am->cand,       am->inputs,     am->input_at, am->launcher_of_instr};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++)
        free(arrays[k]);
    free(am->is_fusion), free(am->ambiguous), free(am->is_copy), free(am->ops), free(am->op_ready),
        free(am->at), free(am->place), free(am->cls), free(am->callee_at), free(am->callees),
        free(am->scope), free(am->repeats), free(am->caller), free(am->call_site), free(am->site),
        free(am->looped);
    xpv_attrib_order_free(am);
    xpv_hindex_free(&am->by_name), xpv_hindex_free(&am->by_kernel);
    xpv_hindex_free(&am->kernel_of), xpv_hindex_free(&am->instr_of);
}

void xpv_attrib_free(xpv_attrib *a)
{
    if (!a) return;
    for (size_t i = 0; i < a->nblobs; i++)
        module_free(&a->mods[i]);
    free(a->mods);
    free(a->blobs);
    xpv_hindex_free(&a->cmdbuf);
    xpv_hindex_free(&a->event_cls);
    free(a);
}

xpv_attrib_module *xpv_attrib_module_of(xpv_attrib *a, int has_prog, uint64_t prog,
                                        uint32_t module_name)
{
    xpv_attrib_module *found = NULL;
    if (a->last < a->nblobs && has_prog && a->mods[a->last].prog == prog) found = &a->mods[a->last];
    for (size_t i = 0; !found && i < a->nblobs; i++) {
        xpv_attrib_module *am = &a->mods[i];
        if (has_prog ? am->prog != prog : am->name != module_name) continue;
        if (!has_prog) /* a name alone must name one module */
            for (size_t j = i + 1; j < a->nblobs; j++)
                if (a->mods[j].name == module_name) return NULL;
        found = am, a->last = i;
    }
    return found && ready(found) ? found : NULL;
}

void xpv_attrib_report(const xpv_attrib *a, int64_t unplaceable)
{
    char msg[400];
    if (!a || !(a->placed + a->left + unplaceable)) return;
    char copies[80] = "";
    if (a->by_schedule)
        snprintf(copies, sizeof copies, ", %lld copies by schedule order alone",
                 (long long)a->by_schedule);
    snprintf(msg, sizeof msg,
             "%lld kernels of XLA command buffers: %lld placed on their HLO instructions (%lld "
             "of them by name order alone%s), %lld unattributed",
             (long long)(a->placed + a->left), (long long)a->placed, (long long)a->by_name_order,
             copies, (long long)a->left);
    xpv_sink_fact(a->sink, "attribution", msg);
    if (!unplaceable) return;
    snprintf(msg, sizeof msg,
             "%lld command-buffer events name no correlation id or no module with an HloProto; "
             "their op stays the command buffer's",
             (long long)unplaceable);
    xpv_sink_fact(a->sink, "warning", msg);
}

int xpv_attrib_is_command_buffer(xpv_attrib *a, uint32_t hlo_op)
{
    uint64_t *v = xpv_hindex_put(&a->cmdbuf, hlo_op, 0);
    if (!*v) {
        size_t len;
        const char *s = xpv_sink_string(a->sink, hlo_op, &len);
        *v = (s && len >= 14 && memcmp(s, "command_buffer", 14) == 0) ? 1 : 2;
    }
    return *v == 1;
}

/* ---- ops ---- */

static const xpv_attrib_op *op_of(xpv_attrib_module *am, uint32_t instr)
{
    xpv_attrib_op *op = &am->ops[instr];
    if (am->op_ready[instr]) return op;
    xpv_sink *sink = am->owner->sink;
    const xpv_hlo_instr *in = &am->m.instrs[instr];
    op->hlo_op = xpv_sink_intern(sink, in->name.p, in->name.n);
    if (in->op_name.n) op->jax_op = xpv_sink_intern(sink, in->op_name.p, in->op_name.n);
    xpv_hlo_str file, function;
    int32_t line;
    if (xpv_hlo_source(&am->m, in, &file, &line, &function)) {
        char text[1024];
        int k = line > 0 ? snprintf(text, sizeof text, "%.*s:%d",
                                    (int)(file.n < 900 ? file.n : 900), file.p, (int)line)
                         : snprintf(text, sizeof text, "%.*s", (int)(file.n < 900 ? file.n : 900),
                                    file.p);
        op->source = xpv_sink_intern(sink, text, (size_t)k);
    }
    am->op_ready[instr] = 1;
    return op;
}

/* The instruction an interned name names, -1 none; cached by the name, as
 * every kernel of a plain (not command-buffer) launch asks it. */
static int64_t instr_named(xpv_attrib_module *am, uint32_t hlo_op)
{
    uint64_t *v = xpv_hindex_put(&am->instr_of, hlo_op, UINT64_MAX);
    if (*v != UINT64_MAX) return (int64_t)*v - 1;
    *v = 0;
    size_t len;
    const char *s = xpv_sink_string(am->owner->sink, hlo_op, &len);
    if (!s) return -1;
    xpv_hprobe p = xpv_hindex_probe(&am->by_name, xpv_hash64(s, len));
    uint64_t i;
    while (xpv_hindex_next(&am->by_name, &p, &i))
        if (text_is(am->m.instrs[i].name, s, len)) {
            *v = i + 1;
            break;
        }
    return (int64_t)*v - 1;
}

int xpv_attrib_named(xpv_attrib_module *am, uint32_t hlo_op, xpv_attrib_op *op)
{
    int64_t i = instr_named(am, hlo_op);
    if (i < 0) return 0;
    *op = *op_of(am, (uint32_t)i);
    return 1;
}

/* ---- one graph execution ---- */

/* The launcher a kernel name spells, -1 none; cached by interned name. */
static int64_t launcher_of(xpv_attrib_module *am, uint32_t name)
{
    uint64_t *v = xpv_hindex_put(&am->kernel_of, name, UINT64_MAX);
    if (*v != UINT64_MAX) return (int64_t)*v - 1;
    *v = 0;
    size_t len;
    const char *s = xpv_sink_string(am->owner->sink, name, &len);
    if (!s) return -1;
    xpv_hprobe p = xpv_hindex_probe(&am->by_kernel, xpv_hash64(s, len));
    uint64_t l;
    while (xpv_hindex_next(&am->by_kernel, &p, &l))
        if (spells(am->m.instrs[am->launchers[l]].name, s, len)) {
            *v = am->ambiguous[l] ? 0 : l + 1;
            break;
        }
    return (int64_t)*v - 1;
}

/* Marks computation c and those its control flow runs as in the run's
 * scope (depth-capped: nesting is shallow). */
static void scope_down(xpv_attrib_module *am, uint32_t c, int depth)
{
    if (am->scope[c] == am->gen || depth > 64) return;
    am->scope[c] = am->gen;
    for (uint32_t k = am->callee_at[c]; k < am->callee_at[c + 1]; k++)
        scope_down(am, am->callees[k], depth + 1);
}

/* A graph's commands come from one computation, with the bodies and
 * branches of the loops and conditionals it holds when those are commands
 * too. The run's scope is where the kernels that name one instruction
 * alone (no reuse group, no other spelling) lie, what those computations
 * run, and the computations that run them (a graph may hold a loop whose
 * body alone has such kernels): a scan's forward and backward bodies reuse
 * each other's kernels, and a kernel of one must not go to the other. A
 * loop body whose kernel ran once in the graph did not run as a loop
 * there: the graph is the body's own, and what runs the loop is not in it
 * (XLA removes loops of one trip); one whose kernel ran more than once
 * repeats in the graph. */
static void mark_scope(xpv_attrib_module *am, size_t n)
{
    am->scoped = 0;
    for (int up = 0; up < 2; up++) /* callers after every descent, which they must not stop */
        for (size_t i = 0; i < n; i++) {
            int64_t x = am->at[i];
            if (x < 0 || am->group_head[x] != (uint32_t)x || am->group_next[x] != NONE) continue;
            uint32_t c = am->m.instrs[am->launchers[x]].computation;
            am->scoped = 1;
            if (!up) {
                scope_down(am, c, 0);
                continue;
            }
            if (am->looped[c] && am->count[x] == 1) continue; /* the graph is the body's */
            if (am->looped[c]) am->repeats[c] = am->gen;
            for (int depth = 0; (c = am->caller[c]) != NONE && depth < 64; depth++)
                am->scope[c] = am->gen; /* the callers alone, not their other callees */
        }
}

/* Names: at[] gets what each name spells; a kernel whose name no other
 * instruction may run is placed on it (more than once only in a loop). */
static void place_named(xpv_attrib_module *am, const uint32_t *names, size_t n)
{
    uint32_t g = am->gen;
    for (size_t i = 0; i < n; i++) {
        int64_t l = am->at[i] = launcher_of(am, names[i]);
        am->place[i] = -1;
        if (l < 0) continue;
        if (am->named[l] != g) am->named[l] = g, am->count[l] = 0;
        am->count[l]++;
    }
    mark_scope(am, n);
    for (size_t i = 0; i < n; i++) {
        int64_t x = am->at[i];
        if (x < 0) continue;
        uint32_t members = 0, only = NONE; /* without a scope, only is x */
        for (uint32_t l = am->group_head[x]; l != NONE && members < 2; l = am->group_next[l])
            if (xpv_attrib_may_run(am, (uint32_t)x, l)) members++, only = l;
        if (members != 1) continue;
        int in_loop = am->m.instrs[am->launchers[only]].computation != am->entry;
        if (am->count[x] == 1 || in_loop) am->place[i] = only;
        if (am->count[x] == 1) am->used[only] = g;
    }
}

/* 1 when launcher l lies in a loop body, or in what one runs; with
 * stamped, only in a loop body the run's graph repeats (repeats[]): one
 * instruction there runs a kernel once per trip. */
static int in_loop(const xpv_attrib_module *am, uint32_t l, int stamped)
{
    uint32_t c = am->m.instrs[am->launchers[l]].computation;
    for (int depth = 0; c != NONE && depth < 64; c = am->caller[c], depth++)
        if (stamped ? am->repeats[c] == am->gen : am->looped[c]) return 1;
    return 0;
}

static int repeats(const xpv_attrib_module *am, uint32_t l)
{
    return in_loop(am, l, 1);
}

/* The one member of x's group still free, when x's kernel ran exactly once
 * more than has been placed, or when that member's loop body repeats in
 * the graph (it is free on every trip) and no used member may run again
 * (one in a loop with no kernel of its own to show that it repeats): 1
 * with it placed. */
static int place_last(xpv_attrib_module *am, size_t i, size_t n)
{
    uint32_t x = (uint32_t)am->at[i];
    size_t open = 0, others = 0;
    for (size_t j = 0; j < n && open < 2; j++)
        open += am->at[j] == (int64_t)x && am->place[j] < 0;
    int64_t free_member = -1;
    xpv_attrib_bounds bd;
    xpv_attrib_bounds_of(am, i, i + 1, n, &bd);
    for (uint32_t l = am->group_head[x]; l != NONE; l = am->group_next[l]) {
        if (!xpv_attrib_may_run(am, x, l) || !xpv_attrib_allows(am, &bd, l)) continue;
        if (am->used[l] == am->gen && !repeats(am, l)) {
            others += in_loop(am, l, 0);
            continue;
        }
        if (free_member >= 0) return 0;
        free_member = l;
    }
    if (free_member < 0) return 0;
    int again = open != 1 || am->used[free_member] == am->gen;
    if (again && (!repeats(am, (uint32_t)free_member) || others)) return 0;
    am->place[i] = free_member, am->used[free_member] = am->gen;
    return 1;
}

/* When no data link decides, the earliest kernel named after a free
 * instruction goes to that instruction, when the placed events beside it
 * allow it by the schedule: XLA compiles a module's kernels in
 * schedule order and names a shared kernel after the first it compiles, so
 * the first to run is that one unless a data link showed otherwise (seen
 * in jax-maxtext, where the link rules run first for that reason). One
 * placement at a time, so the link rules see each. */
static int place_by_name_order(xpv_attrib_module *am, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t x = am->at[i];
        xpv_attrib_bounds bd;
        if (x < 0 || am->place[i] >= 0 || am->used[x] == am->gen ||
            !xpv_attrib_in_scope(am, (uint32_t)x))
            continue;
        xpv_attrib_bounds_of(am, i, i + 1, n, &bd);
        if (!xpv_attrib_allows(am, &bd, (uint32_t)x)) continue;
        am->place[i] = x, am->used[x] = am->gen;
        am->owner->by_name_order++;
        return 1;
    }
    return 0;
}

/* Kernels left after the other rules, by elimination. */
static int place_by_elimination(xpv_attrib_module *am, size_t n)
{
    int placed = 0;
    for (size_t i = 0; i < n; i++)
        if (am->at[i] >= 0 && am->place[i] < 0) placed += place_last(am, i, n);
    return placed;
}

/* Reused kernels no count places, by the data links of the members of the
 * group that may run them. Returns how many it placed. */
static int place_by_dataflow(xpv_attrib_module *am, size_t n)
{
    int placed = 0;
    for (size_t i = 0; i < n; i++) {
        if (am->at[i] < 0 || am->place[i] >= 0) continue;
        uint32_t x = (uint32_t)am->at[i];
        size_t ncand = 0;
        xpv_attrib_bounds bd;
        xpv_attrib_bounds_of(am, i, i + 1, n, &bd);
        for (uint32_t l = am->group_head[x]; l != NONE; l = am->group_next[l])
            if (xpv_attrib_may_run(am, x, l) && am->used[l] != am->gen &&
                xpv_attrib_allows(am, &bd, l))
                am->cand[ncand++] = l;
        int64_t l = xpv_attrib_nearest_linked(am, am->cand, ncand, i, i + 1, n);
        if (l < 0) continue;
        am->place[i] = l, am->used[l] = am->gen;
        placed++;
    }
    return placed;
}

void xpv_attrib_run(xpv_attrib_module *am, const uint32_t *names, size_t n, xpv_attrib_op *op)
{
    assert(am->state > 0);
    if (!am->runs_ready) {
        prepare_runs(am);
        am->runs_ready = 1;
    }
    if (am->at_cap < n) {
        am->at_cap = n * 2;
        am->at = xpv_xrealloc(am->at, am->at_cap * sizeof *am->at);
        am->place = xpv_xrealloc(am->place, am->at_cap * sizeof *am->place);
        am->cls = xpv_xrealloc(am->cls, am->at_cap * sizeof *am->cls);
    }
    if (++am->gen == 0) { /* the stamps wrapped: forget them all */
        uint32_t *stamps[] = {am->named, am->used};
        for (size_t k = 0; k < 2; k++)
            memset(stamps[k], 0, (am->nlaunchers + 1) * sizeof *stamps[k]);
        memset(am->scope, 0, (am->m.ncomputations + 1) * sizeof *am->scope);
        memset(am->repeats, 0, (am->m.ncomputations + 1) * sizeof *am->repeats);
        am->gen = 1;
    }
    place_named(am, names, n);
    /* each placement may let a neighbour be placed: the rules run again
     * until none places more (the bound only guards against a rule bug);
     * a library call first waits for the kernels beside it, and is placed
     * by its data links alone only after elimination, before name order */
    for (size_t pass = 0; pass < 4 * n + 4; pass++) {
        xpv_attrib_order_pass(am, n);
        if (!xpv_attrib_place_by_schedule(am, names, n) && !place_by_dataflow(am, n) &&
            !xpv_attrib_place_gaps(am, names, n, 1) && !place_by_elimination(am, n) &&
            !xpv_attrib_place_gaps(am, names, n, 0) && !place_by_name_order(am, n))
            break;
    }
    xpv_attrib_op none = {am->owner->unattributed, 0, 0};
    for (size_t i = 0; i < n; i++) {
        op[i] = am->place[i] >= 0 ? *op_of(am, am->launchers[am->place[i]]) : none;
        am->owner->placed += am->place[i] >= 0;
        am->owner->left += am->place[i] < 0;
    }
}
