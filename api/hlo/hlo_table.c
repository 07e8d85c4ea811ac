/*
 * hlo_table.c — cells shared by the HLO tools (see hlo_table.h).
 */
#include "hlo_table.h"
#include "../api_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void xpv_hlo_table_set_str(xpv_table *t, size_t row, size_t col, const char *s)
{
    if (s) xpv_table_set_text(t, row, col, s, strlen(s));
}

void xpv_hlo_table_set_op_names(xpv_table *t, size_t row, const xpv_hlo_op *o, size_t program,
                                size_t module, size_t category, size_t name)
{
    if (o->has_program && program != XPV_HLO_SKIP) {
        char id[24];
        int n = snprintf(id, sizeof id, "%" PRIu64, o->program_id);
        xpv_table_set_text(t, row, program, id, (size_t)n);
    }
    if (module != XPV_HLO_SKIP) xpv_hlo_table_set_str(t, row, module, o->module);
    if (category != XPV_HLO_SKIP) xpv_hlo_table_set_str(t, row, category, o->category);
    if (name != XPV_HLO_SKIP) xpv_hlo_table_set_str(t, row, name, o->name);
}

void xpv_hlo_table_set_rate(xpv_table *t, size_t row, size_t col, int has, long double amount,
                            int64_t time_ps)
{
    if (has && time_ps > 0) xpv_table_set_double(t, row, col, (double)(amount * 1000 / time_ps));
}

void xpv_hlo_table_set_bw(xpv_table *t, size_t row, size_t col, int has, long double bytes,
                          int64_t time_ps)
{
    if (has && time_ps > 0)
        xpv_table_set_double(t, row, col, (double)(bytes * 1e12L / time_ps / 1073741824.0L));
}

void xpv_hlo_table_set_sum(xpv_table *t, size_t row, size_t col, int has, long double v)
{
    if (!has) return;
    if (v >= 0 && v < 9.2e18L && v == floorl(v))
        xpv_table_set_int(t, row, col, (int64_t)v);
    else
        xpv_table_set_double(t, row, col, (double)v);
}

static const char *source_text(int measured, int derived)
{
    return measured && derived ? "measured,derived" : measured ? "measured" : "derived";
}

void xpv_hlo_table_set_source(xpv_table *t, size_t row, size_t col, int measured, int derived)
{
    if (measured || derived) xpv_hlo_table_set_str(t, row, col, source_text(measured, derived));
}

/* flops_source and bytes_source over every op. */
static void set_cost_sources(xpv_table *t, const xpv_hlo_ops *ops)
{
    int fm = 0, fd = 0, bm = 0, bd = 0;
    for (size_t i = 0; i < ops->n; i++) {
        const xpv_hlo_op *o = &ops->ops[i];
        fm |= o->has_flops && !o->flops_derived, fd |= o->flops_derived;
        bm |= o->has_bytes && !o->bytes_derived, bd |= o->bytes_derived;
    }
    if (fm || fd) xpv_table_set_property(t, "flops_source", source_text(fm, fd));
    if (bm || bd) xpv_table_set_property(t, "bytes_source", source_text(bm, bd));
    if (ops->derive_error) xpv_table_set_property(t, "flops_derive_error", ops->derive_error);
}

/* As xpv_table_set_ps_us: integer ps / 1e6 prints as the exact decimal. */
static void set_us_property(xpv_table *t, const char *key, int64_t ps)
{
    xpv_buf b = {0};
    xpv_buf_json_double(&b, (double)ps / 1e6);
    xpv_buf_putc(&b, 0);
    xpv_table_set_property(t, key, b.data);
    xpv_buf_free(&b);
}

void xpv_hlo_table_set_properties(xpv_table *t, const xpv_hlo_ops *ops)
{
    int carried = 0, derived = 0;
    for (size_t i = 0; i < ops->n; i++)
        ops->ops[i].category_carried ? carried++ : derived++;
    xpv_table_set_property(t, "source",
                           ops->from_xla_ops && ops->from_kernels ? "xla_ops,kernels"
                           : ops->from_xla_ops                    ? "xla_ops"
                                                                  : "kernels");
    xpv_table_set_property(t, "category_source",
                           carried && derived ? "hlo_category,op_name"
                           : carried          ? "hlo_category"
                                              : "op_name");
    set_us_property(t, "total_self_time_us", ops->total_self_ps);
    set_cost_sources(t, ops);
    if (ops->unattributed_n) {
        char n[24];
        snprintf(n, sizeof n, "%" PRId64, ops->unattributed_n);
        xpv_table_set_property(t, "unattributed_events", n);
        set_us_property(t, "unattributed_time_us", ops->unattributed_ps);
    }
    if (ops->compile_n) { /* as /kernels keeps it apart: compile=include shows it there */
        char n[24];
        snprintf(n, sizeof n, "%" PRId64, ops->compile_n);
        xpv_table_set_property(t, "compile_excluded_events", n);
        set_us_property(t, "compile_excluded_us", ops->compile_ps);
    }
}
