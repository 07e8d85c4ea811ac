/*
 * test_hlo_derive.c — FLOPs and bytes derived from HLO shapes, on a module
 * built here field by field: batched GEMM library calls (contracting
 * dimensions from backend_config, as strings or numbers; a missing or
 * broken config), the three kinds of library convolution, a fusion summing
 * a dot and a nested fusion's dot, a fusion that calls itself (a cycle:
 * unknown, not a hang), a fusion without dots, other library calls, and a
 * sub-byte operand (FLOPs known, bytes not); then the same module in an
 * indexed xplane file, looked up by program id and op name, where an
 * instruction a fusion holds has no FLOPs of its own (its fusion has them).
 */
#define _GNU_SOURCE
#include "testpb.h"
#include "testutil.h"
#include "api/hlo/hlo_derive.h"
#include "store/index_db.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum { S4 = 21, BF16 = 16, F32 = 11, U8 = 6 };

/* A ShapeProto: an array, or (when t2) a tuple of two arrays. */
typedef struct {
    int type;
    int64_t dims[4];
    size_t n;
} arr;

static void shape(xpv_buf *in, const arr *a, const arr *second)
{
    xpv_buf s = {0}, t = {0};
    if (second) {
        xpv_test_pb_int(&s, 2, 13);
        for (int k = 0; k < 2; k++) {
            const arr *x = k ? second : a;
            xpv_test_pb_int(&t, 2, x->type), xpv_test_pb_packed(&t, 3, x->dims, x->n);
            xpv_test_pb_msg(&s, 4, &t);
        }
    } else {
        xpv_test_pb_int(&s, 2, a->type), xpv_test_pb_packed(&s, 3, a->dims, a->n);
    }
    xpv_test_pb_msg(in, 3, &s);
}

typedef struct {
    const char *name, *opcode, *target, *config;
    int64_t id;
    arr out, *second;
    int64_t operands[3], called;
    size_t noperands;
    int dot, conv; /* dot: lhs dimension 1 contracted; conv: NCHW / OIHW numbers */
} ins;

static void instr(xpv_buf *comp, const ins *d)
{
    xpv_buf in = {0}, dn = {0};
    xpv_test_pb_bytes(&in, 1, d->name, strlen(d->name));
    xpv_test_pb_bytes(&in, 2, d->opcode, strlen(d->opcode));
    shape(&in, &d->out, d->second);
    xpv_test_pb_int(&in, 35, d->id);
    if (d->noperands) xpv_test_pb_packed(&in, 36, d->operands, d->noperands);
    if (d->called) xpv_test_pb_int(&in, 38, d->called);
    if (d->target) xpv_test_pb_bytes(&in, 28, d->target, strlen(d->target));
    if (d->config) xpv_test_pb_bytes(&in, 43, d->config, strlen(d->config));
    if (d->dot)
        xpv_test_pb_int(&dn, 1, 1), xpv_test_pb_int(&dn, 2, 0), xpv_test_pb_msg(&in, 30, &dn);
    if (d->conv) {
        xpv_test_pb_int(&dn, 3, 1), xpv_test_pb_int(&dn, 4, 0),
            xpv_test_pb_packed(&dn, 6, (int64_t[]){2, 3}, 2);
        xpv_test_pb_msg(&in, 16, &dn);
    }
    xpv_test_pb_msg(comp, 2, &in);
}

static void computation(xpv_buf *mod, const char *name, int64_t id, const ins *list, size_t n)
{
    xpv_buf c = {0};
    xpv_test_pb_bytes(&c, 1, name, strlen(name));
    for (size_t i = 0; i < n; i++)
        instr(&c, &list[i]);
    xpv_test_pb_int(&c, 5, id), xpv_test_pb_int(&c, 6, list[n - 1].id);
    xpv_test_pb_msg(mod, 3, &c);
}

#define P(nm, i, ...)                                                                              \
    {                                                                                              \
        .name = nm, .opcode = "parameter", .id = i, .out = __VA_ARGS__                             \
    }
#define ARR(...)                                                                                   \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }
#define GEMM(nm, tgt, cfg, i, lhs)                                                                 \
    {                                                                                              \
        .name = nm, .opcode = "custom-call", .target = tgt, .config = cfg, .id = i,                \
        .out = {BF16, {3, 16, 8}, 3}, .second = &ws, .operands = {lhs, 502}, .noperands = 2        \
    }
#define CONV(nm, tgt, i, o, x, y)                                                                  \
    {                                                                                              \
        .name = nm, .opcode = "custom-call", .target = tgt, .id = i, .out = ARR o, .second = &ws,  \
        .operands = {x, y}, .noperands = 2, .conv = 1                                              \
    }
#define FUSION(nm, i, o, comp, n, ...)                                                             \
    {                                                                                              \
        .name = nm, .opcode = "fusion", .id = i, .out = ARR o, .operands = {__VA_ARGS__},          \
        .called = comp, .noperands = n                                                             \
    }
static const arr WS = {U8, {64}, 1};
static const char BATCHED[] =
    "{\"gemm_backend_config\":{\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"2\"],"
    "\"rhs_contracting_dimensions\":[\"1\"],\"lhs_batch_dimensions\":[\"0\"],"
    "\"rhs_batch_dimensions\":[\"0\"]}}}";
static const char NUMBERS[] =
    "{\"gemm_backend_config\":{\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[2]}}}";

static void build(xpv_buf *proto)
{
    xpv_buf mod = {0};
    arr ws = WS;
    const ins inner[] = {
        P("p0", 101, {BF16, {4, 8}, 2}),
        P("p1", 102, {BF16, {8, 2}, 2}),
        {"d", "dot", NULL, NULL, 103, {F32, {4, 2}, 2}, NULL, {101, 102}, 0, 2, 1, 0}};
    const ins fused[] = {
        P("q0", 201, {BF16, {4, 8}, 2}),
        P("q1", 202, {BF16, {8, 2}, 2}),
        {"d", "dot", NULL, NULL, 203, {F32, {4, 2}, 2}, NULL, {201, 202}, 0, 2, 1, 0},
        {"f", "fusion", NULL, NULL, 204, {F32, {4, 2}, 2}, NULL, {201, 202}, 100, 2, 0, 0}};
    const ins cyclic[] = {
        {"loop", "fusion", NULL, NULL, 301, {F32, {4}, 1}, NULL, {0}, 300, 0, .conv = 0}};
    const ins nodot[] = {
        P("r0", 401, {F32, {4}, 1}),
        {"m", "multiply", NULL, NULL, 402, {F32, {4}, 1}, NULL, {401, 401}, 0, 2, .conv = 0}};
    const ins entry[] = {
        P("A", 501, {BF16, {3, 16, 32}, 3}),
        P("B", 502, {BF16, {3, 32, 8}, 3}),
        P("X", 508, {BF16, {1, 4, 10, 10}, 4}),
        P("W", 509, {BF16, {6, 4, 3, 3}, 4}),
        P("dY", 519, {BF16, {1, 6, 8, 8}, 4}),
        P("X2", 513, {BF16, {4, 8}, 2}),
        P("Y2", 514, {BF16, {8, 2}, 2}),
        P("S", 520, {S4, {3, 16, 32}, 3}),
        GEMM("gemm", "__cublas$gemm", BATCHED, 503, 501),
        GEMM("lt", "__cublas$lt$matmul", NUMBERS, 504, 501),
        GEMM("noconfig", "__cublas$gemm", NULL, 505, 501),
        GEMM("badconfig", "__cublas$gemm", "{", 506, 501),
        CONV("fwd", "__cudnn$convForward", 507, (BF16, {1, 6, 8, 8}, 4), 508, 509),
        CONV("bwd_in", "__cudnn$convBackwardInput", 510, (BF16, {1, 4, 10, 10}, 4), 519, 509),
        CONV("bwd_filter", "__cudnn$convBackwardFilter", 511, (BF16, {6, 4, 3, 3}, 4), 508, 519),
        FUSION("fusion", 512, (F32, {4, 2}, 2), 200, 2, 513, 514),
        FUSION("cycle", 515, (F32, {4}, 1), 300, 0),
        FUSION("elementwise", 516, (F32, {4}, 1), 400, 0),
        {.name = "sort",
         .opcode = "custom-call",
         .target = "__cub$DeviceRadixSort",
         .id = 517,
         .out = {F32, {4}, 1}},
        GEMM("s4gemm", "__cublas$gemm", BATCHED, 518, 520),
    };
    computation(&mod, "inner", 100, inner, 3);
    computation(&mod, "fused", 200, fused, 4);
    computation(&mod, "cyclic", 300, cyclic, 1);
    computation(&mod, "nodot", 400, nodot, 2);
    computation(&mod, "main", 500, entry, sizeof entry / sizeof entry[0]);
    xpv_test_pb_bytes(&mod, 1, "jit_f", 5);
    xpv_test_pb_int(&mod, 6, 500);
    xpv_test_pb_msg(proto, 1, &mod);
}

static xpv_hlo_module M;

static const xpv_hlo_instr *named(const char *name)
{
    for (uint32_t i = 0; i < M.ninstrs; i++)
        if (M.instrs[i].name.n == strlen(name) &&
            !memcmp(M.instrs[i].name.p, name, M.instrs[i].name.n))
            return &M.instrs[i];
    CU_FAIL_FATAL("no such instruction");
    return NULL;
}

/* The derived cost of `name`: has_flops, and the figures. */
static int cost(const char *name, long double *flops, long double *bytes, int *has_bytes)
{
    xpv_hlo_cost c;
    int rc = xpv_hlo_instr_cost(&M, named(name), &c);
    *flops = c.flops, *bytes = c.bytes, *has_bytes = c.has_bytes;
    return rc;
}

static void test_gemm_calls(void)
{
    long double f, b;
    int hb;
    /* batch 3 x [16,32] x [32,8]: 2 x 3 x 16 x 8 x 32; bytes A + B + out */
    CU_ASSERT(cost("gemm", &f, &b, &hb) == 1 && f == 24576);
    CU_ASSERT(hb && b == 3 * 16 * 32 * 2 + 3 * 32 * 8 * 2 + 3 * 16 * 8 * 2); /* no workspace */
    CU_ASSERT(xpv_hlo_gemm_flops(&M, named("gemm"), &f) == 1 && f == 24576);
    CU_ASSERT(cost("lt", &f, &b, &hb) == 1 && f == 24576); /* dimensions as numbers */
    CU_ASSERT(cost("noconfig", &f, &b, &hb) == 0 && f == 0 && !hb);
    CU_ASSERT(cost("badconfig", &f, &b, &hb) == 0);
    CU_ASSERT(xpv_hlo_gemm_flops(&M, named("fwd"), &f) == 0); /* not a GEMM */
    CU_ASSERT(cost("sort", &f, &b, &hb) == 0);
    /* s4 has no whole-byte width: FLOPs, but no bytes */
    CU_ASSERT(cost("s4gemm", &f, &b, &hb) == 1 && f == 24576 && !hb);
}

static void test_conv_calls(void)
{
    long double f, b;
    int hb;
    /* forward output [1,6,8,8], kernel 3x3 over 4 input features */
    const long double want = 2.0L * 6 * 8 * 8 * 3 * 3 * 4;
    CU_ASSERT(cost("fwd", &f, &b, &hb) == 1 && f == want);
    CU_ASSERT(hb && b == (1 * 4 * 10 * 10 + 6 * 4 * 3 * 3 + 1 * 6 * 8 * 8) * 2);
    CU_ASSERT(cost("bwd_in", &f, &b, &hb) == 1 && f == want);
    CU_ASSERT(cost("bwd_filter", &f, &b, &hb) == 1 && f == want);
}

static void test_fusions(void)
{
    long double f, b;
    int hb;
    /* a dot and a nested fusion's dot, 2 x 4 x 2 x 8 each */
    CU_ASSERT(cost("fusion", &f, &b, &hb) == 1 && f == 256);
    CU_ASSERT(hb && b == 4 * 2 * 4 + 4 * 8 * 2 + 8 * 2 * 2);
    CU_ASSERT(cost("cycle", &f, &b, &hb) == 0 && !hb);
    CU_ASSERT(cost("elementwise", &f, &b, &hb) == 0);
    CU_ASSERT(cost("A", &f, &b, &hb) == 0); /* a parameter */
}

/* An XSpace whose /host:metadata holds `proto` as program 77. */
static void xspace(xpv_buf *space, const xpv_buf *proto)
{
    xpv_buf plane = {0}, e = {0}, v = {0}, st = {0};
    xpv_test_pb_bytes(&plane, 2, "/host:metadata", 14);
    xpv_test_pb_int(&st, 1, 3), xpv_test_pb_bytes(&st, 6, proto->data, proto->len);
    xpv_test_pb_int(&v, 1, 77), xpv_test_pb_bytes(&v, 2, "jit_f(77)", 9),
        xpv_test_pb_msg(&v, 5, &st);
    xpv_test_pb_int(&e, 1, 77), xpv_test_pb_msg(&e, 2, &v);
    xpv_test_pb_msg(&plane, 4, &e);
    xpv_test_pb_int(&v, 1, 3), xpv_test_pb_bytes(&v, 2, "Hlo Proto", 9);
    xpv_test_pb_int(&e, 1, 3), xpv_test_pb_msg(&e, 2, &v);
    xpv_test_pb_msg(&plane, 5, &e);
    xpv_test_pb_msg(space, 1, &plane);
}

static xpv_buf PROTO;

static void test_profile_lookup(void)
{
    const char *dir = xpv_test_tmpdir();
    sqlite3 *db = xpv_test_fresh_index(dir, 5);
    xpv_buf space = {0};
    xspace(&space, &PROTO);
    CU_ASSERT_EQUAL_FATAL(xpv_test_write(dir, "profiles/p", space.data, space.len), 0);
    char path[4096], sql[256];
    struct stat sb;
    snprintf(path, sizeof path, "%s/profiles/p", dir);
    CU_ASSERT_EQUAL_FATAL(stat(path, &sb), 0);
    snprintf(sql, sizeof sql,
             "UPDATE profiles SET format='xplane', size_bytes=%lld, mtime_ns=%lld WHERE id=5",
             (long long)sb.st_size,
             (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_db_exec(db, sql, &err), 0);
    xpv_hlo_derived *d = xpv_hlo_derived_open(db, 5, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    xpv_hlo_cost c;
    CU_ASSERT_EQUAL(xpv_hlo_derived_cost(d, 77, "fusion", 6, &c, &err), 1);
    CU_ASSERT(c.flops == 256 && c.has_bytes);
    CU_ASSERT_EQUAL(xpv_hlo_derived_cost(d, 77, "gemm", 4, &c, &err), 1);
    CU_ASSERT(c.flops == 24576);
    /* "d" is a dot inside the fused computations: counted in its fusion */
    CU_ASSERT_EQUAL(xpv_hlo_derived_cost(d, 77, "d", 1, &c, &err), 0);
    CU_ASSERT_EQUAL(xpv_hlo_derived_cost(d, 77, "nope", 4, &c, &err), 0);
    CU_ASSERT_EQUAL(xpv_hlo_derived_cost(d, 78, "gemm", 4, &c, &err), 0); /* other program */
    /* opcodes for the category, inside fusions too */
    xpv_hlo_str op;
    CU_ASSERT_EQUAL(xpv_hlo_derived_opcode(d, 77, "gemm", 4, &op, &err), 1);
    CU_ASSERT(op.n == 11 && memcmp(op.p, "custom-call", 11) == 0);
    CU_ASSERT_EQUAL(xpv_hlo_derived_opcode(d, 77, "d", 1, &op, &err), 1);
    CU_ASSERT(op.n == 3 && memcmp(op.p, "dot", 3) == 0);
    CU_ASSERT_EQUAL(xpv_hlo_derived_opcode(d, 77, "nope", 4, &op, &err), 0);
    CU_ASSERT_EQUAL(xpv_hlo_derived_opcode(d, 78, "gemm", 4, &op, &err), 0);
    xpv_hlo_derived_free(d);
    /* a file that changed since it was indexed is refused, with a reason */
    CU_ASSERT_EQUAL(xpv_db_exec(db, "UPDATE profiles SET size_bytes=1 WHERE id=5", &err), 0);
    err.msg[0] = 0;
    CU_ASSERT_PTR_NULL(xpv_hlo_derived_open(db, 5, &err));
    CU_ASSERT(strstr(err.msg, "changed") != NULL);
    xpv_buf_free(&space);
    sqlite3_close(db);
}

int main(void)
{
    xpv_buf p = {0};
    xpv_err err = {{0}};
    build(&p);
    PROTO = p;
    const uint8_t *d = (const uint8_t *)p.data;
    if (xpv_hlo_decode(d, d, p.len, 0, &M, &err) != 0) {
        fprintf(stderr, "decode: %s\n", err.msg);
        return 1;
    }
    static const xpv_test_case tests[] = {
        {"GEMM library calls from backend_config", test_gemm_calls},
        {"library convolutions, forward and gradients", test_conv_calls},
        {"fusions: nested sums, cycles, no dots", test_fusions},
        {"a profile's module, by program and op name", test_profile_lookup},
        {NULL, NULL},
    };
    int rc = xpv_test_run("hlo_derive", tests, 0);
    xpv_hlo_module_free(&M);
    xpv_buf_free(&p);
    return rc;
}
