/*
 * hlo_proto.c — decoding xla.HloProto (see hlo_proto.h).
 *
 * Repeated messages are counted with one wire-level pass over their parent
 * before they are decoded, so every array is allocated once at its size;
 * repeated integers (packed or not) grow by doubling. Everything lives in
 * one arena per module, charged against the caller's budget, and nesting
 * (tuple shapes) is capped, so a hostile proto can neither recurse without
 * end nor take more memory than asked.
 */
#include "hlo_proto.h"
#include "../../common/xpv_lower_bound.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHAPE_DEPTH 64
#define CHUNK_MIN (64 * 1024)

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
} chunk;

typedef struct {
    xpv_hlo_module *m;
    xpv_err *err;
} dec;

/* ---- the arena ---- */

static void *arena_alloc(dec *d, size_t n)
{
    xpv_hlo_module *m = d->m;
    n = (n + 15) & ~(size_t)15;
    if (m->budget && m->bytes + n > m->budget) {
        xpv_err_set(d->err, "decoded structures need more than the %zu-byte budget", m->budget);
        return NULL;
    }
    chunk *c = m->arena;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
        c = xpv_xmalloc(sizeof *c + cap);
        c->next = m->arena, c->used = 0, c->cap = cap;
        m->arena = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    m->bytes += n;
    memset(p, 0, n);
    return p;
}

static void *arena_array(dec *d, size_t n, size_t size)
{
    if (n == 0) return NULL;
    if (n > SIZE_MAX / size) {
        xpv_err_set(d->err, "array of %zu elements is too large", n);
        return NULL;
    }
    return arena_alloc(d, n * size);
}

/* ---- wire helpers ---- */

static int want(const xpv_pb *r, const xpv_pb_field *f, uint32_t wire, const char *msg,
                xpv_err *err)
{
    return f->wire == wire ? 0 : xpv_pb_wrong_wire(r, f, msg, wire, err);
}

static xpv_hlo_str str_of(const xpv_pb_field *f)
{
    xpv_hlo_str s = {(const char *)f->data, (uint32_t)(f->len > UINT32_MAX ? UINT32_MAX : f->len)};
    return s;
}

/* How many times field num occurs in msg (-1 with err when it is damaged). */
static int64_t count_field(xpv_pb msg, uint32_t num, xpv_err *err)
{
    xpv_pb_field f;
    int64_t n = 0;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, err)) == 1)
        n += f.num == num;
    return rc < 0 ? -1 : n;
}

/* Makes room for `more` values (a packed field's count is known: exactly
 * that; values one at a time: doubling). */
static int ints_reserve(dec *d, xpv_hlo_ints *a, size_t more)
{
    if (a->n + more <= a->cap) return 0;
    size_t cap = a->n + more;
    if (more == 1 && cap < (size_t)a->cap * 2) cap = (size_t)a->cap * 2;
    if (cap < 2) cap = 2;
    if (cap > UINT32_MAX) return xpv_err_set(d->err, "repeated field of %zu values", cap);
    int64_t *g = arena_array(d, cap, sizeof *g);
    if (!g) return -1;
    if (a->n) memcpy(g, a->v, a->n * sizeof *g);
    a->v = g, a->cap = (uint32_t)cap;
    return 0;
}

static int ints_push(dec *d, xpv_hlo_ints *a, int64_t v)
{
    if (ints_reserve(d, a, 1) != 0) return -1;
    a->v[a->n++] = v;
    return 0;
}

/* Appends the value(s) of a repeated int64 field, packed or not. */
static int ints_add(dec *d, const xpv_pb *r, const xpv_pb_field *f, xpv_hlo_ints *a)
{
    if (f->wire == XPV_PB_VARINT) return ints_push(d, a, (int64_t)f->v);
    if (f->wire != XPV_PB_LEN) return xpv_pb_wrong_wire(r, f, "repeated int64", 2, d->err);
    size_t count = 0; /* a varint ends at each byte below 0x80 */
    for (size_t i = 0; i < f->len; i++)
        count += f->data[i] < 0x80;
    if (ints_reserve(d, a, count ? count : 1) != 0) return -1;
    xpv_pb p = xpv_pb_sub(r, f);
    while (p.p < p.end) {
        uint64_t v;
        if (xpv_pb_varint(&p, &v, d->err) != 0 || ints_push(d, a, (int64_t)v) != 0) return -1;
    }
    return 0;
}

/* Reads a varint field into *out (wire type checked). */
static int int_field(const xpv_pb *r, const xpv_pb_field *f, const char *msg, int64_t *out,
                     xpv_err *err)
{
    if (want(r, f, XPV_PB_VARINT, msg, err) != 0) return -1;
    *out = (int64_t)f->v;
    return 0;
}

/* ---- shapes, metadata, dimension numbers ---- */

static int read_shape(dec *d, xpv_pb msg, xpv_hlo_shape *s, int depth)
{
    if (depth > MAX_SHAPE_DEPTH)
        return xpv_pb_fail(&msg, msg.p, d->err, "shape nested deeper than %d", MAX_SHAPE_DEPTH);
    int64_t nt = count_field(msg, 4, d->err);
    if (nt < 0) return -1;
    if (nt && !(s->tuple = arena_array(d, (size_t)nt, sizeof *s->tuple))) return -1;
    xpv_hlo_ints dims = {0};
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        int64_t v;
        if (f.num == 2) {
            if (int_field(&msg, &f, "ShapeProto", &v, d->err) != 0) return -1;
            s->element_type = (int32_t)v;
        } else if (f.num == 3) {
            if (ints_add(d, &msg, &f, &dims) != 0) return -1;
        } else if (f.num == 4) {
            if (want(&msg, &f, XPV_PB_LEN, "ShapeProto", d->err) != 0 ||
                read_shape(d, xpv_pb_sub(&msg, &f), &s->tuple[s->ntuple++], depth + 1) != 0)
                return -1;
        }
    }
    s->dims = dims.v, s->ndims = dims.n;
    return rc < 0 ? -1 : 0;
}

static int read_metadata(dec *d, xpv_pb msg, xpv_hlo_instr *in)
{
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        if (f.num >= 1 && f.num <= 3 && want(&msg, &f, XPV_PB_LEN, "OpMetadata", d->err) != 0)
            return -1;
        if (f.num == 1) in->op_type = str_of(&f);
        if (f.num == 2) in->op_name = str_of(&f);
        if (f.num == 3) in->source_file = str_of(&f);
        if (f.num == 4) {
            int64_t v;
            if (int_field(&msg, &f, "OpMetadata", &v, d->err) != 0) return -1;
            in->source_line = (int32_t)v;
        }
        if (f.num == 15 && int_field(&msg, &f, "OpMetadata", &in->stack_frame_id, d->err) != 0)
            return -1;
    }
    return rc < 0 ? -1 : 0;
}

/* The instruction's dot/convolution fields, made on first use. */
static xpv_hlo_dims *dims_of(dec *d, xpv_hlo_instr *in)
{
    if (!in->dims && (in->dims = arena_alloc(d, sizeof *in->dims)))
        in->dims->feature_group_count = in->dims->batch_group_count = 1;
    return in->dims;
}

static int read_dot_dims(dec *d, xpv_pb msg, xpv_hlo_instr *in)
{
    xpv_hlo_dims *dd = dims_of(d, in);
    if (!dd) return -1;
    xpv_hlo_ints *to[5] = {NULL, &dd->lhs_contracting, &dd->rhs_contracting, &dd->lhs_batch,
                           &dd->rhs_batch};
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1)
        if (f.num >= 1 && f.num <= 4 && ints_add(d, &msg, &f, to[f.num]) != 0) return -1;
    return rc < 0 ? -1 : 0;
}

static int read_conv_dims(dec *d, xpv_pb msg, xpv_hlo_instr *in)
{
    xpv_hlo_dims *dd = dims_of(d, in);
    if (!dd) return -1;
    dd->has_conv_dims = 1;
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        if (f.num == 3 && int_field(&msg, &f, "ConvolutionDimensionNumbers",
                                    &dd->kernel_input_feature_dim, d->err) != 0)
            return -1;
        if (f.num == 6 && ints_add(d, &msg, &f, &dd->kernel_spatial_dims) != 0) return -1;
    }
    return rc < 0 ? -1 : 0;
}

/* ---- instructions, computations, the module ---- */

static int instr_sub(dec *d, const xpv_pb *msg, const xpv_pb_field *f, xpv_hlo_instr *in)
{
    if (want(msg, f, XPV_PB_LEN, "HloInstructionProto", d->err) != 0) return -1;
    xpv_pb sub = xpv_pb_sub(msg, f);
    switch (f->num) {
    case 3:
        return read_shape(d, sub, &in->shape, 0);
    case 7:
        return read_metadata(d, sub, in);
    case 16:
        return read_conv_dims(d, sub, in);
    case 30:
        return read_dot_dims(d, sub, in);
    case 1:
        in->name = str_of(f);
        return 0;
    case 2:
        in->opcode = str_of(f);
        return 0;
    case 28:
        in->custom_call_target = str_of(f);
        return 0;
    case 43:
        in->backend_config = str_of(f);
        return 0;
    }
    return 0;
}

static int read_instr(dec *d, xpv_pb msg, xpv_hlo_instr *in)
{
    in->raw.p = (const char *)msg.p;
    in->raw.n = (uint32_t)(msg.end - msg.p > UINT32_MAX ? UINT32_MAX : msg.end - msg.p);
    in->id = -1;
    in->parameter_number = -1;
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        int r = 0;
        switch (f.num) {
        case 1:
        case 2:
        case 3:
        case 7:
        case 16:
        case 28:
        case 30:
        case 43:
            r = instr_sub(d, &msg, &f, in);
            break;
        case 9:
            r = int_field(&msg, &f, "HloInstructionProto", &in->parameter_number, d->err);
            break;
        case 35:
            r = int_field(&msg, &f, "HloInstructionProto", &in->id, d->err);
            break;
        case 36:
            r = ints_add(d, &msg, &f, &in->operands);
            break;
        case 38:
            r = ints_add(d, &msg, &f, &in->called);
            break;
        case 50:
        case 58:
            r = dims_of(d, in) ? 0 : -1;
            if (r == 0)
                r = int_field(&msg, &f, "HloInstructionProto",
                              f.num == 50 ? &in->dims->feature_group_count
                                          : &in->dims->batch_group_count,
                              d->err);
            break;
        }
        if (r != 0) return -1;
    }
    if (in->dims && in->dims->feature_group_count <= 0) in->dims->feature_group_count = 1;
    if (in->dims && in->dims->batch_group_count <= 0) in->dims->batch_group_count = 1;
    return rc < 0 ? -1 : 0;
}

static int read_computation(dec *d, xpv_pb msg, uint32_t index)
{
    xpv_hlo_module *m = d->m;
    xpv_hlo_computation *c = &m->computations[index];
    c->first = m->ninstrs;
    c->id = c->root_id = -1;
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        if (f.num == 1) {
            if (want(&msg, &f, XPV_PB_LEN, "HloComputationProto", d->err) != 0) return -1;
            c->name = str_of(&f);
        } else if (f.num == 2) {
            if (want(&msg, &f, XPV_PB_LEN, "HloComputationProto", d->err) != 0) return -1;
            xpv_hlo_instr *in = &m->instrs[m->ninstrs++];
            in->computation = index;
            if (read_instr(d, xpv_pb_sub(&msg, &f), in) != 0) return -1;
        } else if (f.num == 5 || f.num == 6) {
            if (int_field(&msg, &f, "HloComputationProto", f.num == 5 ? &c->id : &c->root_id,
                          d->err) != 0)
                return -1;
        }
    }
    c->n = m->ninstrs - c->first;
    return rc < 0 ? -1 : 0;
}

/* Counts the computations and, over all of them, the instructions. */
static int count_module(dec *d, xpv_pb msg, int64_t *ncomp, int64_t *ninstr)
{
    xpv_pb_field f;
    int rc;
    *ncomp = *ninstr = 0;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        if (f.num != 3) continue;
        if (want(&msg, &f, XPV_PB_LEN, "HloModuleProto", d->err) != 0) return -1;
        int64_t n = count_field(xpv_pb_sub(&msg, &f), 2, d->err);
        if (n < 0) return -1;
        *ninstr += n, ++*ncomp;
    }
    return rc < 0 ? -1 : 0;
}

static int read_module(dec *d, xpv_pb msg)
{
    xpv_hlo_module *m = d->m;
    int64_t nc, ni;
    if (count_module(d, msg, &nc, &ni) != 0) return -1;
    if ((nc && !(m->computations = arena_array(d, (size_t)nc, sizeof *m->computations))) ||
        (ni && !(m->instrs = arena_array(d, (size_t)ni, sizeof *m->instrs))))
        return -1;
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        int r = 0;
        if (f.num == 1 || f.num == 2) {
            r = want(&msg, &f, XPV_PB_LEN, "HloModuleProto", d->err);
            if (f.num == 1) m->name = str_of(&f);
            if (f.num == 2) m->entry_computation_name = str_of(&f);
        } else if (f.num == 3) {
            r = read_computation(d, xpv_pb_sub(&msg, &f), m->ncomputations++);
        } else if (f.num == 5 || f.num == 6) {
            r = int_field(&msg, &f, "HloModuleProto",
                          f.num == 5 ? &m->id : &m->entry_computation_id, d->err);
        } else if (f.num == 7 || f.num == 17) {
            r = want(&msg, &f, XPV_PB_LEN, "HloModuleProto", d->err);
            *(f.num == 7 ? &m->schedule : &m->stack_frame_index) = str_of(&f);
        }
        if (r != 0) return -1;
    }
    return rc < 0 ? -1 : 0;
}

/* ---- buffer assignment ---- */

static int read_location(dec *d, xpv_pb msg, xpv_hlo_logical_buffer *b)
{
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        if (f.num == 4 && int_field(&msg, &f, "Location", &b->instruction_id, d->err) != 0)
            return -1;
        if (f.num == 3 && ints_add(d, &msg, &f, &b->shape_index) != 0) return -1;
    }
    return rc < 0 ? -1 : 0;
}

static int read_buffer(dec *d, xpv_pb msg, xpv_hlo_logical_buffer *b)
{
    b->id = b->instruction_id = -1;
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        int r = 0;
        if (f.num == 1) r = int_field(&msg, &f, "LogicalBufferProto", &b->id, d->err);
        if (f.num == 2) r = int_field(&msg, &f, "LogicalBufferProto", &b->size, d->err);
        if (f.num == 4) r = int_field(&msg, &f, "LogicalBufferProto", &b->color, d->err);
        if (f.num == 3) {
            r = want(&msg, &f, XPV_PB_LEN, "LogicalBufferProto", d->err);
            if (r == 0) r = read_location(d, xpv_pb_sub(&msg, &f), b);
        }
        if (r != 0) return -1;
    }
    return rc < 0 ? -1 : 0;
}

static int read_assigned(dec *d, xpv_pb msg, xpv_hlo_assigned *a)
{
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        int64_t *to = f.num == 1   ? &a->logical_buffer_id
                      : f.num == 2 ? &a->offset
                      : f.num == 3 ? &a->size
                                   : NULL;
        if (to && int_field(&msg, &f, "Assigned", to, d->err) != 0) return -1;
    }
    return rc < 0 ? -1 : 0;
}

static int alloc_field(dec *d, const xpv_pb *msg, const xpv_pb_field *f, xpv_hlo_allocation *a)
{
    const char *M = "BufferAllocationProto";
    int64_t v = 0;
    switch (f->num) {
    case 9:
        if (want(msg, f, XPV_PB_LEN, M, d->err) != 0) return -1;
        return read_assigned(d, xpv_pb_sub(msg, f), &a->assigned[a->nassigned++]);
    case 1:
    case 2:
    case 3:
    case 5:
    case 6:
    case 7:
    case 8:
    case 11:
    case 12:
        if (int_field(msg, f, M, &v, d->err) != 0) return -1;
        break;
    default:
        return 0;
    }
    switch (f->num) {
    case 1:
        a->index = v;
        break;
    case 2:
        a->size = v;
        break;
    case 3:
        a->is_thread_local = v != 0;
        break;
    case 5:
        a->is_entry_computation_parameter = v != 0;
        break;
    case 6:
        a->parameter_number = v;
        break;
    case 7:
        a->maybe_live_out = v != 0;
        break;
    case 8:
        a->color = v;
        break;
    case 11:
        a->is_tuple = v != 0;
        break;
    case 12:
        a->is_constant = v != 0;
        break;
    }
    return 0;
}

static int read_allocation(dec *d, xpv_pb msg, xpv_hlo_allocation *a)
{
    int64_t n = count_field(msg, 9, d->err);
    if (n < 0 || (n && !(a->assigned = arena_array(d, (size_t)n, sizeof *a->assigned)))) return -1;
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1)
        if (alloc_field(d, &msg, &f, a) != 0) return -1;
    return rc < 0 ? -1 : 0;
}

static int read_heap_event(dec *d, xpv_pb msg, xpv_hlo_heap_event *e)
{
    xpv_pb_field f;
    int rc;
    int64_t kind = 0;
    e->share_with_canonical_id = -1;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        int r = 0;
        if (f.num == 1) r = int_field(&msg, &f, "HeapSimulatorTrace.Event", &kind, d->err);
        if (f.num == 2) r = int_field(&msg, &f, "HeapSimulatorTrace.Event", &e->buffer_id, d->err);
        if (f.num == 5)
            r = int_field(&msg, &f, "HeapSimulatorTrace.Event", &e->share_with_canonical_id,
                          d->err);
        if (f.num == 3 || f.num == 4) {
            r = want(&msg, &f, XPV_PB_LEN, "HeapSimulatorTrace.Event", d->err);
            *(f.num == 3 ? &e->computation_name : &e->instruction_name) = str_of(&f);
        }
        if (r != 0) return -1;
    }
    e->kind = (int)kind;
    return rc < 0 ? -1 : 0;
}

static int read_trace(dec *d, xpv_pb msg, xpv_hlo_heap_trace *t)
{
    int64_t n = count_field(msg, 1, d->err);
    if (n < 0 || (n && !(t->events = arena_array(d, (size_t)n, sizeof *t->events)))) return -1;
    t->buffer_allocation_index = -1;
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        int64_t v = 0;
        int r = 0;
        if (f.num == 1) {
            r = want(&msg, &f, XPV_PB_LEN, "HeapSimulatorTrace", d->err);
            if (r == 0) r = read_heap_event(d, xpv_pb_sub(&msg, &f), &t->events[t->nevents++]);
        } else if (f.num == 2 || f.num == 3) {
            r = int_field(&msg, &f, "HeapSimulatorTrace", &v, d->err);
            if (f.num == 2) t->whole_module_simulation = v != 0;
            if (f.num == 3) t->buffer_allocation_index = v;
        }
        if (r != 0) return -1;
    }
    return rc < 0 ? -1 : 0;
}

static int read_assignment(dec *d, xpv_pb msg)
{
    xpv_hlo_module *m = d->m;
    int64_t nb = count_field(msg, 1, d->err), na = count_field(msg, 3, d->err),
            nt = count_field(msg, 4, d->err);
    if (nb < 0 || na < 0 || nt < 0) return -1;
    if ((nb && !(m->buffers = arena_array(d, (size_t)nb, sizeof *m->buffers))) ||
        (na && !(m->allocations = arena_array(d, (size_t)na, sizeof *m->allocations))) ||
        (nt && !(m->traces = arena_array(d, (size_t)nt, sizeof *m->traces))))
        return -1;
    m->has_buffer_assignment = 1;
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&msg, &f, d->err)) == 1) {
        if (f.num != 1 && f.num != 3 && f.num != 4) continue;
        if (want(&msg, &f, XPV_PB_LEN, "BufferAssignmentProto", d->err) != 0) return -1;
        xpv_pb sub = xpv_pb_sub(&msg, &f);
        int r = f.num == 1   ? read_buffer(d, sub, &m->buffers[m->nbuffers++])
                : f.num == 3 ? read_allocation(d, sub, &m->allocations[m->nallocations++])
                             : read_trace(d, sub, &m->traces[m->ntraces++]);
        if (r != 0) return -1;
    }
    return rc < 0 ? -1 : 0;
}

/* ---- lookups ---- */

static int cmp_id_index(const void *a, const void *b)
{
    const xpv_hlo_id_index *x = a, *y = b;
    return x->id != y->id ? (x->id < y->id ? -1 : 1)
                          : (x->index < y->index ? -1 : x->index > y->index);
}

static int cmp_buffer_id(const void *a, const void *b)
{
    int64_t x = ((const xpv_hlo_logical_buffer *)a)->id,
            y = ((const xpv_hlo_logical_buffer *)b)->id;
    return x < y ? -1 : x > y;
}

/* The ids and indexes of n items, sorted by the ids id_of gives (ties by
 * index). */
static xpv_hlo_id_index *sorted_by_id(const xpv_hlo_module *m, uint32_t n,
                                      int64_t (*id_of)(const xpv_hlo_module *, uint32_t))
{
    xpv_hlo_id_index *t = xpv_xmalloc(n * sizeof *t);
    for (uint32_t i = 0; i < n; i++)
        t[i].id = id_of(m, i), t[i].index = i;
    qsort(t, n, sizeof *t, cmp_id_index);
    return t;
}

static int64_t instr_id(const xpv_hlo_module *m, uint32_t i)
{
    return m->instrs[i].id;
}

static int64_t computation_id(const xpv_hlo_module *m, uint32_t i)
{
    return m->computations[i].id;
}

static void build_lookups(xpv_hlo_module *m)
{
    if (m->ninstrs) m->by_id = sorted_by_id(m, m->ninstrs, instr_id);
    if (m->ncomputations) m->comp_by_id = sorted_by_id(m, m->ncomputations, computation_id);
    if (m->nbuffers) qsort(m->buffers, m->nbuffers, sizeof *m->buffers, cmp_buffer_id);
}

/* 1 with *index of the item with this id in table v of n, 0 when none. */
static int find_id(const xpv_hlo_id_index *v, size_t n, int64_t id, uint32_t *index)
{
    size_t i = xpv_lower_bound_i64(v, n, sizeof *v, offsetof(xpv_hlo_id_index, id), id);
    if (i == n || v[i].id != id) return 0;
    *index = v[i].index;
    return 1;
}

const xpv_hlo_instr *xpv_hlo_instr_by_id(const xpv_hlo_module *m, int64_t id)
{
    uint32_t i;
    return find_id(m->by_id, m->by_id ? m->ninstrs : 0, id, &i) ? &m->instrs[i] : NULL;
}

int xpv_hlo_computation_by_id(const xpv_hlo_module *m, int64_t id, uint32_t *index)
{
    return find_id(m->comp_by_id, m->comp_by_id ? m->ncomputations : 0, id, index);
}

const xpv_hlo_logical_buffer *xpv_hlo_buffer_by_id(const xpv_hlo_module *m, int64_t id)
{
    size_t i = xpv_lower_bound_i64(m->buffers, m->nbuffers, sizeof *m->buffers,
                                   offsetof(xpv_hlo_logical_buffer, id), id);
    return i < m->nbuffers && m->buffers[i].id == id ? &m->buffers[i] : NULL;
}

/* ---- the entry point ---- */

void xpv_hlo_module_free(xpv_hlo_module *m)
{
    for (chunk *c = m->arena, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(m->by_id);
    free(m->comp_by_id);
    xpv_hlo_frames_free(m->frames);
    memset(m, 0, sizeof *m);
}

int xpv_hlo_decode(const uint8_t *base, const uint8_t *data, size_t len, size_t budget,
                   xpv_hlo_module *m, xpv_err *err)
{
    memset(m, 0, sizeof *m);
    m->id = m->entry_computation_id = -1;
    m->budget = budget;
    dec d = {m, err};
    xpv_pb msg = {base, data, data + len};
    xpv_pb_field f;
    int rc, seen_module = 0, seen_assignment = 0;
    while ((rc = xpv_pb_next(&msg, &f, err)) == 1) {
        if (f.num != 1 && f.num != 3) continue;
        if (want(&msg, &f, XPV_PB_LEN, "HloProto", err) != 0) break;
        /* The first of each is the one: a second would be sized by its own
         * counts while appending after the first's (found by fuzzing). */
        if (f.num == 1 && seen_module++) continue;
        if (f.num == 3 && seen_assignment++) continue;
        if ((f.num == 1 ? read_module(&d, xpv_pb_sub(&msg, &f))
                        : read_assignment(&d, xpv_pb_sub(&msg, &f))) != 0)
            break;
    }
    if (rc != 0 || !seen_module) {
        if (rc == 0) xpv_err_set(err, "HloProto has no hlo_module");
        xpv_hlo_module_free(m);
        return -1;
    }
    build_lookups(m);
    xpv_hlo_frames_build(m);
    return 0;
}
