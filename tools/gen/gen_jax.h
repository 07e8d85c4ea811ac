/*
 * gen_jax.h — what the JAX generator's files share: protobuf output into
 * a growing buffer, and the program every step runs (gen_jax.c writes its
 * planes and files, gen_jax_hlo.c its compiled module).
 *
 * Invariants: a pbuf's len <= cap; a field is written whole (tag, then
 * length, then bytes), so a nested message is built in its own pbuf and
 * appended with pb_msg.
 */
#ifndef XPV_GEN_JAX_H
#define XPV_GEN_JAX_H

#include "gen.h"

#include <stdlib.h>
#include <string.h>

/* ---- protobuf output ---- */

typedef struct {
    unsigned char *p;
    size_t len, cap;
} pbuf;

static inline void pb_reserve(pbuf *b, size_t n)
{
    if (b->len + n <= b->cap) return;
    while (b->len + n > b->cap)
        b->cap = b->cap ? b->cap * 2 : 256;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
}

static inline void pb_raw(pbuf *b, const void *p, size_t n)
{
    pb_reserve(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static inline void pb_varint(pbuf *b, uint64_t v)
{
    pb_reserve(b, 10);
    while (v >= 0x80) {
        b->p[b->len++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (unsigned char)v;
}

static inline int varint_size(uint64_t v)
{
    int n = 1;
    while (v >= 0x80)
        v >>= 7, n++;
    return n;
}

static inline void pb_tag(pbuf *b, int num, int wire)
{
    pb_varint(b, (uint64_t)num << 3 | (uint64_t)wire);
}

static inline void pb_uint(pbuf *b, int num, uint64_t v)
{
    pb_tag(b, num, 0);
    pb_varint(b, v);
}

/* proto3 leaves out scalar fields that hold their default value */
static inline void pb_uint_nz(pbuf *b, int num, uint64_t v)
{
    if (v) pb_uint(b, num, v);
}

static inline void pb_bytes(pbuf *b, int num, const void *p, size_t n)
{
    pb_tag(b, num, 2);
    pb_varint(b, n);
    pb_raw(b, p, n);
}

static inline void pb_str(pbuf *b, int num, const char *s)
{
    pb_bytes(b, num, s, strlen(s));
}

static inline void pb_msg(pbuf *b, int num, const pbuf *m)
{
    pb_bytes(b, num, m->p, m->len);
}

/* ---- the program every step runs ---- */

enum op_type { OP_FUSION, OP_GEMM, OP_COLLECTIVE };

typedef struct {
    int type;
    int64_t base_dur_ps;
    char kernel[112];
    char hlo_op[48];
    char details[120];
    int tf_op; /* index into TF_OPS */
    uint32_t event_meta, details_ref, hlo_op_ref;
} op;

#define PROGRAM_ID 4217

typedef struct {
    const xpv_gen_opts *o;
    int kernels;  /* K: kernels per step per device */
    int distinct; /* distinct ops (<= kernels) */
    op *ops;      /* distinct ops */
    int64_t period_ps;
    int64_t t0_ns; /* profile start */
    int python_per_step;
} program;

/* Appends to proto the serialized HloProto (field 1) of jit_train_step:
 * its distinct ops as the GPU planes' kernels name them (hlo_op), with
 * shapes that derived FLOPs can be checked against. */
void xpv_gen_jax_hlo_module(const program *pg, pbuf *proto);

#endif
