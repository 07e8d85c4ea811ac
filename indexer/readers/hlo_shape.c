/*
 * hlo_shape.c — what a decoded HLO shape says: its element type's name,
 * its HLO text, a sub-shape by shape index, and the FLOPs of dots and
 * convolutions derived from shapes (see hlo_proto.h for the formulas).
 *
 * Invariant: a number is derived only from dimensions the proto states;
 * a missing operand or dimension makes the answer unknown, never 0.
 */
#include "hlo_proto.h"

#include <string.h>

const char *xpv_hlo_type_name(int32_t t)
{
    /* xla.PrimitiveType values (xla/xla_data.proto) */
    static const char *const names[] = {
        [1] = "pred",
        [2] = "s8",
        [3] = "s16",
        [4] = "s32",
        [5] = "s64",
        [6] = "u8",
        [7] = "u16",
        [8] = "u32",
        [9] = "u64",
        [10] = "f16",
        [11] = "f32",
        [12] = "f64",
        [13] = "tuple",
        [14] = "opaque",
        [15] = "c64",
        [16] = "bf16",
        [17] = "token",
        [18] = "c128",
        [19] = "f8e5m2",
        [20] = "f8e4m3fn",
        [21] = "s4",
        [22] = "u4",
        [23] = "f8e4m3b11fnuz",
        [24] = "f8e5m2fnuz",
        [25] = "f8e4m3fnuz",
        [26] = "s2",
        [27] = "u2",
        [28] = "f8e4m3",
        [29] = "f8e3m4",
        [30] = "s1",
        [31] = "u1",
        [32] = "f4e2m1fn",
        [33] = "f8e8m0fnu",
        [34] = "buffer",
    };
    if (t <= 0 || (size_t)t >= sizeof names / sizeof names[0]) return NULL;
    return names[t];
}

void xpv_hlo_put_shape(xpv_buf *b, const xpv_hlo_shape *s)
{
    if (s->element_type == 13 || s->ntuple) {
        xpv_buf_putc(b, '(');
        for (uint32_t i = 0; i < s->ntuple; i++) {
            if (i) xpv_buf_puts(b, ", ");
            xpv_hlo_put_shape(b, &s->tuple[i]);
        }
        xpv_buf_putc(b, ')');
        return;
    }
    const char *t = xpv_hlo_type_name(s->element_type);
    if (t)
        xpv_buf_puts(b, t);
    else
        xpv_buf_printf(b, "type%d", (int)s->element_type);
    xpv_buf_putc(b, '[');
    for (uint32_t i = 0; i < s->ndims; i++)
        xpv_buf_printf(b, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    xpv_buf_putc(b, ']');
}

const xpv_hlo_shape *xpv_hlo_subshape(const xpv_hlo_shape *s, const xpv_hlo_ints *index)
{
    for (uint32_t i = 0; index && i < index->n; i++) {
        int64_t k = index->v[i];
        if (k < 0 || (uint64_t)k >= s->ntuple) return NULL;
        s = &s->tuple[k];
    }
    return s;
}

static int is_array(const xpv_hlo_shape *s)
{
    return s->element_type > 0 && s->element_type != 13 && s->ntuple == 0;
}

static long double elements(const xpv_hlo_shape *s)
{
    long double n = 1;
    for (uint32_t i = 0; i < s->ndims; i++)
        n *= (long double)s->dims[i];
    return n;
}

/* The size of dimension k of s into *out; 0 when s has no such dimension. */
static int dim(const xpv_hlo_shape *s, int64_t k, long double *out)
{
    if (k < 0 || (uint64_t)k >= s->ndims) return 0;
    *out = (long double)s->dims[k];
    return 1;
}

static int name_is(const xpv_hlo_str *s, const char *word)
{
    size_t n = strlen(word);
    return s->p && s->n == n && memcmp(s->p, word, n) == 0;
}

int xpv_hlo_dot_flops(const xpv_hlo_shape *out, const xpv_hlo_shape *lhs,
                      const xpv_hlo_ints *lhs_contracting, long double *flops)
{
    if (!is_array(out) || !is_array(lhs)) return 0;
    long double f = 2 * elements(out), d;
    for (uint32_t i = 0; i < lhs_contracting->n; i++) {
        if (!dim(lhs, lhs_contracting->v[i], &d)) return 0;
        f *= d;
    }
    *flops = f;
    return 1;
}

int xpv_hlo_conv_flops(const xpv_hlo_shape *out, const xpv_hlo_shape *kernel,
                       const xpv_hlo_dims *dd, long double *flops)
{
    if (!dd || !dd->has_conv_dims || !is_array(out) || !is_array(kernel)) return 0;
    long double f = 2 * elements(out), d;
    for (uint32_t i = 0; i < dd->kernel_spatial_dims.n; i++) {
        if (!dim(kernel, dd->kernel_spatial_dims.v[i], &d)) return 0;
        f *= d;
    }
    /* the kernel's input-feature dimension already holds
     * input features / feature_group_count */
    if (!dim(kernel, dd->kernel_input_feature_dim, &d)) return 0;
    *flops = f * d;
    return 1;
}

int xpv_hlo_instr_flops(const xpv_hlo_module *m, const xpv_hlo_instr *in, long double *flops)
{
    int is_dot = name_is(&in->opcode, "dot"), is_conv = name_is(&in->opcode, "convolution");
    const xpv_hlo_dims *dd = in->dims;
    if ((!is_dot && !is_conv) || !dd || in->operands.n < 2) return 0;
    const xpv_hlo_instr *lhs = xpv_hlo_instr_by_id(m, in->operands.v[0]);
    const xpv_hlo_instr *rhs = xpv_hlo_instr_by_id(m, in->operands.v[1]);
    if (!lhs || !rhs || !is_array(&rhs->shape)) return 0;
    if (is_dot) return xpv_hlo_dot_flops(&in->shape, &lhs->shape, &dd->lhs_contracting, flops);
    return is_array(&lhs->shape) && xpv_hlo_conv_flops(&in->shape, &rhs->shape, dd, flops);
}

/* Bytes per element of each xla.PrimitiveType; 0 where it is no whole
 * number of bytes (sub-byte types) or no array (tuple, token, opaque). */
static int type_width(int32_t t)
{
    static const unsigned char widths[] = {
        [1] = 1,  [2] = 1,  [3] = 2,  [4] = 4,  [5] = 8,  [6] = 1,  [7] = 2,   [8] = 4,
        [9] = 8,  [10] = 2, [11] = 4, [12] = 8, [15] = 8, [16] = 2, [18] = 16, [19] = 1,
        [20] = 1, [23] = 1, [24] = 1, [25] = 1, [28] = 1, [29] = 1, [33] = 1,
    };
    if (t <= 0 || (size_t)t >= sizeof widths) return 0;
    return widths[t];
}

int xpv_hlo_shape_bytes(const xpv_hlo_shape *s, long double *bytes)
{
    if (s->element_type == 13 || s->ntuple) {
        long double sum = 0, b;
        for (uint32_t i = 0; i < s->ntuple; i++) {
            if (!xpv_hlo_shape_bytes(&s->tuple[i], &b)) return 0;
            sum += b;
        }
        *bytes = sum;
        return 1;
    }
    int w = type_width(s->element_type);
    if (!w) return 0;
    *bytes = elements(s) * w;
    return 1;
}
