/*
 * test_hlo_proto.c — the HloProto decoder on protos built here field by
 * field (module, computations, instructions with tuple shapes, metadata,
 * dot and convolution dimension numbers, buffer assignment, heap traces),
 * the FLOPs it derives, the schedule's positions, every truncation of a
 * proto, wrong wire types, the memory budget, and the Hlo Proto stats found
 * in an XSpace; then every module of the real xplane fixtures.
 */
#include "testpb.h"
#include "testutil.h"
#include "indexer/readers/hlo_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void shape(xpv_buf *out, uint32_t num, int type, const int64_t *dims, size_t n)
{
    xpv_buf s = {0};
    xpv_test_pb_int(&s, 2, type);
    xpv_test_pb_packed(&s, 3, dims, n);
    xpv_test_pb_msg(out, num, &s);
}

/* p0 = f32[8,16], p1 = bf16[16,4] (dims unpacked), dot = f32[8,4] with
 * metadata, conv, and a tuple (f32[8,4], s32[]). */
static void build_module(xpv_buf *mod)
{
    static const int64_t d816[] = {8, 16}, d164[] = {16, 4}, d84[] = {8, 4};
    xpv_buf comp = {0}, in = {0}, t = {0}, md = {0}, dd = {0};
    xpv_test_pb_str(&comp, 1, "main.5");
    xpv_test_pb_str(&in, 1, "p0"), xpv_test_pb_str(&in, 2, "parameter"), shape(&in, 3, 11, d816, 2);
    xpv_test_pb_int(&in, 9, 0), xpv_test_pb_int(&in, 35, 1);
    xpv_test_pb_msg(&comp, 2, &in);
    xpv_buf s = {0};
    xpv_test_pb_int(&s, 2, 16), xpv_test_pb_int(&s, 3, 16),
        xpv_test_pb_int(&s, 3, 4); /* unpacked dims */
    xpv_test_pb_str(&in, 1, "p1"), xpv_test_pb_str(&in, 2, "parameter"),
        xpv_test_pb_msg(&in, 3, &s);
    xpv_test_pb_int(&in, 9, 1), xpv_test_pb_int(&in, 35, 2);
    xpv_test_pb_msg(&comp, 2, &in);
    xpv_test_pb_str(&in, 1, "dot.3"), xpv_test_pb_str(&in, 2, "dot"), shape(&in, 3, 11, d84, 2);
    xpv_test_pb_str(&md, 1, "dot_general"), xpv_test_pb_str(&md, 2, "jit(f)/dot_general");
    xpv_test_pb_str(&md, 3, "model.py"), xpv_test_pb_int(&md, 4, 42);
    xpv_test_pb_msg(&in, 7, &md);
    xpv_test_pb_int(&dd, 1, 1), xpv_test_pb_int(&dd, 2, 0), xpv_test_pb_msg(&in, 30, &dd);
    xpv_test_pb_int(&in, 35, 3);
    xpv_test_pb_packed(&in, 36, (const int64_t[]){1, 2}, 2);
    xpv_test_pb_msg(&comp, 2, &in);
    xpv_test_pb_str(&in, 1, "tuple.4"), xpv_test_pb_str(&in, 2, "tuple");
    xpv_test_pb_int(&t, 2, 13), shape(&t, 4, 11, d84, 2), shape(&t, 4, 4, NULL, 0);
    xpv_test_pb_msg(&in, 3, &t);
    xpv_test_pb_int(&in, 35, 4), xpv_test_pb_int(&in, 36, 3);
    xpv_test_pb_msg(&comp, 2, &in);
    xpv_test_pb_int(&comp, 5, 7), xpv_test_pb_int(&comp, 6, 4);
    xpv_test_pb_str(mod, 1, "jit_f"), xpv_test_pb_str(mod, 2, "main.5");
    xpv_test_pb_msg(mod, 3, &comp);
    xpv_test_pb_int(mod, 5, 99), xpv_test_pb_int(mod, 6, 7);
    (void)d164;
}

static void build_assignment(xpv_buf *ba)
{
    xpv_buf lb = {0}, loc = {0}, al = {0}, as = {0}, tr = {0}, ev = {0};
    for (int i = 0; i < 3; i++) { /* buffers 10 (p0), 11 (dot), 12 (tuple index {1}) */
        xpv_test_pb_int(&lb, 1, 10 + i), xpv_test_pb_int(&lb, 2, i == 0 ? 512 : i == 1 ? 128 : 8);
        xpv_test_pb_int(&loc, 4, i == 0 ? 1 : i == 1 ? 3 : 4);
        if (i == 2) xpv_test_pb_packed(&loc, 3, (const int64_t[]){1}, 1);
        xpv_test_pb_msg(&lb, 3, &loc);
        xpv_test_pb_msg(ba, 1, &lb);
    }
    xpv_test_pb_int(&al, 1, 0), xpv_test_pb_int(&al, 2, 512), xpv_test_pb_int(&al, 5, 1),
        xpv_test_pb_int(&al, 6, 0);
    xpv_test_pb_int(&as, 1, 10), xpv_test_pb_int(&as, 2, 0), xpv_test_pb_int(&as, 3, 512),
        xpv_test_pb_msg(&al, 9, &as);
    xpv_test_pb_msg(ba, 3, &al);
    xpv_test_pb_int(&al, 1, 1), xpv_test_pb_int(&al, 2, 136), xpv_test_pb_int(&al, 7, 1),
        xpv_test_pb_int(&al, 11, 1);
    xpv_test_pb_int(&as, 1, 11), xpv_test_pb_int(&as, 3, 128), xpv_test_pb_msg(&al, 9, &as);
    xpv_test_pb_int(&as, 1, 12), xpv_test_pb_int(&as, 2, 128), xpv_test_pb_int(&as, 3, 8),
        xpv_test_pb_msg(&al, 9, &as);
    xpv_test_pb_msg(ba, 3, &al);
    xpv_test_pb_int(&ev, 1, 0), xpv_test_pb_int(&ev, 2, 11), xpv_test_pb_str(&ev, 4, "dot.3"),
        xpv_test_pb_msg(&tr, 1, &ev);
    xpv_test_pb_int(&ev, 1, 1), xpv_test_pb_int(&ev, 2, 11), xpv_test_pb_msg(&tr, 1, &ev);
    xpv_test_pb_int(&tr, 2, 1), xpv_test_pb_int(&tr, 3, 1);
    xpv_test_pb_msg(ba, 4, &tr);
}

static void build_proto(xpv_buf *out)
{
    xpv_buf mod = {0}, ba = {0};
    build_module(&mod);
    build_assignment(&ba);
    xpv_test_pb_msg(out, 1, &mod);
    xpv_test_pb_msg(out, 3, &ba);
}

static void test_module(void)
{
    xpv_buf p = {0};
    build_proto(&p);
    xpv_hlo_module m;
    xpv_err err = {{0}};
    const uint8_t *d = (const uint8_t *)p.data;
    CU_ASSERT_EQUAL_FATAL(xpv_hlo_decode(d, d, p.len, 0, &m, &err), 0);
    CU_ASSERT(m.name.n == 5 && memcmp(m.name.p, "jit_f", 5) == 0);
    CU_ASSERT(m.id == 99 && m.entry_computation_id == 7);
    CU_ASSERT_EQUAL(m.ncomputations, 1);
    CU_ASSERT(m.computations[0].root_id == 4 && m.computations[0].n == 4);
    CU_ASSERT_EQUAL_FATAL(m.ninstrs, 4);
    const xpv_hlo_instr *dot = xpv_hlo_instr_by_id(&m, 3);
    CU_ASSERT_PTR_EQUAL_FATAL(dot, &m.instrs[2]);
    CU_ASSERT(dot->operands.n == 2 && dot->operands.v[0] == 1 && dot->operands.v[1] == 2);
    CU_ASSERT(dot->source_line == 42 && dot->source_file.n == 8);
    CU_ASSERT(dot->op_name.n == 18 && memcmp(dot->op_name.p, "jit(f)/dot_general", 18) == 0);
    CU_ASSERT(m.instrs[1].shape.ndims == 2 && m.instrs[1].shape.dims[1] == 4);
    CU_ASSERT(m.instrs[1].parameter_number == 1 && m.instrs[2].parameter_number == -1);
    xpv_buf s = {0};
    xpv_hlo_put_shape(&s, &m.instrs[3].shape);
    xpv_buf_putc(&s, 0);
    CU_ASSERT_STRING_EQUAL(s.data, "(f32[8,4], s32[])");
    xpv_buf_free(&s);
    long double fl = 0;
    CU_ASSERT_EQUAL(xpv_hlo_instr_flops(&m, dot, &fl), 1);
    CU_ASSERT(fl == 2.0L * 8 * 4 * 16);
    CU_ASSERT_EQUAL(xpv_hlo_instr_flops(&m, &m.instrs[3], &fl), 0);
    /* buffer assignment */
    CU_ASSERT(m.has_buffer_assignment && m.nbuffers == 3 && m.nallocations == 2);
    const xpv_hlo_logical_buffer *b = xpv_hlo_buffer_by_id(&m, 12);
    CU_ASSERT_FATAL(b != NULL);
    CU_ASSERT(b->size == 8 && b->instruction_id == 4 && b->shape_index.n == 1);
    const xpv_hlo_shape *sub = xpv_hlo_subshape(&m.instrs[3].shape, &b->shape_index);
    CU_ASSERT(sub && sub->element_type == 4 && sub->ndims == 0);
    CU_ASSERT(m.allocations[0].is_entry_computation_parameter && !m.allocations[0].maybe_live_out);
    CU_ASSERT(m.allocations[1].maybe_live_out && m.allocations[1].is_tuple);
    CU_ASSERT(m.allocations[1].nassigned == 2 && m.allocations[1].assigned[1].offset == 128);
    CU_ASSERT(m.ntraces == 1 && m.traces[0].nevents == 2 &&
              m.traces[0].buffer_allocation_index == 1);
    CU_ASSERT(m.traces[0].events[1].kind == XPV_HLO_HEAP_FREE &&
              m.traces[0].whole_module_simulation);
    xpv_hlo_module_free(&m);
    xpv_buf_free(&p);
}

static void test_conv_flops(void)
{
    /* in f32[1,10,10,3], kernel f32[3,3,3,8] (HWIO), out f32[1,8,8,8] */
    static const int64_t din[] = {1, 10, 10, 3}, dk[] = {3, 3, 3, 8}, dout[] = {1, 8, 8, 8};
    xpv_buf mod = {0}, comp = {0}, in = {0}, cd = {0}, p = {0};
    xpv_test_pb_str(&in, 1, "x"), shape(&in, 3, 11, din, 4), xpv_test_pb_int(&in, 35, 1),
        xpv_test_pb_msg(&comp, 2, &in);
    xpv_test_pb_str(&in, 1, "k"), shape(&in, 3, 11, dk, 4), xpv_test_pb_int(&in, 35, 2),
        xpv_test_pb_msg(&comp, 2, &in);
    xpv_test_pb_str(&in, 1, "conv"), xpv_test_pb_str(&in, 2, "convolution"),
        shape(&in, 3, 11, dout, 4);
    xpv_test_pb_int(&cd, 3, 2), xpv_test_pb_packed(&cd, 6, (const int64_t[]){0, 1}, 2),
        xpv_test_pb_msg(&in, 16, &cd);
    xpv_test_pb_int(&in, 35, 3), xpv_test_pb_packed(&in, 36, (const int64_t[]){1, 2}, 2),
        xpv_test_pb_msg(&comp, 2, &in);
    xpv_test_pb_msg(&mod, 3, &comp);
    xpv_test_pb_msg(&p, 1, &mod);
    xpv_hlo_module m;
    xpv_err err = {{0}};
    const uint8_t *d = (const uint8_t *)p.data;
    CU_ASSERT_EQUAL_FATAL(xpv_hlo_decode(d, d, p.len, 0, &m, &err), 0);
    long double fl = 0;
    CU_ASSERT_EQUAL(xpv_hlo_instr_flops(&m, &m.instrs[2], &fl), 1);
    CU_ASSERT(fl == 2.0L * (8 * 8 * 8) * (3 * 3) * 3);
    xpv_hlo_module_free(&m);
    xpv_buf_free(&p);
}

static void test_truncated_and_malformed(void)
{
    xpv_buf p = {0};
    build_proto(&p);
    int errors = 0;
    for (size_t n = 0; n < p.len; n++) { /* every prefix: an error or a shorter module */
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, p.data, n);
        xpv_hlo_module m;
        xpv_err err = {{0}};
        if (xpv_hlo_decode(cut, cut, n, 0, &m, &err) == 0)
            xpv_hlo_module_free(&m);
        else {
            errors++;
            CU_ASSERT(err.msg[0] != 0);
        }
        free(cut);
    }
    CU_ASSERT(errors > (int)p.len / 2);
    /* hlo_module as a varint: a wrong wire type, with its offset */
    const uint8_t bad[] = {0x08, 0x01};
    xpv_hlo_module m;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_hlo_decode(bad, bad, sizeof bad, 0, &m, &err), -1);
    CU_ASSERT(strstr(err.msg, "byte offset 0") && strstr(err.msg, "HloProto"));
    /* a budget smaller than the structures */
    const uint8_t *d = (const uint8_t *)p.data;
    CU_ASSERT_EQUAL(xpv_hlo_decode(d, d, p.len, 256, &m, &err), -1);
    CU_ASSERT(strstr(err.msg, "budget") != NULL);
    /* no module at all */
    CU_ASSERT_EQUAL(xpv_hlo_decode(d, d, 0, 0, &m, &err), -1);
    xpv_buf_free(&p);
}

/* Damaged protos (random bytes changed) decode or fail, and whatever
 * decodes can be walked: shapes printed, FLOPs asked, buffers looked up. */
static void test_mutations(void)
{
    xpv_buf p = {0};
    build_proto(&p);
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    int ok = 0;
    uint8_t *d = malloc(p.len);
    for (int round = 0; round < 3000; round++) {
        memcpy(d, p.data, p.len);
        int flips = 1 + (int)(xpv_test_xorshift(&rng) % 4);
        for (int k = 0; k < flips; k++)
            d[xpv_test_xorshift(&rng) % p.len] = (uint8_t)xpv_test_xorshift(&rng);
        xpv_hlo_module m;
        xpv_err err = {{0}};
        if (xpv_hlo_decode(d, d, p.len, 1 << 20, &m, &err) != 0) {
            CU_ASSERT(err.msg[0] != 0);
            continue;
        }
        ok++;
        xpv_buf s = {0};
        long double fl;
        for (uint32_t i = 0; i < m.ninstrs; i++) {
            xpv_hlo_put_shape(&s, &m.instrs[i].shape);
            (void)xpv_hlo_instr_flops(&m, &m.instrs[i], &fl);
        }
        for (uint32_t i = 0; i < m.nbuffers; i++) {
            const xpv_hlo_instr *in = xpv_hlo_instr_by_id(&m, m.buffers[i].instruction_id);
            if (in) (void)xpv_hlo_subshape(&in->shape, &m.buffers[i].shape_index);
        }
        xpv_buf_free(&s);
        xpv_hlo_module_free(&m);
    }
    CU_ASSERT(ok > 0);
    free(d);
    xpv_buf_free(&p);
}

/* An XSpace with a device plane and /host:metadata holding two modules. */
static void test_find_blobs(void)
{
    xpv_buf space = {0}, plane = {0}, e = {0}, v = {0}, st = {0};
    xpv_test_pb_str(&plane, 2, "/device:GPU:0");
    xpv_test_pb_msg(&space, 1, &plane);
    xpv_test_pb_str(&plane, 2, "/host:metadata");
    for (int i = 0; i < 2; i++) {
        xpv_test_pb_int(&st, 1, 3), xpv_test_pb_str(&st, 6, i ? "BBB" : "AA");
        xpv_test_pb_int(&v, 1, 40 + i), xpv_test_pb_str(&v, 2, i ? "jit_b(41)" : "jit_a(40)"),
            xpv_test_pb_msg(&v, 5, &st);
        xpv_test_pb_int(&e, 1, 40 + i), xpv_test_pb_msg(&e, 2, &v);
        xpv_test_pb_msg(&plane, 4, &e);
    }
    xpv_test_pb_int(&v, 1, 3),
        xpv_test_pb_str(&v, 2, "Hlo Proto"); /* the stat metadata comes last */
    xpv_test_pb_int(&e, 1, 3), xpv_test_pb_msg(&e, 2, &v);
    xpv_test_pb_msg(&plane, 5, &e);
    xpv_test_pb_msg(&space, 1, &plane);
    xpv_hlo_blob *b;
    size_t n;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_hlo_find_blobs((const uint8_t *)space.data, space.len, &b, &n, &err),
                          0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT(b[1].program_id == 41 && b[1].len == 3 && memcmp(b[1].data, "BBB", 3) == 0);
    CU_ASSERT(b[0].name.n == 9 && memcmp(b[0].name.p, "jit_a(40)", 9) == 0);
    free(b);
    CU_ASSERT_EQUAL(xpv_hlo_find_blobs((const uint8_t *)space.data, space.len - 1, &b, &n, &err),
                    -1);
    xpv_buf_free(&space);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc(*n);
    if (fread(d, 1, *n, f) != *n) *n = 0;
    fclose(f);
    return d;
}

/* Every module of each real xplane decodes, with a buffer assignment. */
static void test_fixtures(void)
{
    const char *fx = xpv_test_fixtures();
    if (!fx) return;
    static const char *const files[] = {"jax-rocm-mi300x-gemm", "jax-rocm-mi300x-conv-8gpu",
                                        "jax-tpu-v6e-inference"};
    static const size_t want[] = {16, 8, 4};
    for (size_t i = 0; i < 3; i++) {
        char path[4096];
        size_t n = 0, nb = 0;
        snprintf(path, sizeof path, "%s/xplane/%s.xplane.pb", fx, files[i]);
        char *data = slurp(path, &n);
        CU_ASSERT_FATAL(data != NULL);
        xpv_hlo_blob *b;
        xpv_err err = {{0}};
        CU_ASSERT_EQUAL_FATAL(xpv_hlo_find_blobs((uint8_t *)data, n, &b, &nb, &err), 0);
        CU_ASSERT_EQUAL(nb, want[i]);
        for (size_t k = 0; k < nb; k++) {
            xpv_hlo_module m;
            CU_ASSERT_EQUAL(xpv_hlo_decode((uint8_t *)data, b[k].data, b[k].len, 0, &m, &err), 0);
            CU_ASSERT(m.ninstrs > 0 && m.has_buffer_assignment && m.nallocations > 0);
            /* XLA schedules every module: the entry runs each of its
             * instructions once, so their positions are 0..n-1 */
            uint32_t *pos = xpv_xmalloc((m.ninstrs + 1) * sizeof *pos), entry;
            CU_ASSERT_EQUAL(xpv_hlo_schedule_positions(&m, pos, &err), 0);
            CU_ASSERT_FATAL(xpv_hlo_computation_by_id(&m, m.entry_computation_id, &entry));
            const xpv_hlo_computation *c = &m.computations[entry];
            for (uint32_t at = c->first; at < c->first + c->n; at++)
                CU_ASSERT(pos[at] < c->n);
            free(pos);
            xpv_hlo_module_free(&m);
        }
        free(b);
        free(data);
    }
}

/* The module with a schedule of one sequence for computation comp_id:
 * ids, packed or one field each. */
static void decode_scheduled(xpv_buf *p, int64_t comp_id, const int64_t *ids, size_t n, int packed,
                             xpv_hlo_module *m)
{
    xpv_buf mod = {0}, sched = {0}, entry = {0}, seq = {0};
    build_module(&mod);
    if (packed) xpv_test_pb_packed(&seq, 1, ids, n);
    for (size_t i = 0; i < n && !packed; i++)
        xpv_test_pb_int(&seq, 1, ids[i]);
    xpv_test_pb_int(&entry, 1, comp_id), xpv_test_pb_msg(&entry, 2, &seq);
    xpv_test_pb_msg(&sched, 1, &entry);
    xpv_test_pb_msg(&mod, 7, &sched);
    xpv_buf_reset(p);
    xpv_test_pb_msg(p, 1, &mod);
    xpv_err err = {{0}};
    const uint8_t *d = (const uint8_t *)p->data;
    CU_ASSERT_EQUAL_FATAL(xpv_hlo_decode(d, d, p->len, 0, m, &err), 0);
}

/* Positions by instruction id 1..4 (p0, p1, dot.3, tuple.4); rc the call's. */
static int positions(const xpv_hlo_module *m, uint32_t got[4])
{
    uint32_t pos[4];
    xpv_err err = {{0}};
    int rc = xpv_hlo_schedule_positions(m, pos, &err);
    for (int id = 1; id <= 4; id++)
        got[id - 1] = pos[xpv_hlo_instr_by_id(m, id) - m->instrs];
    return rc;
}

static void test_schedule(void)
{
    const uint32_t U = UINT32_MAX;
    xpv_buf p = {0};
    xpv_hlo_module m;
    uint32_t got[4];
    decode_scheduled(&p, 7, (const int64_t[]){2, 1, 4, 3}, 4, 1, &m);
    CU_ASSERT_EQUAL(positions(&m, got), 0);
    CU_ASSERT(got[0] == 1 && got[1] == 0 && got[2] == 3 && got[3] == 2);
    xpv_hlo_module_free(&m);
    decode_scheduled(&p, 7, (const int64_t[]){3, 1}, 2, 0, &m); /* one field an id */
    CU_ASSERT_EQUAL(positions(&m, got), 0);
    CU_ASSERT(got[0] == 1 && got[1] == U && got[2] == 0 && got[3] == U);
    xpv_hlo_module_free(&m);
    decode_scheduled(&p, 8, (const int64_t[]){1, 2}, 2, 1, &m); /* no such computation */
    CU_ASSERT_EQUAL(positions(&m, got), 0);
    CU_ASSERT(got[0] == U && got[1] == U && got[2] == U && got[3] == U);
    xpv_hlo_module_free(&m);
    /* an id twice, or one no instruction has: no position at all */
    static const int64_t twice[] = {1, 2, 1}, stray[] = {1, 2, 99};
    for (int k = 0; k < 2; k++) {
        decode_scheduled(&p, 7, k ? stray : twice, 3, k, &m);
        CU_ASSERT_EQUAL(positions(&m, got), -1);
        CU_ASSERT(got[0] == U && got[1] == U && got[2] == U && got[3] == U);
        xpv_hlo_module_free(&m);
    }
    xpv_buf_free(&p);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"a module, its shapes, metadata and buffer assignment", test_module},
        {"convolution FLOPs from shapes", test_conv_flops},
        {"the schedule's positions", test_schedule},
        {"truncations, wrong wire types, the budget", test_truncated_and_malformed},
        {"damaged protos decode or fail, never crash", test_mutations},
        {"Hlo Proto stats of /host:metadata", test_find_blobs},
        {"every module of the xplane fixtures", test_fixtures},
        {NULL, NULL},
    };
    return xpv_test_run("hlo_proto", tests, 0);
}
