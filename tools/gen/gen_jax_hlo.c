/*
 * gen_jax_hlo.c — the compiled module of the JAX generator's profiles: an
 * xla.HloProto whose entry instructions are the kernels' hlo_op names
 * (`__cublas$gemm` calls, some batched, for GEMMs; fusions, every third
 * holding two dots, one of them in a nested fusion; collectives), with
 * shapes from which derived FLOPs can be checked.
 *
 * Invariants: instruction and computation ids are unique in the module
 * (one counter); a computation is written after every computation it calls.
 */
#include "gen_jax.h"

#include <stdio.h>

/* Field numbers of xla/service/hlo.proto and xla/xla_data.proto. */
enum { BF16 = 16, F32 = 11, S8 = 2 };

typedef struct {
    pbuf comps;      /* the computations written so far (HloModuleProto field 3) */
    int64_t next_id; /* instruction and computation ids, unique in the module */
} hlo_writer;

static void hlo_shape(pbuf *in, int num, int type, const int64_t *dims, int n)
{
    pbuf s = {0}, d = {0};
    pb_uint(&s, 2, (uint64_t)type);
    for (int i = 0; i < n; i++)
        pb_varint(&d, (uint64_t)dims[i]);
    if (n) pb_msg(&s, 3, &d);
    pb_msg(in, num, &s);
    free(s.p), free(d.p);
}

/* Starts an instruction: name, opcode, array shape, id. */
static int64_t hlo_instr(hlo_writer *w, pbuf *in, const char *name, const char *opcode, int type,
                         const int64_t *dims, int n)
{
    int64_t id = w->next_id++;
    pb_str(in, 1, name);
    pb_str(in, 2, opcode);
    if (type) hlo_shape(in, 3, type, dims, n);
    pb_uint(in, 35, (uint64_t)id);
    return id;
}

static void hlo_operands(pbuf *in, const int64_t *ids, int n)
{
    pbuf p = {0};
    for (int i = 0; i < n; i++)
        pb_varint(&p, (uint64_t)ids[i]);
    pb_msg(in, 36, &p);
    free(p.p);
}

/* Appends the instruction to the computation and frees it. */
static void hlo_add(pbuf *comp, pbuf *in)
{
    pb_msg(comp, 2, in);
    free(in->p);
    memset(in, 0, sizeof *in);
}

static int64_t hlo_param(hlo_writer *w, pbuf *comp, const char *name, int number,
                         const int64_t *dims, int n)
{
    pbuf in = {0};
    int64_t id = hlo_instr(w, &in, name, "parameter", BF16, dims, n);
    pb_uint_nz(&in, 9, (uint64_t)number);
    hlo_add(comp, &in);
    return id;
}

/* A dot of two [64,32] x [32,64] parameters, lhs dimension 1 contracted. */
static int64_t hlo_dot(hlo_writer *w, pbuf *comp, const char *name, int64_t lhs, int64_t rhs)
{
    static const int64_t out[] = {64, 64};
    pbuf in = {0}, dn = {0};
    int64_t id = hlo_instr(w, &in, name, "dot", F32, out, 2);
    hlo_operands(&in, (int64_t[]){lhs, rhs}, 2);
    pb_uint(&dn, 1, 1), pb_uint(&dn, 2, 0); /* repeated: 0 is written */
    pb_msg(&in, 30, &dn);
    free(dn.p);
    hlo_add(comp, &in);
    return id;
}

/* Ends a computation with its id and root, adding it to the module. */
static int64_t hlo_computation(hlo_writer *w, pbuf *comp, const char *name, int64_t root)
{
    int64_t id = w->next_id++;
    pb_str(comp, 1, name);
    pb_uint(comp, 5, (uint64_t)id);
    pb_uint(comp, 6, (uint64_t)root);
    pb_msg(&w->comps, 3, comp);
    free(comp->p);
    memset(comp, 0, sizeof *comp);
    return id;
}

/* The computation a fusion calls. Every third fusion holds two dots, one of
 * them in a nested fusion, so that derived FLOPs sum over nested fusions;
 * the others multiply elementwise (no dot: no derived FLOPs). */
static int64_t fused_computation(hlo_writer *w, int j)
{
    static const int64_t a[] = {64, 32}, b[] = {32, 64}, sq[] = {64, 64};
    char name[64];
    pbuf comp = {0}, in = {0};
    int64_t p0, p1, root;
    if (j % 3 == 0) {
        pbuf inner = {0};
        p0 = hlo_param(w, &inner, "inner_p0", 0, a, 2);
        p1 = hlo_param(w, &inner, "inner_p1", 1, b, 2);
        root = hlo_dot(w, &inner, "inner_dot", p0, p1);
        snprintf(name, sizeof name, "nested_computation.%d", j);
        int64_t nested = hlo_computation(w, &inner, name, root);
        p0 = hlo_param(w, &comp, "p0", 0, a, 2);
        p1 = hlo_param(w, &comp, "p1", 1, b, 2);
        hlo_dot(w, &comp, "dot", p0, p1);
        root = hlo_instr(w, &in, "nested_fusion", "fusion", F32, sq, 2);
        hlo_operands(&in, (int64_t[]){p0, p1}, 2);
        pb_uint(&in, 38, (uint64_t)nested);
        hlo_add(&comp, &in);
    } else {
        p0 = hlo_param(w, &comp, "p0", 0, sq, 2);
        root = hlo_instr(w, &in, "multiply", "multiply", BF16, sq, 2);
        hlo_operands(&in, (int64_t[]){p0, p0}, 2);
        hlo_add(&comp, &in);
    }
    snprintf(name, sizeof name, "fused_computation.%d", j);
    return hlo_computation(w, &comp, name, root);
}
/* A GEMM library call (`__cublas$gemm`): a [M,K] x [K,N] product, batched
 * by 2 for odd j, its contracting dimensions in backend_config as XLA
 * writes them; the result is (out, workspace). */
static int64_t gemm_call(hlo_writer *w, pbuf *entry, const op *o, int j, int *param)
{
    int64_t m = 256 * (1 + j % 4), k = 512 * (1 + j % 3), n = 128 * (1 + j % 5);
    int b = j % 2; /* batch dimensions in front */
    int64_t ad[3] = {2, m, k}, bd[3] = {2, k, n}, od[3] = {2, m, n}, ws[1] = {1048576};
    char name[64], cfg[320];
    snprintf(name, sizeof name, "a.%d", j);
    int64_t lhs = hlo_param(w, entry, name, (*param)++, ad + 1 - b, 2 + b);
    snprintf(name, sizeof name, "b.%d", j);
    int64_t rhs = hlo_param(w, entry, name, (*param)++, bd + 1 - b, 2 + b);
    pbuf in = {0}, tuple = {0};
    int64_t id = hlo_instr(w, &in, o->hlo_op, "custom-call", 0, NULL, 0);
    pb_uint(&tuple, 2, 13);
    hlo_shape(&tuple, 4, BF16, od + 1 - b, 2 + b);
    hlo_shape(&tuple, 4, S8, ws, 1);
    pb_msg(&in, 3, &tuple);
    free(tuple.p);
    hlo_operands(&in, (int64_t[]){lhs, rhs}, 2);
    pb_str(&in, 28, "__cublas$gemm");
    snprintf(cfg, sizeof cfg,
             "{\"operation_queue_id\":\"0\",\"gemm_backend_config\":{\"alpha_real\":1,"
             "\"beta\":0,\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"%d\"],"
             "\"rhs_contracting_dimensions\":[\"%d\"],\"lhs_batch_dimensions\":[%s],"
             "\"rhs_batch_dimensions\":[%s]},\"epilogue\":\"DEFAULT\"}}",
             1 + b, b, b ? "\"0\"" : "", b ? "\"0\"" : "");
    pb_str(&in, 43, cfg);
    hlo_add(entry, &in);
    return id;
}

/* One entry instruction per distinct op, named as its kernels' hlo_op. */
static int64_t entry_op(hlo_writer *w, pbuf *entry, const op *o, int j, int *param)
{
    static const int64_t a[] = {64, 32}, b[] = {32, 64}, sq[] = {64, 64}, vec[] = {1024};
    char name[64];
    pbuf in = {0};
    int64_t id;
    if (o->type == OP_GEMM) return gemm_call(w, entry, o, j, param);
    if (o->type == OP_COLLECTIVE) {
        snprintf(name, sizeof name, "c.%d", j);
        int64_t x = hlo_param(w, entry, name, (*param)++, vec, 1);
        snprintf(name, sizeof name, "%.*s", (int)strcspn(o->hlo_op, "."), o->hlo_op);
        id = hlo_instr(w, &in, o->hlo_op, name, BF16, vec, 1);
        hlo_operands(&in, &x, 1);
    } else {
        int64_t called = fused_computation(w, j), x[2];
        snprintf(name, sizeof name, "x.%d", j);
        x[0] = hlo_param(w, entry, name, (*param)++, j % 3 ? sq : a, 2);
        snprintf(name, sizeof name, "y.%d", j);
        if (j % 3 == 0) x[1] = hlo_param(w, entry, name, (*param)++, b, 2);
        id = hlo_instr(w, &in, o->hlo_op, "fusion", j % 3 ? BF16 : F32, sq, 2);
        hlo_operands(&in, x, j % 3 ? 1 : 2);
        pb_uint(&in, 38, (uint64_t)called);
    }
    hlo_add(entry, &in);
    return id;
}

void xpv_gen_jax_hlo_module(const program *pg, pbuf *proto)
{
    hlo_writer w = {.next_id = 1};
    pbuf entry = {0}, mod = {0};
    int param = 0;
    int64_t root = 0;
    for (int j = 0; j < pg->distinct; j++)
        root = entry_op(&w, &entry, &pg->ops[j], j, &param);
    int64_t entry_id = hlo_computation(&w, &entry, "main.1", root);
    pb_str(&mod, 1, "jit_train_step");
    pb_str(&mod, 2, "main.1");
    pb_raw(&mod, w.comps.p, w.comps.len);
    pb_uint(&mod, 5, 1);
    pb_uint(&mod, 6, (uint64_t)entry_id);
    pb_msg(proto, 1, &mod);
    free(mod.p), free(w.comps.p);
}
