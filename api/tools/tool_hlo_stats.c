/*
 * tool_hlo_stats.c — XProf's hlo_stats tool: one row per HLO op (per
 * program), from hlo_ops.c, with XProf's column ids where XProf has the
 * column and the profile carries its data.
 *
 * Shares are percentages (0–100) of the summed self time of every op, as
 * the ids say (XProf's own DataTable puts fractions under these ids).
 * FLOP rates are GFLOP/s and bandwidth GiB/s over the ops' time, as XProf
 * computes them, where the ops carry flops / bytes_accessed (TPU) or they
 * are derived from the module's shapes (GPU dots, convolutions, GEMM and
 * convolution library calls and fusions of them: hlo_derive.h), which
 * flops_source / bytes_source say per row ("measured" or "derived");
 * XProf's columns that need data no profile here carries (HLO text, DMA
 * stalls, per-memory bandwidths, rematerialization) are left out, and
 * bound_by is left to roofline_model, which knows the device's peaks.
 */
#include "../hlo/hlo_ops.h"
#include "../hlo/hlo_table.h"

static const xpv_table_col COLS[] = {
    {"rank", "Rank", XPV_COL_NUMBER},
    {"program_id", "Program id", XPV_COL_STRING},
    {"hlo_module", "Module", XPV_COL_STRING},
    {"category", "HLO op category", XPV_COL_STRING},
    {"hlo_op_name", "HLO op name", XPV_COL_STRING},
    {"tf_op_name", "Framework op name", XPV_COL_STRING},
    {"source_info", "Source", XPV_COL_STRING},
    {"occurrences", "#Occurrences", XPV_COL_NUMBER},
    {"total_time", "Total time (µs)", XPV_COL_NUMBER},
    {"avg_time", "Avg. time (µs)", XPV_COL_NUMBER},
    {"total_self_time", "Total self time (µs)", XPV_COL_NUMBER},
    {"avg_self_time", "Avg. self time (µs)", XPV_COL_NUMBER},
    {"total_self_time_percent", "Total self time (%)", XPV_COL_NUMBER},
    {"cumulative_total_self_time_percent", "Cumulative total self time (%)", XPV_COL_NUMBER},
    {"model_flop_rate", "Model GFLOP/s", XPV_COL_NUMBER},
    {"normalized_flop_rate", "Normalized GFLOP/s", XPV_COL_NUMBER},
    {"measured_memory_bw", "Measured memory BW (GiB/s)", XPV_COL_NUMBER},
    {"operational_intensity", "Operational intensity (FLOP/byte)", XPV_COL_NUMBER},
    {"flops", "FLOPs", XPV_COL_NUMBER},
    {"model_flops", "Model FLOPs", XPV_COL_NUMBER},
    {"bytes_accessed", "Bytes accessed", XPV_COL_NUMBER},
    {"flops_source", "FLOPs source", XPV_COL_STRING},
    {"bytes_source", "Bytes source", XPV_COL_STRING},
};

enum {
    C_RANK,
    C_PROGRAM,
    C_MODULE,
    C_CATEGORY,
    C_NAME,
    C_TF_OP,
    C_SOURCE,
    C_OCC,
    C_TOTAL,
    C_AVG,
    C_SELF,
    C_AVG_SELF,
    C_SELF_PCT,
    C_CUM_PCT,
    C_MODEL_RATE,
    C_RATE,
    C_BW,
    C_INTENSITY,
    C_FLOPS,
    C_MODEL_FLOPS,
    C_BYTES,
    C_FLOPS_SOURCE,
    C_BYTES_SOURCE,
    NCOLS
};

int xpv_tool_hlo_stats_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    return xpv_hlo_ops_has_data(db, s, 0, err);
}

static void put_row(xpv_table *t, const xpv_hlo_ops *ops, size_t i, int64_t *cumulative)
{
    const xpv_hlo_op *o = &ops->ops[i];
    size_t r = xpv_table_add_row(t);
    xpv_table_set_int(t, r, C_RANK, (int64_t)i + 1);
    xpv_hlo_table_set_op_names(t, r, o, C_PROGRAM, C_MODULE, C_CATEGORY, C_NAME);
    xpv_hlo_table_set_str(t, r, C_TF_OP, o->framework_op);
    xpv_hlo_table_set_str(t, r, C_SOURCE, o->source);
    xpv_table_set_int(t, r, C_OCC, o->occurrences);
    xpv_table_set_ps_us(t, r, C_TOTAL, (double)o->total_ps);
    xpv_table_set_ps_us(t, r, C_SELF, (double)o->self_ps);
    if (o->occurrences) {
        xpv_table_set_double(t, r, C_AVG, (double)o->total_ps / (1e6 * (double)o->occurrences));
        xpv_table_set_double(t, r, C_AVG_SELF, (double)o->self_ps / (1e6 * (double)o->occurrences));
    }
    *cumulative += o->self_ps;
    if (ops->total_self_ps > 0) {
        xpv_table_set_double(t, r, C_SELF_PCT,
                             100.0 * (double)o->self_ps / (double)ops->total_self_ps);
        xpv_table_set_double(t, r, C_CUM_PCT,
                             100.0 * (double)*cumulative / (double)ops->total_self_ps);
    }
    xpv_hlo_table_set_rate(t, r, C_MODEL_RATE, o->has_model_flops, o->model_flops, o->total_ps);
    xpv_hlo_table_set_rate(t, r, C_RATE, o->has_flops, o->flops, o->total_ps);
    xpv_hlo_table_set_bw(t, r, C_BW, o->has_bytes, o->bytes, o->total_ps);
    if (o->has_flops && o->has_bytes && o->bytes > 0)
        xpv_table_set_double(t, r, C_INTENSITY, (double)(o->flops / o->bytes));
    xpv_hlo_table_set_sum(t, r, C_FLOPS, o->has_flops, o->flops);
    xpv_hlo_table_set_sum(t, r, C_MODEL_FLOPS, o->has_model_flops, o->model_flops);
    xpv_hlo_table_set_sum(t, r, C_BYTES, o->has_bytes, o->bytes);
    xpv_hlo_table_set_source(t, r, C_FLOPS_SOURCE, o->has_flops && !o->flops_derived,
                             o->flops_derived);
    xpv_hlo_table_set_source(t, r, C_BYTES_SOURCE, o->has_bytes && !o->bytes_derived,
                             o->bytes_derived);
}

xpv_table *xpv_tool_hlo_stats(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    _Static_assert(sizeof COLS / sizeof COLS[0] == NCOLS, "a column id per column");
    xpv_hlo_ops ops;
    if (xpv_hlo_ops_collect(db, s, &ops, err) != 0) return NULL;
    xpv_table *t = xpv_table_new(COLS, NCOLS);
    int64_t cumulative = 0;
    for (size_t i = 0; i < ops.n; i++)
        put_row(t, &ops, i, &cumulative);
    xpv_hlo_table_set_properties(t, &ops);
    xpv_hlo_ops_free(&ops);
    return t;
}
