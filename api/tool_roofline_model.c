/*
 * tool_roofline_model.c — XProf's roofline_model tool: each HLO op that
 * carries flops and bytes_accessed (TPU XLA ops) as a point, its
 * operational intensity against its achieved FLOP rate, under the device's
 * roof where the profile states its peaks.
 *
 * Which figures are which (the table's properties say it too):
 *  - measured, by the profiler: occurrences and times (the op events), and
 *    the flops, bytes_accessed the ops carry (XLA's cost model, per op);
 *  - stated by the device plane: peak_teraflops_per_second and
 *    peak_hbm_bw_gigabytes_per_second (profile facts, kept by the reader
 *    only when every device plane of the host states the same);
 *  - derived here: operational intensity (flops / bytes), achieved GFLOP/s
 *    and GiB/s (over the ops' time), and, only with both peaks, the ridge
 *    point, the roof at the op's intensity (min(peak FLOP/s, intensity x
 *    peak bandwidth)), the op's share of it, and what bounds it.
 * Without peaks those last columns are null: no table of chips is guessed.
 */
#include "hlo_ops.h"
#include "hlo_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const xpv_table_col COLS[] = {
    {"rank", "Rank", XPV_COL_NUMBER},
    {"program_id", "Program id", XPV_COL_STRING},
    {"hlo_module", "Module", XPV_COL_STRING},
    {"category", "HLO op category", XPV_COL_STRING},
    {"hlo_op_name", "HLO op name", XPV_COL_STRING},
    {"occurrences", "#Occurrences", XPV_COL_NUMBER},
    {"total_time", "Total time (us)", XPV_COL_NUMBER},
    {"total_self_time", "Total self time (us)", XPV_COL_NUMBER},
    {"total_self_time_percent", "Total self time (%)", XPV_COL_NUMBER},
    {"flops", "FLOPs", XPV_COL_NUMBER},
    {"bytes_accessed", "Bytes accessed", XPV_COL_NUMBER},
    {"operational_intensity", "Operational intensity (FLOP/byte)", XPV_COL_NUMBER},
    {"measured_flop_rate", "Achieved GFLOP/s", XPV_COL_NUMBER},
    {"measured_memory_bw", "Achieved memory BW (GiB/s)", XPV_COL_NUMBER},
    {"roofline_flop_rate", "Roofline GFLOP/s at this intensity", XPV_COL_NUMBER},
    {"roofline_efficiency_percent", "Achieved / roofline (%)", XPV_COL_NUMBER},
    {"bound_by", "Bound by", XPV_COL_STRING},
};

enum {
    C_RANK,
    C_PROGRAM,
    C_MODULE,
    C_CATEGORY,
    C_NAME,
    C_OCC,
    C_TOTAL,
    C_SELF,
    C_SELF_PCT,
    C_FLOPS,
    C_BYTES,
    C_INTENSITY,
    C_RATE,
    C_BW,
    C_ROOF,
    C_EFFICIENCY,
    C_BOUND,
    NCOLS
};

typedef struct {
    double tflops, gbps; /* > 0 when every profile of the scope states the same */
    char tflops_text[64], gbps_text[64];
} peaks;

int xpv_tool_roofline_model_has_data(sqlite3 *db, const xpv_tool_scope *s)
{
    return xpv_hlo_ops_has_data(db, s, 1);
}

/* The scope's peak figures from its profiles' facts: a figure is kept only
 * when every profile states it, the same. Returns 0, or -1 with err. */
static int read_peaks(sqlite3 *db, const xpv_tool_scope *s, peaks *pk, xpv_err *err)
{
    static const char *const KEYS[2] = {"$.peak_teraflops_per_second",
                                        "$.peak_hbm_bw_gigabytes_per_second"};
    memset(pk, 0, sizeof *pk);
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db,
                               "SELECT count(DISTINCT v), count(v), count(*), max(v) FROM"
                               " (SELECT json_extract(facts, ?2) AS v FROM profiles WHERE id IN"
                               " (SELECT value FROM json_each(?1)))",
                               -1, &st, NULL) != SQLITE_OK)
            return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
        xpv_tool_bind_ids(st, 1, s);
        sqlite3_bind_text(st, 2, KEYS[k], -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW) {
            xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
            sqlite3_finalize(st);
            return -1;
        }
        int same = sqlite3_column_int64(st, 0) == 1 &&
                   sqlite3_column_int64(st, 1) == sqlite3_column_int64(st, 2);
        const char *v = (const char *)sqlite3_column_text(st, 3);
        char *end = NULL;
        double d = same && v ? strtod(v, &end) : 0;
        if (end && !*end && d > 0) {
            *(k ? &pk->gbps : &pk->tflops) = d;
            snprintf(k ? pk->gbps_text : pk->tflops_text, sizeof pk->tflops_text, "%s", v);
        }
        sqlite3_finalize(st);
    }
    return 0;
}

/* The roof, the share of it achieved, and the bound, at o's intensity. */
static void put_roof(xpv_table *t, size_t r, const xpv_hlo_op *o, const peaks *pk)
{
    if (!(pk->tflops > 0 && pk->gbps > 0) || o->bytes <= 0 || o->total_ps <= 0) return;
    double intensity = (double)(o->flops / o->bytes);
    double peak = pk->tflops * 1000, ridge = peak / pk->gbps; /* GFLOP/s, FLOP/byte */
    double roof = intensity < ridge ? intensity * pk->gbps : peak;
    xpv_table_set_double(t, r, C_ROOF, roof);
    if (roof > 0)
        xpv_table_set_double(t, r, C_EFFICIENCY,
                             100.0 * (double)(o->flops * 1000 / o->total_ps) / roof);
    const char *bound = intensity < ridge ? "Memory" : "Compute";
    xpv_table_set_text(t, r, C_BOUND, bound, strlen(bound));
}

static void put_row(xpv_table *t, const xpv_hlo_ops *ops, const xpv_hlo_op *o, const peaks *pk)
{
    size_t r = xpv_table_add_row(t);
    xpv_table_set_int(t, r, C_RANK, (int64_t)r + 1);
    xpv_hlo_table_set_op_names(t, r, o, C_PROGRAM, C_MODULE, C_CATEGORY, C_NAME);
    xpv_table_set_int(t, r, C_OCC, o->occurrences);
    xpv_table_set_ps_us(t, r, C_TOTAL, (double)o->total_ps);
    xpv_table_set_ps_us(t, r, C_SELF, (double)o->self_ps);
    if (ops->total_self_ps > 0)
        xpv_table_set_double(t, r, C_SELF_PCT,
                             100.0 * (double)o->self_ps / (double)ops->total_self_ps);
    xpv_hlo_table_set_sum(t, r, C_FLOPS, 1, o->flops);
    xpv_hlo_table_set_sum(t, r, C_BYTES, 1, o->bytes);
    if (o->bytes > 0) xpv_table_set_double(t, r, C_INTENSITY, (double)(o->flops / o->bytes));
    xpv_hlo_table_set_rate(t, r, C_RATE, 1, o->flops, o->total_ps);
    xpv_hlo_table_set_bw(t, r, C_BW, 1, o->bytes, o->total_ps);
    put_roof(t, r, o, pk);
}

static void set_peak_properties(xpv_table *t, const peaks *pk)
{
    if (pk->tflops > 0) xpv_table_set_property(t, "peak_teraflops_per_second", pk->tflops_text);
    if (pk->gbps > 0) xpv_table_set_property(t, "peak_hbm_bw_gigabytes_per_second", pk->gbps_text);
    if (pk->tflops > 0 && pk->gbps > 0) {
        xpv_buf b = {0};
        xpv_buf_json_double(&b, pk->tflops * 1000 / pk->gbps);
        xpv_buf_putc(&b, 0);
        xpv_table_set_property(t, "ridge_point", b.data);
        xpv_buf_free(&b);
    }
    xpv_table_set_property(t, "peaks_source",
                           pk->tflops > 0 || pk->gbps > 0 ? "device plane stats"
                                                          : "not stated by the profile");
    xpv_table_set_property(t, "measured",
                           "occurrences, total_time, total_self_time (op events); flops,"
                           " bytes_accessed (carried by each op)");
    xpv_table_set_property(t, "derived",
                           "total_self_time_percent, operational_intensity,"
                           " measured_flop_rate, measured_memory_bw, roofline_flop_rate,"
                           " roofline_efficiency_percent, bound_by, ridge_point");
}

xpv_table *xpv_tool_roofline_model(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    _Static_assert(sizeof COLS / sizeof COLS[0] == NCOLS, "a column id per column");
    peaks pk;
    if (read_peaks(db, s, &pk, err) != 0) return NULL;
    xpv_hlo_ops ops;
    if (xpv_hlo_ops_collect(db, s, &ops, err) != 0) return NULL;
    xpv_table *t = xpv_table_new(COLS, NCOLS);
    for (size_t i = 0; i < ops.n; i++)
        if (ops.ops[i].has_flops && ops.ops[i].has_bytes) put_row(t, &ops, &ops.ops[i], &pk);
    xpv_hlo_table_set_properties(t, &ops);
    set_peak_properties(t, &pk);
    xpv_hlo_ops_free(&ops);
    return t;
}
