/*
 * test_tool_hlo.c — the HLO tools' tables (api/tools/tool_hlo_stats.c,
 * api/tools/tool_op_profile.c, api/tools/tool_roofline_model.c, api/hlo/hlo_table.c)
 * through xpv_api_tool, over ops written through the sink, as CSV rows
 * worked out by hand: ranks and cumulative shares, rates only where
 * flops/bytes are carried (GFLOP/s, GiB/s), programs named by their
 * module, op_profile's tree order and shares at each level,
 * roofline_model's points with and without the device's peaks, and 404
 * "No Data" without HLO ops.
 */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "api/tools/tools.h"
#include "store/index_db.h"
#include "indexer/ingest.h"

#include <stdio.h>
#include <string.h>

#define PROFILE 5

/* An `XLA Ops` (tid 3) or `XLA Modules` (tid 2) event of device 0. */
static void op(xpv_sink *s, int64_t tid, const char *name, uint64_t program, const char *category,
               int64_t ts_ns, int64_t dur_ps, int64_t flops, int64_t bytes)
{
    xpv_arg args[4];
    uint32_t n = 0;
    if (tid == 3) {
        args[n++] = (xpv_arg){
            .key = xpv_sink_intern_cstr(s, "program_id"), .type = XPV_ARG_UINT, .v.u = program};
        args[n++] = (xpv_arg){.key = xpv_sink_intern_cstr(s, "hlo_category"),
                              .type = XPV_ARG_STR,
                              .v.str = xpv_sink_intern_cstr(s, category)};
    }
    if (flops >= 0)
        args[n++] =
            (xpv_arg){.key = xpv_sink_intern_cstr(s, "flops"), .type = XPV_ARG_INT, .v.i = flops};
    if (bytes >= 0)
        args[n++] = (xpv_arg){
            .key = xpv_sink_intern_cstr(s, "bytes_accessed"), .type = XPV_ARG_INT, .v.i = bytes};
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, 200, tid);
    ev.kind = tid == 3 ? XPV_KIND_XLA_OP : XPV_KIND_XLA_MODULE;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts_ns;
    ev.dur_ps = dur_ps;
    ev.dur_ns = dur_ps / 1000;
    ev.args = args;
    ev.nargs = n;
    xpv_sink_event(s, &ev);
}

/* fusion.1 (program 7, 1 ms, 2e6 flops, 2^30 bytes), fusion.2 (program 8,
 * 0.5 ms) and all-reduce.1 (program 7, 0.5 ms, no flops or bytes). */
static sqlite3 *ops_index(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), PROFILE);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_db_exec(db, "UPDATE profiles SET format='xplane'", &err), 0);
    xpv_sink *s = xpv_sink_open(db, PROFILE, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    xpv_sink_process_device(s, 200, 0);
    xpv_sink_track(s, 200, 2); /* before naming it: see test_hlo_ops.c */
    xpv_sink_track(s, 200, 3);
    xpv_sink_thread_name(s, 200, 2, "XLA Modules", 11);
    xpv_sink_thread_name(s, 200, 3, "XLA Ops", 7);
    op(s, 2, "jit_f(7)", 0, NULL, 0, 1000, -1, -1);
    op(s, 2, "jit_g(8)", 0, NULL, 5000000, 1000, -1, -1);
    op(s, 3, "fusion.1", 7, "loop fusion", 1000, 1000000000, 2000000, 1073741824);
    op(s, 3, "all-reduce.1", 7, "all-reduce", 2000000, 500000000, -1, -1);
    op(s, 3, "fusion.2", 8, "loop fusion", 5000000, 500000000, -1, -1);
    CU_ASSERT_EQUAL(xpv_sink_finish(s, NULL, &err), 0);
    xpv_sink_free(s);
    return db;
}

/* The tool's CSV, NUL-terminated, in b. */
static int tool_csv(sqlite3 *db, const char *tag, xpv_buf *b)
{
    int64_t id = PROFILE;
    xpv_tool_scope scope = {.ids = &id, .n = 1};
    xpv_buf_reset(b);
    int status = xpv_api_tool(db, tag, &scope, XPV_TOOL_CSV, b);
    xpv_buf_putc(b, 0);
    return status;
}

static void test_hlo_stats(void)
{
    sqlite3 *db = ops_index();
    xpv_buf b = {0};
    CU_ASSERT_EQUAL(tool_csv(db, "hlo_stats", &b), 200);
    const char *want = "1,7,jit_f,loop fusion,fusion.1,,,1,1000,1000,1000,1000,50,50,,2,1000,"
                       "0.001862645149230957,2000000,,1073741824,measured,measured\r\n"
                       "2,7,jit_f,all-reduce,all-reduce.1,,,1,500,500,500,500,25,75,,,,,,,,,\r\n"
                       "3,8,jit_g,loop fusion,fusion.2,,,1,500,500,500,500,25,100,,,,,,,,,\r\n";
    const char *rows = strchr(b.data, '\n');
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    CU_ASSERT_STRING_EQUAL(rows + 1, want);
    xpv_buf_free(&b);
    sqlite3_close(db);
}

static void test_op_profile(void)
{
    sqlite3 *db = ops_index();
    xpv_buf b = {0};
    CU_ASSERT_EQUAL(tool_csv(db, "op_profile", &b), 200);
    const char *want =
        "1,loop fusion,loop fusion,,,,2,1500,,1500,75,75,2000000,1073741824,2,1000,measured,"
        "measured\r\n"
        "2,jit_f,loop fusion,7,jit_f,,1,1000,,1000,50,66.66666666666667,2000000,1073741824,2,"
        "1000,measured,measured\r\n"
        "3,fusion.1,loop fusion,7,jit_f,fusion.1,1,1000,1000,1000,50,100,2000000,1073741824,2,"
        "1000,measured,measured\r\n"
        "2,jit_g,loop fusion,8,jit_g,,1,500,,500,25,33.333333333333336,,,,,,\r\n"
        "3,fusion.2,loop fusion,8,jit_g,fusion.2,1,500,500,500,25,100,,,,,,\r\n"
        "1,all-reduce,all-reduce,,,,1,500,,500,25,25,,,,,,\r\n"
        "2,jit_f,all-reduce,7,jit_f,,1,500,,500,25,100,,,,,,\r\n"
        "3,all-reduce.1,all-reduce,7,jit_f,all-reduce.1,1,500,500,500,25,100,,,,,,\r\n";
    const char *rows = strchr(b.data, '\n');
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    CU_ASSERT_STRING_EQUAL(rows + 1, want);
    xpv_buf_free(&b);
    sqlite3_close(db);
}

/* Only ops with flops and bytes are points; the roof needs both peaks,
 * which come from the profile's facts (the xplane reader keeps them). */
static void test_roofline(void)
{
    sqlite3 *db = ops_index();
    xpv_buf b = {0};
    CU_ASSERT_EQUAL(tool_csv(db, "roofline_model", &b), 200);
    const char *rows = strchr(b.data, '\n');
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    CU_ASSERT_STRING_EQUAL(rows + 1,
                           "1,7,jit_f,loop fusion,fusion.1,1,1000,1000,50,2000000,"
                           "1073741824,0.001862645149230957,2,1000,,,,measured,measured\r\n");
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_db_exec(db,
                                "UPDATE profiles SET facts='{\"peak_teraflops_per_second\":"
                                "\"1\",\"peak_hbm_bw_gigabytes_per_second\":\"2000\"}'",
                                &err),
                    0);
    CU_ASSERT_EQUAL(tool_csv(db, "roofline_model", &b), 200);
    rows = strchr(b.data, '\n');
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    CU_ASSERT_STRING_EQUAL(
        rows + 1, "1,7,jit_f,loop fusion,fusion.1,1,1000,1000,50,2000000,1073741824,"
                  "0.001862645149230957,2,1000,3.725290298461914,53.6870912,Memory,measured,"
                  "measured\r\n");
    int64_t id = PROFILE;
    xpv_buf_reset(&b);
    CU_ASSERT_EQUAL(xpv_api_tool(db, "roofline_model", &(xpv_tool_scope){.ids = &id, .n = 1},
                                 XPV_TOOL_JSON, &b),
                    200);
    xpv_buf_putc(&b, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"peak_teraflops_per_second\":\"1\","
                                          "\"peak_hbm_bw_gigabytes_per_second\":\"2000\","
                                          "\"ridge_point\":\"0.5\","
                                          "\"peaks_source\":\"device plane stats\""));
    xpv_buf_free(&b);
    sqlite3_close(db);
}

static void test_properties_and_no_data(void)
{
    sqlite3 *db = ops_index();
    int64_t id = PROFILE, none = PROFILE + 1;
    xpv_buf b = {0};
    CU_ASSERT_EQUAL(
        xpv_api_tool(db, "op_profile", &(xpv_tool_scope){.ids = &id, .n = 1}, XPV_TOOL_JSON, &b),
        200);
    xpv_buf_putc(&b, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"properties\":{\"source\":\"xla_ops\","
                                          "\"category_source\":\"hlo_category\","
                                          "\"total_self_time_us\":\"2000\","
                                          "\"flops_source\":\"measured\","
                                          "\"bytes_source\":\"measured\","));
    /* ops without flops send the reader to the profile's modules; this
     * one's file is not there, which the table says rather than hides */
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"flops_derive_error\":\"cannot open "));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"group_by\":\"category,program,op\"}"));
    xpv_buf_reset(&b);
    CU_ASSERT_EQUAL(
        xpv_api_tool(db, "hlo_stats", &(xpv_tool_scope){.ids = &none, .n = 1}, XPV_TOOL_JSON, &b),
        404);
    xpv_buf_putc(&b, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "No Data"));
    xpv_buf_reset(&b);
    CU_ASSERT_EQUAL(xpv_api_tool_list(db, &(xpv_tool_scope){.ids = &id, .n = 1}, &b), 200);
    xpv_buf_putc(&b, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "\"op_profile\",\"hlo_stats\""));
    xpv_buf_free(&b);
    sqlite3_close(db);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"hlo_stats rows", test_hlo_stats},
        {"op_profile tree", test_op_profile},
        {"roofline_model points and roof", test_roofline},
        {"properties, No Data", test_properties_and_no_data},
        {NULL, NULL},
    };
    return xpv_test_run("tool_hlo", tests, 0);
}
