/*
 * test_hlo_modules.c — the modules a profile ran (api/hlo/hlo_modules.c) from
 * hand-made events written through the sink, checked against answers
 * worked out by hand: `XLA Modules` executions (names with and without a
 * program id, an instant left out, a module with two programs listed once
 * by module_list), GPU kernels by hlo_module (interned and inline, program
 * ids as numbers and digit strings, kernels without a module left out),
 * a PyTorch profile whose kernels carry hlo_module (not read), and two
 * hosts merged.
 */
#define _POSIX_C_SOURCE 200809L
#include "sink_testutil.h"
#include "api/api.h"
#include "store/index_db.h"
#include "indexer/ingest.h"

#include <stdio.h>
#include <string.h>

enum { TPU = 1, TPU2 = 2, GPU = 3, TORCH = 4 };

static xpv_sink *open_profile(sqlite3 *db, int64_t id)
{
    return xpv_test_sink(db, id, id == TORCH ? "pytorch_trace_json" : "xplane");
}

static void finish(xpv_sink *s)
{
    xpv_test_sink_finish(s);
}

static void event(xpv_sink *s, int64_t pid, int64_t tid, int kind, const char *name, int64_t ts,
                  int64_t dur_ps, xpv_arg *args, uint32_t nargs)
{
    xpv_event ev;
    xpv_event_init(&ev);
    ev.track = xpv_sink_track(s, pid, tid);
    ev.kind = (uint8_t)kind;
    ev.name = xpv_sink_intern_cstr(s, name);
    ev.ts_ns = ts;
    ev.dur_ps = dur_ps;
    ev.dur_ns = dur_ps < 0 ? -1 : dur_ps / 1000;
    ev.args = args;
    ev.nargs = nargs;
    xpv_sink_event(s, &ev);
}

/* jit_f(7) twice (3 + 4 us), jit_f(8) once (1 us), "main" with no
 * program id (2 us), and an instant of jit_f(7) that does not count. */
static void write_tpu(sqlite3 *db, int64_t id)
{
    xpv_sink *s = open_profile(db, id);
    xpv_sink_process_device(s, 200, 0);
    xpv_sink_track(s, 200, 2);
    xpv_sink_thread_name(s, 200, 2, "XLA Modules", 11);
    event(s, 200, 2, XPV_KIND_XLA_MODULE, "jit_f(7)", 0, 3000000, NULL, 0);
    event(s, 200, 2, XPV_KIND_XLA_MODULE, "jit_f(7)", 5000, 4000000, NULL, 0);
    event(s, 200, 2, XPV_KIND_XLA_MODULE, "jit_f(8)", 10000, 1000000, NULL, 0);
    event(s, 200, 2, XPV_KIND_XLA_MODULE, "main", 12000, 2000000, NULL, 0);
    event(s, 200, 2, XPV_KIND_XLA_MODULE, "jit_f(7)", 15000, -1, NULL, 0);
    finish(s);
}

/* A kernel of GPU 0 whose hlo_module is interned (or inline) and whose
 * program_id is a number (or, when prog_text, a string of digits). */
static void kernel(xpv_sink *s, const char *module, int inline_name, const char *prog_text,
                   int64_t ts, int64_t dur_ps)
{
    xpv_arg args[2];
    uint32_t n = 0;
    if (module) {
        args[n] = (xpv_arg){.key = xpv_sink_intern_cstr(s, "hlo_module")};
        if (inline_name)
            args[n].type = XPV_ARG_TEXT, args[n].text = module, args[n].len = strlen(module);
        else
            args[n].type = XPV_ARG_STR, args[n].v.str = xpv_sink_intern_cstr(s, module);
        n++;
        args[n] = (xpv_arg){.key = xpv_sink_intern_cstr(s, "program_id")};
        if (prog_text)
            args[n].type = XPV_ARG_STR, args[n].v.str = xpv_sink_intern_cstr(s, prog_text);
        else
            args[n].type = XPV_ARG_INT, args[n].v.i = 21;
        n++;
    }
    event(s, 100, 16, XPV_KIND_KERNEL, "Cijk_kernel", ts, dur_ps, args, n);
}

static void write_gpu(sqlite3 *db, int64_t id)
{
    xpv_sink *s = open_profile(db, id);
    xpv_sink_process_device(s, 100, 0);
    kernel(s, "jit_dot", 0, NULL, 1000, 4000000);
    kernel(s, "jit_dot", 1, "21", 6000, 2000000); /* the same module, written otherwise */
    kernel(s, "jit_dot", 0, "5", 9000, 500000);
    kernel(s, NULL, 0, NULL, 12000, 700000); /* no module: left out */
    finish(s);
}

static void answer(sqlite3 *db, const int64_t *ids, size_t n, int status, const char *want)
{
    xpv_buf out = {0};
    CU_ASSERT_EQUAL(xpv_api_module_list(db, ids, n, &out), status);
    xpv_buf_putc(&out, 0);
    if (strcmp(out.data, want)) fprintf(stderr, "got %s\nwant %s\n", out.data, want);
    CU_ASSERT_STRING_EQUAL(out.data, want);
    xpv_buf_free(&out);
}

static void modules(sqlite3 *db, int64_t id, int status, const char *want)
{
    xpv_buf out = {0};
    CU_ASSERT_EQUAL(xpv_api_profile_modules(db, id, &out), status);
    xpv_buf_putc(&out, 0);
    if (strcmp(out.data, want)) fprintf(stderr, "got %s\nwant %s\n", out.data, want);
    CU_ASSERT_STRING_EQUAL(out.data, want);
    xpv_buf_free(&out);
}

static void test_xla_modules(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    write_tpu(db, TPU);
    answer(db, (int64_t[]){TPU}, 1, 200, "[\"jit_f\",\"main\"]");
    modules(db, TPU, 200,
            "{\"modules\":["
            "{\"name\":\"jit_f\",\"program_id\":\"7\",\"source\":\"xla_modules\","
            "\"occurrences\":2,\"total_time_us\":7},"
            "{\"name\":\"jit_f\",\"program_id\":\"8\",\"source\":\"xla_modules\","
            "\"occurrences\":1,\"total_time_us\":1},"
            "{\"name\":\"main\",\"program_id\":null,\"source\":\"xla_modules\","
            "\"occurrences\":1,\"total_time_us\":2}]}");
    write_tpu(db, TPU2);
    answer(db, (int64_t[]){TPU, TPU2}, 2, 200, "[\"jit_f\",\"main\"]");
    sqlite3_close(db);
}

static void test_kernels(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    write_gpu(db, GPU);
    answer(db, (int64_t[]){GPU}, 1, 200, "[\"jit_dot\"]");
    modules(db, GPU, 200,
            "{\"modules\":["
            "{\"name\":\"jit_dot\",\"program_id\":\"5\",\"source\":\"kernels\","
            "\"occurrences\":1,\"total_time_us\":0.5},"
            "{\"name\":\"jit_dot\",\"program_id\":\"21\",\"source\":\"kernels\","
            "\"occurrences\":2,\"total_time_us\":6}]}");
    sqlite3_close(db);
}

static void test_no_modules(void)
{
    sqlite3 *db = xpv_test_fresh_index(xpv_test_tmpdir(), TPU);
    write_gpu(db, TORCH); /* not one of JAX's formats */
    answer(db, (int64_t[]){TORCH}, 1, 404, "{\"error\":\"No Data\"}");
    modules(db, TORCH, 404, "{\"error\":\"No Data\"}");
    sqlite3_close(db);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"XLA Modules executions", test_xla_modules},
        {"GPU kernels by hlo_module", test_kernels},
        {"no modules", test_no_modules},
        {NULL, NULL},
    };
    return xpv_test_run("hlo_modules", tests, 0);
}
