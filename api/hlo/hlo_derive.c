/*
 * hlo_derive.c — FLOPs and bytes derived from HLO shapes (see
 * hlo_derive.h).
 *
 * A profile's modules are decoded only when one of its ops is looked up,
 * and each once: the instructions of a decoded module are indexed by name
 * for the lookups that follow. The caller (hlo_ops.c) keeps what it
 * derived in the HLO cache, so a profile's modules are decoded once per
 * indexing, not per request.
 */
#include "hlo_derive.h"
#include "../api_util.h"
#include "hlo_file.h"
#include "../../common/xpv_lower_bound.h"
#include "../../store/strings.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FUSION_DEPTH 64

static int str_is(const xpv_hlo_str *s, const char *word)
{
    size_t n = strlen(word);
    return s->p && s->n == n && memcmp(s->p, word, n) == 0;
}

static int is_gemm_call(const xpv_hlo_instr *in)
{
    return str_is(&in->opcode, "custom-call") &&
           (str_is(&in->custom_call_target, "__cublas$gemm") ||
            str_is(&in->custom_call_target, "__cublas$lt$matmul") ||
            str_is(&in->custom_call_target, "__cublas$lt$matmul$f8"));
}

enum { CONV_NONE, CONV_FORWARD, CONV_BACKWARD_INPUT, CONV_BACKWARD_FILTER };

static int conv_call_kind(const xpv_hlo_instr *in)
{
    if (!str_is(&in->opcode, "custom-call")) return CONV_NONE;
    const xpv_hlo_str *t = &in->custom_call_target;
    if (str_is(t, "__cudnn$convForward") || str_is(t, "__cudnn$convBiasActivationForward"))
        return CONV_FORWARD;
    if (str_is(t, "__cudnn$convBackwardInput")) return CONV_BACKWARD_INPUT;
    if (str_is(t, "__cudnn$convBackwardFilter")) return CONV_BACKWARD_FILTER;
    return CONV_NONE;
}

/* A library call's result: the first element of its tuple (the others are
 * workspace), or the shape itself when it is an array. */
static const xpv_hlo_shape *call_result(const xpv_hlo_instr *in)
{
    return in->shape.ntuple ? &in->shape.tuple[0] : &in->shape;
}

static const xpv_hlo_shape *operand_shape(const xpv_hlo_module *m, const xpv_hlo_instr *in,
                                          uint32_t k)
{
    const xpv_hlo_instr *o = k < in->operands.n ? xpv_hlo_instr_by_id(m, in->operands.v[k]) : NULL;
    return o ? &o->shape : NULL;
}

/* gemm_backend_config.dot_dimension_numbers.lhs_contracting_dimensions of
 * the backend_config JSON (proto3 JSON writes int64 as strings). */
static int gemm_contracting(const xpv_hlo_instr *in, xpv_hlo_ints *out, int64_t *buf, size_t cap)
{
    if (!in->backend_config.p || !in->backend_config.n) return 0;
    cJSON *root = cJSON_ParseWithLength(in->backend_config.p, in->backend_config.n);
    cJSON *dims = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "gemm_backend_config"), "dot_dimension_numbers"),
        "lhs_contracting_dimensions");
    int ok = cJSON_IsArray(dims) && (size_t)cJSON_GetArraySize(dims) <= cap;
    out->v = buf, out->n = 0, out->cap = (uint32_t)cap;
    const cJSON *d, *walk = ok ? dims : NULL;
    cJSON_ArrayForEach(d, walk)
    {
        char *end = NULL;
        double v = cJSON_IsNumber(d)   ? d->valuedouble
                   : cJSON_IsString(d) ? strtod(d->valuestring, &end)
                                       : -1;
        if (end && (*end || end == d->valuestring)) ok = 0;
        if (!(v >= 0 && v <= 1e6) || v != (double)(int64_t)v) ok = 0; /* a dimension index */
        if (ok) buf[out->n++] = (int64_t)v;
    }
    cJSON_Delete(root);
    return ok;
}

int xpv_hlo_gemm_flops(const xpv_hlo_module *m, const xpv_hlo_instr *in, long double *flops)
{
    int64_t buf[16];
    xpv_hlo_ints contracting;
    const xpv_hlo_shape *lhs = operand_shape(m, in, 0);
    if (!is_gemm_call(in) || !lhs || !gemm_contracting(in, &contracting, buf, 16)) return 0;
    return xpv_hlo_dot_flops(call_result(in), lhs, &contracting, flops);
}

/* A library convolution: the forward output and the kernel are where its
 * kind keeps them (the gradients swap result and operands). */
static int conv_call_flops(const xpv_hlo_module *m, const xpv_hlo_instr *in, long double *flops)
{
    int kind = conv_call_kind(in);
    const xpv_hlo_shape *out = NULL, *kernel = NULL;
    if (kind == CONV_FORWARD) out = call_result(in), kernel = operand_shape(m, in, 1);
    if (kind == CONV_BACKWARD_INPUT)
        out = operand_shape(m, in, 0), kernel = operand_shape(m, in, 1);
    if (kind == CONV_BACKWARD_FILTER) out = operand_shape(m, in, 1), kernel = call_result(in);
    return out && kernel && xpv_hlo_conv_flops(out, kernel, in->dims, flops);
}

static int direct_flops(const xpv_hlo_module *m, const xpv_hlo_instr *in, long double *flops)
{
    return xpv_hlo_instr_flops(m, in, flops) || xpv_hlo_gemm_flops(m, in, flops) ||
           conv_call_flops(m, in, flops);
}

/* Sums the FLOPs of the dots, convolutions and library calls under the
 * computations `in` calls; on_path marks the computations being walked.
 * Returns 1 when any was found, 0 when none, -1 on a cycle or too deep. */
static int fusion_flops(const xpv_hlo_module *m, const xpv_hlo_instr *in, uint8_t *on_path,
                        int depth, long double *sum)
{
    int found = 0;
    if (depth > MAX_FUSION_DEPTH) return -1;
    for (uint32_t k = 0; k < in->called.n; k++) {
        uint32_t c;
        if (!xpv_hlo_computation_by_id(m, in->called.v[k], &c)) continue;
        if (on_path[c]) return -1;
        on_path[c] = 1;
        const xpv_hlo_computation *comp = &m->computations[c];
        for (uint32_t i = comp->first; i < comp->first + comp->n; i++) {
            const xpv_hlo_instr *x = &m->instrs[i];
            long double f = 0; /* a nested fusion adds into it */
            int rc = str_is(&x->opcode, "fusion") ? fusion_flops(m, x, on_path, depth + 1, &f)
                                                  : direct_flops(m, x, &f);
            if (rc < 0) return -1;
            if (rc) *sum += f, found = 1;
        }
        on_path[c] = 0;
    }
    return found;
}

/* Operands plus result (a library call's first result element). */
static int io_bytes(const xpv_hlo_module *m, const xpv_hlo_instr *in, long double *bytes)
{
    int call = str_is(&in->opcode, "custom-call");
    long double sum, b;
    if (!xpv_hlo_shape_bytes(call ? call_result(in) : &in->shape, &sum)) return 0;
    for (uint32_t k = 0; k < in->operands.n; k++) {
        const xpv_hlo_shape *s = operand_shape(m, in, k);
        if (!s || !xpv_hlo_shape_bytes(s, &b)) return 0;
        sum += b;
    }
    *bytes = sum;
    return 1;
}

int xpv_hlo_instr_cost(const xpv_hlo_module *m, const xpv_hlo_instr *in, xpv_hlo_cost *c)
{
    memset(c, 0, sizeof *c);
    if (str_is(&in->opcode, "fusion")) {
        uint8_t *on_path = xpv_xcalloc(m->ncomputations + 1, 1);
        c->has_flops = fusion_flops(m, in, on_path, 0, &c->flops) == 1;
        free(on_path);
    } else {
        c->has_flops = direct_flops(m, in, &c->flops);
    }
    if (!c->has_flops) c->flops = 0;
    if (c->has_flops) c->has_bytes = io_bytes(m, in, &c->bytes);
    return c->has_flops;
}

/* ---- a profile's modules ---- */

typedef struct {
    const char *p; /* an instruction's name (not NUL-terminated) */
    uint32_t n, instr;
} name_ref;

typedef struct {
    int state; /* 0 not decoded, 1 decoded, -1 failed */
    xpv_hlo_module m;
    name_ref *by_name; /* the instructions, sorted by name */
    uint8_t *fused;    /* by computation: called by a fusion */
} module_slot;

struct xpv_hlo_derived {
    xpv_hlo_file f;
    module_slot *slots; /* one per blob of f */
};

xpv_hlo_derived *xpv_hlo_derived_open(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    xpv_hlo_derived *d = xpv_xcalloc(1, sizeof *d);
    if (xpv_hlo_file_open(db, profile_id, &d->f, err) < 0) {
        free(d);
        return NULL;
    }
    d->slots = xpv_xcalloc(d->f.n + 1, sizeof *d->slots);
    return d;
}

static int cmp_name(const char *a, size_t an, const char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : an < bn ? -1 : an > bn;
}

static int by_name(const void *x, const void *y)
{
    const name_ref *a = x, *b = y;
    return cmp_name(a->p, a->n, b->p, b->n);
}

/* Decodes blob i once and indexes its instructions by name. */
static int slot_ready(xpv_hlo_derived *d, size_t i, xpv_err *err)
{
    module_slot *s = &d->slots[i];
    if (s->state < 0)
        return xpv_err_set(err, "module %.*s cannot be decoded", (int)d->f.blobs[i].name.n,
                           d->f.blobs[i].name.p ? d->f.blobs[i].name.p : "");
    if (s->state) return 1;
    if (xpv_hlo_file_decode(&d->f, &d->f.blobs[i], &s->m, err) != 0) return s->state = -1;
    s->by_name = xpv_xmalloc((s->m.ninstrs + 1) * sizeof *s->by_name);
    for (uint32_t k = 0; k < s->m.ninstrs; k++) {
        const xpv_hlo_str *nm = &s->m.instrs[k].name;
        s->by_name[k] = (name_ref){nm->p ? nm->p : "", nm->n, k};
    }
    qsort(s->by_name, s->m.ninstrs, sizeof *s->by_name, by_name);
    s->fused = xpv_xcalloc(s->m.ncomputations + 1, 1);
    for (uint32_t k = 0; k < s->m.ninstrs; k++) {
        const xpv_hlo_instr *in = &s->m.instrs[k];
        uint32_t c;
        for (uint32_t j = 0; str_is(&in->opcode, "fusion") && j < in->called.n; j++)
            if (xpv_hlo_computation_by_id(&s->m, in->called.v[j], &c)) s->fused[c] = 1;
    }
    return s->state = 1;
}

/* The named instruction of that program's module: 1 with its slot and
 * index, 0 when there is none, -1 with err. */
static int find_instr(xpv_hlo_derived *d, uint64_t program, const char *name, size_t len,
                      const module_slot **slot, uint32_t *instr, xpv_err *err)
{
    for (size_t i = 0; i < d->f.n; i++) {
        if (d->f.blobs[i].program_id != program) continue;
        if (slot_ready(d, i, err) < 0) return -1;
        const module_slot *s = &d->slots[i];
        name_ref key = {name, (uint32_t)len, 0};
        const name_ref *r = xpv_sorted_find(&key, s->by_name, s->m.ninstrs, sizeof key, by_name);
        if (!r) return 0;
        *slot = s, *instr = r->instr;
        return 1;
    }
    return 0;
}

int xpv_hlo_derived_cost(xpv_hlo_derived *d, uint64_t program, const char *name, size_t len,
                         xpv_hlo_cost *c, xpv_err *err)
{
    memset(c, 0, sizeof *c);
    const module_slot *s;
    uint32_t k;
    int rc = find_instr(d, program, name, len, &s, &k, err);
    if (rc <= 0) return rc;
    /* an instruction a fusion holds counts in the fusion, not twice */
    if (s->fused[s->m.instrs[k].computation]) return 0;
    return xpv_hlo_instr_cost(&s->m, &s->m.instrs[k], c);
}

int xpv_hlo_derived_opcode(xpv_hlo_derived *d, uint64_t program, const char *name, size_t len,
                           xpv_hlo_str *opcode, xpv_err *err)
{
    const module_slot *s;
    uint32_t k;
    int rc = find_instr(d, program, name, len, &s, &k, err);
    if (rc <= 0) return rc;
    *opcode = s->m.instrs[k].opcode;
    return opcode->n > 0;
}

/* The names of the ops of d's modules whose FLOPs and bytes derive (not
 * inside a fusion), sorted; *n their count. NULL with err on failure. */
static name_ref *derivable_names(xpv_hlo_derived *d, size_t *n, xpv_err *err)
{
    name_ref *names = NULL;
    size_t cap = 0;
    *n = 0;
    for (size_t i = 0; i < d->f.n; i++) {
        if (slot_ready(d, i, err) < 0) return free(names), NULL;
        const module_slot *s = &d->slots[i];
        for (uint32_t k = 0; k < s->m.ninstrs; k++) {
            const xpv_hlo_instr *in = &s->m.instrs[k];
            xpv_hlo_cost c;
            if (s->fused[in->computation] || !xpv_hlo_instr_cost(&s->m, in, &c) || !c.has_bytes)
                continue;
            if (*n == cap) names = xpv_xrealloc(names, (cap = cap * 2 + 16) * sizeof *names);
            names[(*n)++] = (name_ref){in->name.p ? in->name.p : "", in->name.n, k};
        }
    }
    qsort(names, *n, sizeof *names, by_name);
    return names ? names : xpv_xmalloc(1);
}

int xpv_hlo_derived_any(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    xpv_hlo_derived *d = xpv_hlo_derived_open(db, profile_id, err);
    size_t n = 0;
    name_ref *names = d ? derivable_names(d, &n, err) : NULL;
    xpv_store_cursor c = {db, NULL};
    int found = names ? 0 : -1, rc = 0;
    if (n && xpv_store_strings_open_all(&c, db, profile_id, err) != 0) found = -1;
    int64_t sid;
    xpv_store_text v;
    while (c.st && !found && (rc = xpv_store_strings_next(&c, &sid, &v, err)) == 1) {
        name_ref key = {v.s, (uint32_t)v.n, 0};
        found = key.p && xpv_sorted_find(&key, names, n, sizeof key, by_name) != NULL;
    }
    if (rc < 0) found = -1;
    xpv_store_cursor_close(&c);
    free(names);
    xpv_hlo_derived_free(d);
    return found;
}

int xpv_hlo_derived_unchanged(const xpv_hlo_derived *d, xpv_err *err)
{
    return xpv_hlo_file_unchanged(&d->f, err);
}

void xpv_hlo_derived_free(xpv_hlo_derived *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->f.n; i++) {
        if (d->slots[i].state == 1) xpv_hlo_module_free(&d->slots[i].m);
        free(d->slots[i].by_name);
        free(d->slots[i].fused);
    }
    free(d->slots);
    xpv_hlo_file_close(&d->f);
    free(d);
}
