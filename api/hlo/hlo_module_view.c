/*
 * hlo_module_view.c — each compiled module of a profile as readable HLO
 * text, with every instruction's device time.
 *
 * The text follows XLA's own printing: `HloModule <name>`, then each
 * computation (`ENTRY` for the entry one) with one line per instruction,
 * `[ROOT ]%name = shape opcode(%operand, ...)` and its custom-call target
 * and metadata (op_name, source_file:source_line). Device time comes from
 * the HLO tools' op sums (hlo_ops.h), matched by (program id, instruction
 * name); an instruction no device event names has none (null, never 0).
 * FLOPs are derived from shapes for dots, convolutions, GEMM and
 * convolution library calls and fusions of them (hlo_derive.h), one
 * execution's, marked "derived": the profile's own `flops` stats stay with
 * hlo_stats.
 */
#include "../api.h"
#include "../api_util.h"
#include "hlo_derive.h"
#include "hlo_file.h"
#include "hlo_ops.h"
#include "../../common/xpv_lower_bound.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    const xpv_hlo_op *op;
} op_ref;

typedef struct {
    op_ref *refs; /* the module's ops, by name */
    size_t n;
} op_index;

static int cmp_ref(const void *a, const void *b)
{
    return strcmp(((const op_ref *)a)->name, ((const op_ref *)b)->name);
}

static void index_ops(const xpv_hlo_ops *ops, uint64_t program, op_index *ix)
{
    ix->refs = xpv_xmalloc((ops->n ? ops->n : 1) * sizeof *ix->refs);
    ix->n = 0;
    for (size_t i = 0; i < ops->n; i++)
        if (ops->ops[i].has_program && ops->ops[i].program_id == program)
            ix->refs[ix->n++] = (op_ref){ops->ops[i].name, &ops->ops[i]};
    qsort(ix->refs, ix->n, sizeof *ix->refs, cmp_ref);
}

static const xpv_hlo_op *find_op(const op_index *ix, xpv_hlo_str name)
{
    char key[512];
    if (!name.p || name.n >= sizeof key) return NULL;
    memcpy(key, name.p, name.n);
    key[name.n] = 0;
    op_ref k = {key, NULL}, *r = xpv_sorted_find(&k, ix->refs, ix->n, sizeof *ix->refs, cmp_ref);
    return r ? r->op : NULL;
}

/* ---- the text ---- */

static void put_operands(xpv_buf *b, const xpv_hlo_module *m, const xpv_hlo_instr *in)
{
    for (uint32_t k = 0; k < in->operands.n; k++) {
        const xpv_hlo_instr *o = xpv_hlo_instr_by_id(m, in->operands.v[k]);
        xpv_buf_puts(b, k ? ", %" : "%");
        if (o && o->name.p)
            xpv_buf_append(b, o->name.p, o->name.n);
        else
            xpv_buf_printf(b, "<id %" PRId64 ">", in->operands.v[k]);
    }
}

/* One instruction as a line of HLO text (no newline). */
static void instr_line(xpv_buf *b, const xpv_hlo_module *m, const xpv_hlo_instr *in, int root)
{
    xpv_buf_puts(b, root ? "ROOT %" : "%");
    if (in->name.p) xpv_buf_append(b, in->name.p, in->name.n);
    xpv_buf_puts(b, " = ");
    xpv_hlo_put_shape(b, &in->shape);
    xpv_buf_putc(b, ' ');
    if (in->opcode.p) xpv_buf_append(b, in->opcode.p, in->opcode.n);
    xpv_buf_putc(b, '(');
    /* proto3 leaves out parameter_number 0 */
    if (in->opcode.n == 9 && !memcmp(in->opcode.p, "parameter", 9))
        xpv_buf_printf(b, "%" PRId64, in->parameter_number > 0 ? in->parameter_number : 0);
    put_operands(b, m, in);
    xpv_buf_putc(b, ')');
    if (in->custom_call_target.p)
        xpv_buf_printf(b, ", custom_call_target=\"%.*s\"", (int)in->custom_call_target.n,
                       in->custom_call_target.p);
    if (!in->op_name.p && !in->source_file.p) return;
    xpv_buf_puts(b, ", metadata={");
    if (in->op_name.p) xpv_buf_printf(b, "op_name=\"%.*s\"", (int)in->op_name.n, in->op_name.p);
    if (in->source_file.p)
        xpv_buf_printf(b, "%ssource_file=\"%.*s\" source_line=%d", in->op_name.p ? " " : "",
                       (int)in->source_file.n, in->source_file.p, (int)in->source_line);
    xpv_buf_putc(b, '}');
}

static int contains_ci(const char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    if (k == 0) return 1;
    for (size_t i = 0; i + k <= n; i++) {
        size_t j = 0;
        while (j < k && tolower((unsigned char)hay[i + j]) == tolower((unsigned char)needle[j]))
            j++;
        if (j == k) return 1;
    }
    return 0;
}

/* ---- JSON ---- */

typedef struct {
    const xpv_hlo_module *m;
    const op_index *ops;
    const char *q;
    xpv_buf line;
    int64_t matches;
} view;

static void put_instr(xpv_buf *b, view *v, const xpv_hlo_instr *in, int root)
{
    const xpv_hlo_op *op = find_op(v->ops, in->name);
    xpv_hlo_cost cost;
    xpv_buf_puts(b, "{\"id\":");
    xpv_api_put_int(b, in->id);
    xpv_buf_puts(b, ",\"name\":");
    xpv_hlo_put_str(b, in->name);
    xpv_buf_puts(b, ",\"opcode\":");
    xpv_hlo_put_str(b, in->opcode);
    xpv_buf_printf(b, ",\"root\":%s,\"text\":", root ? "true" : "false");
    xpv_buf_json_str(b, v->line.data, v->line.len);
    xpv_buf_puts(b, ",\"op_name\":");
    xpv_hlo_put_str(b, in->op_name);
    xpv_hlo_str file = {NULL, 0}, function;
    int32_t line = 0;
    if (!xpv_hlo_source(v->m, in, &file, &line, &function)) file.p = NULL, file.n = 0;
    xpv_buf_puts(b, ",\"source_file\":");
    xpv_hlo_put_str(b, file); /* source_file, or the stack frame newer JAX writes instead */
    xpv_buf_puts(b, ",\"source_line\":");
    if (line > 0)
        xpv_api_put_int(b, line);
    else
        xpv_buf_puts(b, "null");
    xpv_buf_puts(b, ",\"flops\":");
    if (xpv_hlo_instr_cost(v->m, in, &cost))
        xpv_buf_printf(b, "%.0Lf,\"flops_source\":\"derived\"", cost.flops);
    else
        xpv_buf_puts(b, "null,\"flops_source\":null");
    xpv_buf_puts(b, ",\"occurrences\":");
    if (op) {
        xpv_api_put_int(b, op->occurrences);
        xpv_buf_puts(b, ",\"device_time_us\":");
        xpv_api_put_us(b, op->total_ps / 1000);
    } else {
        xpv_buf_puts(b, "null,\"device_time_us\":null");
    }
    xpv_buf_putc(b, '}');
}

static void put_computation(xpv_buf *b, xpv_buf *text, view *v, const xpv_hlo_computation *c)
{
    const xpv_hlo_module *m = v->m;
    int entry = c->id == m->entry_computation_id && c->id >= 0;
    xpv_buf_puts(b, "{\"name\":");
    xpv_hlo_put_str(b, c->name);
    xpv_buf_printf(b, ",\"id\":%" PRId64 ",\"entry\":%s,\"instructions\":[", c->id,
                   entry ? "true" : "false");
    xpv_buf_printf(text, "\n%s%%%.*s {\n", entry ? "ENTRY " : "", (int)c->name.n,
                   c->name.p ? c->name.p : "");
    int n = 0;
    for (uint32_t i = c->first; i < c->first + c->n; i++) {
        const xpv_hlo_instr *in = &m->instrs[i];
        int root = in->id == c->root_id && in->id >= 0;
        xpv_buf_reset(&v->line);
        instr_line(&v->line, m, in, root);
        xpv_buf_puts(text, "  ");
        xpv_buf_append(text, v->line.data, v->line.len);
        xpv_buf_putc(text, '\n');
        if (v->q && !contains_ci(v->line.data, v->line.len, v->q)) continue;
        if (n++) xpv_buf_putc(b, ',');
        put_instr(b, v, in, root);
        v->matches++;
    }
    xpv_buf_puts(b, "]}");
    xpv_buf_puts(text, "}\n");
}

/* What the module view's answer needs besides the module. */
typedef struct {
    sqlite3 *db;
    int64_t id;
    const char *q;
    struct xpv_hlo_cache *cache;
} view_request;

static int put_module(void *ctx, const xpv_hlo_file *f, const xpv_hlo_blob *bl, xpv_buf *out)
{
    const view_request *rq = ctx;
    sqlite3 *db = rq->db;
    int64_t id = rq->id;
    const char *q = rq->q;
    struct xpv_hlo_cache *cache = rq->cache;
    xpv_hlo_module m;
    xpv_err err = {{0}};
    if (xpv_hlo_file_decode(f, bl, &m, &err) != 0) return xpv_api_error(out, 422, "%s", err.msg);
    xpv_hlo_ops ops = {0};
    xpv_tool_scope s = {.ids = &id, .n = 1, .hlo_cache = cache};
    int has_ops =
        xpv_hlo_ops_has_data(db, &s, 0, &err) == 1 && xpv_hlo_ops_collect(db, &s, &ops, &err) == 0;
    op_index ix;
    index_ops(&ops, bl->program_id, &ix);
    view v = {&m, &ix, q && *q ? q : NULL, {0}, 0};
    xpv_buf text = {0};
    xpv_buf_printf(&text, "HloModule %.*s\n", (int)m.name.n, m.name.p ? m.name.p : "");
    xpv_buf_puts(out, ",\"module\":{\"name\":");
    xpv_hlo_put_str(out, bl->name);
    xpv_buf_printf(out, ",\"program_id\":\"%" PRIu64 "\",\"hlo_name\":", bl->program_id);
    xpv_hlo_put_str(out, m.name);
    xpv_buf_printf(out, ",\"device_times\":%s},\"computations\":[", has_ops ? "true" : "false");
    for (uint32_t c = 0; c < m.ncomputations; c++) {
        if (c) xpv_buf_putc(out, ',');
        put_computation(out, &text, &v, &m.computations[c]);
    }
    xpv_buf_printf(out, "],\"matches\":%" PRId64 ",\"text\":", v.matches);
    xpv_buf_json_str(out, text.data, text.len);
    xpv_buf_putc(out, '}');
    xpv_buf_free(&text);
    xpv_buf_free(&v.line);
    free(ix.refs);
    xpv_hlo_ops_free(&ops);
    xpv_hlo_module_free(&m);
    return 200;
}

static void put_list(void *ctx, const xpv_hlo_file *f, xpv_buf *out)
{
    (void)ctx;
    xpv_buf_puts(out, ",\"modules\":[");
    for (size_t i = 0; i < f->n; i++) {
        xpv_hlo_module m;
        xpv_err err = {{0}};
        xpv_buf_puts(out, i ? ",{\"name\":" : "{\"name\":");
        xpv_hlo_put_str(out, f->blobs[i].name);
        xpv_buf_printf(out, ",\"program_id\":\"%" PRIu64 "\",\"proto_bytes\":%zu",
                       f->blobs[i].program_id, f->blobs[i].len);
        if (xpv_hlo_file_decode(f, &f->blobs[i], &m, &err) != 0) {
            xpv_buf_puts(out, ",\"hlo_name\":null,\"computations\":null,\"instructions\":null,"
                              "\"error\":");
            xpv_buf_json_str(out, err.msg, strlen(err.msg));
        } else {
            xpv_buf_puts(out, ",\"hlo_name\":");
            xpv_hlo_put_str(out, m.name);
            xpv_buf_printf(out, ",\"computations\":%u,\"instructions\":%u,\"error\":null",
                           m.ncomputations, m.ninstrs);
            xpv_hlo_module_free(&m);
        }
        xpv_buf_putc(out, '}');
    }
    xpv_buf_puts(out, "]}");
}

int xpv_api_hlo_module(sqlite3 *db, int64_t id, const char *module, const char *q,
                       struct xpv_hlo_cache *hlo_cache, xpv_buf *out)
{
    view_request rq = {db, id, q, hlo_cache};
    const xpv_hlo_answer a = {put_module, put_list, &rq};
    return xpv_hlo_file_answer(db, id, module, &a, out);
}
