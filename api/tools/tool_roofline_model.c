/*
 * tool_roofline_model.c — XProf's roofline_model tool: each HLO op with
 * flops and bytes (carried by TPU XLA ops, or derived from the module's
 * shapes on GPU: hlo_derive.h) as a point, its operational intensity
 * against its achieved FLOP rate, under the device's roof where its peaks
 * are known.
 *
 * Which figures are which (the table's properties say it too):
 *  - measured, by the profiler: occurrences and times (the op events), and
 *    the flops, bytes_accessed the ops carry (XLA's cost model, per op);
 *  - derived from HLO shapes where the ops carry none (flops_source /
 *    bytes_source "derived", per row);
 *  - stated by the device plane: peak_teraflops_per_second and
 *    peak_hbm_bw_gigabytes_per_second (TPU; profile facts, kept by the
 *    reader only when every device plane of the host states the same), or
 *    memory_bandwidth (GPU, bytes/s), when every device of the scope states
 *    the same;
 *  - derived from the device plane: a GPU's FP32 peak from its compute
 *    capability, SM count and clock (gpu_peaks.h; NVIDIA only);
 *  - derived here: operational intensity (flops / bytes), achieved GFLOP/s
 *    and GiB/s (over the ops' time), and, only with both peaks, the ridge
 *    point, the roof at the op's intensity (min(peak FLOP/s, intensity x
 *    peak bandwidth)), the op's share of it, and what bounds it.
 * Without peaks those last columns are null: no table of chips is guessed.
 */
#include "gpu_peaks.h"
#include "../hlo/hlo_derive.h"
#include "../hlo/hlo_ops.h"
#include "../hlo/hlo_table.h"
#include "../../store/profiles.h"

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
    {"total_time", "Total time (µs)", XPV_COL_NUMBER},
    {"total_self_time", "Total self time (µs)", XPV_COL_NUMBER},
    {"total_self_time_percent", "Total self time (%)", XPV_COL_NUMBER},
    {"flops", "FLOPs", XPV_COL_NUMBER},
    {"bytes_accessed", "Bytes accessed", XPV_COL_NUMBER},
    {"operational_intensity", "Operational intensity (FLOP/byte)", XPV_COL_NUMBER},
    {"measured_flop_rate", "Achieved GFLOP/s", XPV_COL_NUMBER},
    {"measured_memory_bw", "Achieved memory BW (GiB/s)", XPV_COL_NUMBER},
    {"roofline_flop_rate", "Roofline GFLOP/s at this intensity", XPV_COL_NUMBER},
    {"roofline_efficiency_percent", "Achieved / roofline (%)", XPV_COL_NUMBER},
    {"bound_by", "Bound by", XPV_COL_STRING},
    {"flops_source", "FLOPs source", XPV_COL_STRING},
    {"bytes_source", "Bytes source", XPV_COL_STRING},
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
    C_FLOPS_SOURCE,
    C_BYTES_SOURCE,
    NCOLS
};

typedef struct {
    double tflops, gbps; /* > 0 when known for every profile of the scope, the same */
    char tflops_text[64], gbps_text[64];
    char tflops_source[200], gbps_source[120];
} peaks;

int xpv_tool_roofline_model_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    int rc = xpv_hlo_ops_has_data(db, s, 1, err);
    if (rc != 0) return rc;
    /* no op carries its cost: points where a profile with ops derives some,
     * found from its modules and strings rather than a scan of its events
     * (this runs whenever the tools are listed) */
    xpv_err derive_err = {{0}};
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        xpv_tool_scope one = {.ids = &s->ids[i], .n = 1, .hlo_cache = s->hlo_cache};
        rc = xpv_hlo_ops_has_data(db, &one, 0, err);
        /* modules that cannot be read (a file changed since indexing) give
         * no points, rather than failing the whole list of tools; the HLO
         * tables say why (flops_derive_error) */
        if (rc == 1) rc = xpv_hlo_derived_any(db, s->ids[i], &derive_err) == 1;
    }
    return rc;
}

static void set_figure(double *v, char *text, double d)
{
    xpv_buf b = {0};
    xpv_buf_json_double(&b, d);
    snprintf(text, 64, "%.*s", (int)b.len, b.data ? b.data : "");
    xpv_buf_free(&b);
    *v = d;
}

/* The GPU device stats every device of the scope states alike. */
typedef struct {
    char vendor[64];
    int64_t major, minor, sms, clock_khz, bandwidth; /* -1 unknown */
} gpu_stats;

static int read_gpu_stats(sqlite3 *db, const xpv_tool_scope *s, gpu_stats *g, xpv_err *err)
{
    static const char *const STATS[] = {"device_vendor",
                                        "compute_cap_major",
                                        "compute_cap_minor",
                                        "core_count",
                                        "clock_rate",
                                        "memory_bandwidth",
                                        NULL};
    static const char *const *const NAMES = STATS + 1;
    int64_t *to[] = {&g->major, &g->minor, &g->sms, &g->clock_khz, &g->bandwidth};
    xpv_store_cursor c;
    xpv_store_device_stat row;
    memset(g, 0, sizeof *g);
    g->major = g->minor = g->sms = g->clock_khz = g->bandwidth = -1;
    if (xpv_store_profiles_open_device_stats(&c, db, s->ids, s->n, STATS, err) != 0) return -1;
    int rc;
    while ((rc = xpv_store_profiles_device_stat_next(&c, &row, err)) == 1) {
        const char *stat = row.stat.s, *v = row.value.s;
        if (!stat || !v || row.values != 1 || row.profiles != (int64_t)s->n)
            continue; /* devices disagree, or a profile does not state it */
        if (strcmp(stat, "device_vendor") == 0) snprintf(g->vendor, sizeof g->vendor, "%s", v);
        for (size_t k = 0; k < sizeof to / sizeof to[0]; k++) {
            char *end;
            long long n = strtoll(v, &end, 10);
            if (strcmp(stat, NAMES[k]) == 0 && !*end && n >= 0) *to[k] = n;
        }
    }
    xpv_store_cursor_close(&c);
    return rc;
}

/* A GPU's peaks where the profile states none: bandwidth as its planes
 * state it, FP32 FLOP/s from the capability table (gpu_peaks.h). */
static int gpu_peaks(sqlite3 *db, const xpv_tool_scope *s, peaks *pk, xpv_err *err)
{
    gpu_stats g;
    if (read_gpu_stats(db, s, &g, err) != 0) return -1;
    if (pk->gbps <= 0 && g.bandwidth > 0) {
        set_figure(&pk->gbps, pk->gbps_text, (double)g.bandwidth / 1e9);
        snprintf(pk->gbps_source, sizeof pk->gbps_source,
                 "stated: device plane memory_bandwidth (bytes/s)");
    }
    double flops;
    if (pk->tflops > 0 || g.major < 0 || g.minor < 0) return 0;
    if (xpv_gpu_peak_fp32_flops(g.vendor, (int)g.major, (int)g.minor, g.sms, g.clock_khz, &flops)) {
        set_figure(&pk->tflops, pk->tflops_text, flops / 1e12);
        snprintf(pk->tflops_source, sizeof pk->tflops_source,
                 "derived: FP32 peak = %lld SMs x %d results/clock/SM (CUDA C++ Programming"
                 " Guide, compute capability %lld.%lld) x 2 x clock_rate %lld kHz",
                 (long long)g.sms, xpv_gpu_fp32_per_clock_per_sm((int)g.major, (int)g.minor),
                 (long long)g.major, (long long)g.minor, (long long)g.clock_khz);
    } else {
        snprintf(pk->tflops_source, sizeof pk->tflops_source,
                 "unknown: no documented FP32 rate for %s compute capability %lld.%lld",
                 g.vendor[0] ? g.vendor : "this device", (long long)g.major, (long long)g.minor);
    }
    return 0;
}

/* The scope's peak figures from its profiles' facts: a figure is kept only
 * when every profile states it, the same. Returns 0, or -1 with err. */
static int read_peaks(sqlite3 *db, const xpv_tool_scope *s, peaks *pk, xpv_err *err)
{
    static const char *const KEYS[2] = {"$.peak_teraflops_per_second",
                                        "$.peak_hbm_bw_gigabytes_per_second"};
    memset(pk, 0, sizeof *pk);
    for (int k = 0; k < 2; k++) {
        xpv_store_fact_agreement a;
        char v[256];
        if (xpv_store_profiles_fact(db, s->ids, s->n, KEYS[k], &a, v, sizeof v, err) != 0)
            return -1;
        int same = a.values == 1 && a.stating == a.profiles;
        char *end = NULL;
        double d = same && a.value_known ? strtod(v, &end) : 0;
        if (end && !*end && d > 0) {
            *(k ? &pk->gbps : &pk->tflops) = d;
            snprintf(k ? pk->gbps_text : pk->tflops_text, sizeof pk->tflops_text, "%.*s",
                     (int)sizeof pk->tflops_text - 1, v);
            snprintf(k ? pk->gbps_source : pk->tflops_source, sizeof pk->gbps_source,
                     "stated: device plane %s", KEYS[k] + 2);
        }
    }
    return pk->tflops > 0 && pk->gbps > 0 ? 0 : gpu_peaks(db, s, pk, err);
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
    xpv_hlo_table_set_source(t, r, C_FLOPS_SOURCE, !o->flops_derived, o->flops_derived);
    xpv_hlo_table_set_source(t, r, C_BYTES_SOURCE, !o->bytes_derived, o->bytes_derived);
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
    int derived_peak = strncmp(pk->tflops_source, "derived", 7) == 0;
    xpv_table_set_property(t, "peaks_source",
                           derived_peak                     ? "device plane stats and derived"
                           : pk->tflops > 0 || pk->gbps > 0 ? "device plane stats"
                                                            : "not stated by the profile");
    if (pk->tflops_source[0])
        xpv_table_set_property(t, "peak_teraflops_per_second_source", pk->tflops_source);
    if (pk->gbps_source[0])
        xpv_table_set_property(t, "peak_hbm_bw_gigabytes_per_second_source", pk->gbps_source);
    xpv_table_set_property(t, "measured",
                           "occurrences, total_time, total_self_time (op events); flops,"
                           " bytes_accessed where the ops carry them (flops_source,"
                           " bytes_source: measured)");
    xpv_table_set_property(t, "derived",
                           "flops, bytes_accessed where flops_source, bytes_source say derived"
                           " (from HLO shapes); total_self_time_percent, operational_intensity,"
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
