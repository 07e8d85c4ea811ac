/*
 * test_hlo_modules.c — the modules a profile ran (api/hlo/hlo_modules.c) from
 * hand-made events written through the sink, checked against answers
 * worked out by hand: `XLA Modules` executions (names with and without a
 * program id, an instant left out, a module with two programs listed once
 * by module_list), GPU kernels by hlo_module (interned and inline, program
 * ids as numbers and digit strings, kernels without a module left out),
 * a PyTorch profile whose kernels carry hlo_module (not read), two hosts
 * merged, and an xplane file whose metadata plane holds hand-made HloProtos
 * (modules that ran no kernel listed, named "<name>(<program id>)", and
 * resolved by that name).
 */
#define _POSIX_C_SOURCE 200809L
#include "sink_testutil.h"
#include "testpb.h"
#include "api/hlo/hlo_file.h"
#include "api/api.h"
#include "store/index_db.h"
#include "indexer/ingest.h"

#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>

enum { TPU = 1, TPU2 = 2, GPU = 3, TORCH = 4, PROTOS = 6 };

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

/* One event metadata of /host:metadata: id, name and an `Hlo Proto` stat
 * (stat metadata 3) holding an HloProto whose HloModule is `module`. */
static void metadata(xpv_buf *plane, int64_t id, const char *name, const char *module)
{
    xpv_buf mod = {0}, proto = {0}, st = {0}, v = {0}, e = {0};
    xpv_test_pb_str(&mod, 1, module);
    xpv_test_pb_msg(&proto, 1, &mod);
    xpv_test_pb_int(&st, 1, 3), xpv_test_pb_msg(&st, 6, &proto);
    xpv_test_pb_int(&v, 1, id), xpv_test_pb_str(&v, 2, name), xpv_test_pb_msg(&v, 5, &st);
    xpv_test_pb_int(&e, 1, id), xpv_test_pb_msg(&e, 2, &v);
    xpv_test_pb_msg(plane, 4, &e);
}

/* Profile PROTOS's file: five modules, three of them launching no kernel.
 * jit_init's metadata id (40) is not its program id (3), as in JAX 0.11's
 * captures; "odd" carries no program id in its name. */
static void write_protos_file(sqlite3 *db, const char *dir)
{
    xpv_buf plane = {0}, space = {0}, v = {0}, e = {0};
    xpv_test_pb_str(&plane, 2, "/host:metadata");
    metadata(&plane, 21, "jit_dot(21)", "jit_dot");
    metadata(&plane, 40, "jit_init(3)", "jit_init");
    metadata(&plane, 9, "odd", "jit_odd");
    metadata(&plane, 10, "jit_dup(5)", "jit_dup");
    metadata(&plane, 11, "jit_dup(6)", "jit_dup");
    xpv_test_pb_int(&v, 1, 3), xpv_test_pb_str(&v, 2, "Hlo Proto");
    xpv_test_pb_int(&e, 1, 3), xpv_test_pb_msg(&e, 2, &v);
    xpv_test_pb_msg(&plane, 5, &e);
    xpv_test_pb_msg(&space, 1, &plane);
    CU_ASSERT_EQUAL_FATAL(xpv_test_write(dir, "profiles/p6", space.data, space.len), 0);
    xpv_buf_free(&space);
    char path[4096], sql[200];
    struct stat sb;
    snprintf(path, sizeof path, "%s/profiles/p6", dir);
    CU_ASSERT_EQUAL_FATAL(stat(path, &sb), 0);
    snprintf(sql, sizeof sql, "UPDATE profiles SET size_bytes=%lld, mtime_ns=%lld WHERE id=%d",
             (long long)sb.st_size,
             (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec, PROTOS);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_db_exec(db, sql, &err), 0);
}

/* The module `name` resolves to the blob named `meta` (NULL: to none),
 * whose program id is `want`: the one its name gives, else its metadata id. */
static void resolves(sqlite3 *db, const char *name, const char *meta, uint64_t want)
{
    xpv_hlo_file f;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_hlo_file_open(db, PROTOS, &f, &err), 1);
    const xpv_hlo_blob *b = xpv_hlo_file_find(&f, name);
    if (!meta) {
        CU_ASSERT_PTR_NULL(b);
    } else {
        CU_ASSERT(b && b->program_id == want && b->name.n == strlen(meta) &&
                  memcmp(b->name.p, meta, b->name.n) == 0);
    }
    xpv_hlo_file_close(&f);
}

/* A file touched while it is mapped is no longer trusted: its pages may
 * have read as zeros (app/shrunk_maps.h). */
static void changed_while_open(sqlite3 *db, const char *dir)
{
    xpv_hlo_file f;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_hlo_file_open(db, PROTOS, &f, &err), 1);
    CU_ASSERT_EQUAL(xpv_hlo_file_unchanged(&f, &err), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/profiles/p6", dir);
    struct timespec later[2] = {{0, UTIME_OMIT}, {f.mtime_ns / 1000000000 + 5, 0}};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, later, 0), 0);
    CU_ASSERT_EQUAL(xpv_hlo_file_unchanged(&f, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "changed while it was read"));
    xpv_hlo_file_close(&f);
    /* and once it changed, it is not opened until indexed again */
    CU_ASSERT_EQUAL(xpv_hlo_file_open(db, PROTOS, &f, &err), -1);
    write_protos_file(db, dir); /* as indexed again */
}

static void test_protos(void)
{
    const char *dir = xpv_test_tmpdir();
    sqlite3 *db = xpv_test_fresh_index(dir, TPU);
    xpv_sink *s = open_profile(db, PROTOS);
    xpv_sink_process_device(s, 100, 0);
    kernel(s, "jit_dot", 0, NULL, 1000, 4000000); /* program 21 */
    kernel(s, "jit_dot", 0, "21", 6000, 2000000);
    kernel(s, "jit_init", 0, "", 8000, 1000000); /* no program id: the one jit_init proto */
    kernel(s, "jit_dup", 0, "", 9000, 500000);   /* two jit_dup protos: left apart */
    kernel(s, "gemm_fusion_dot.1", 0, "", 10000, 250000); /* no proto */
    finish(s);
    write_protos_file(db, dir);
    answer(db, (int64_t[]){PROTOS}, 1, 200,
           "[\"gemm_fusion_dot.1\",\"jit_dot(21)\",\"jit_dup\",\"jit_dup(5)\",\"jit_dup(6)\","
           "\"jit_init(3)\",\"jit_odd(9)\"]");
    modules(db, PROTOS, 200,
            "{\"modules\":["
            "{\"name\":\"gemm_fusion_dot.1\",\"program_id\":null,\"source\":\"kernels\","
            "\"occurrences\":1,\"total_time_us\":0.25},"
            "{\"name\":\"jit_dot\",\"program_id\":\"21\",\"source\":\"kernels\","
            "\"occurrences\":2,\"total_time_us\":6},"
            "{\"name\":\"jit_dup\",\"program_id\":null,\"source\":\"kernels\","
            "\"occurrences\":1,\"total_time_us\":0.5},"
            "{\"name\":\"jit_dup\",\"program_id\":\"5\",\"source\":\"hlo_proto\","
            "\"occurrences\":0,\"total_time_us\":0},"
            "{\"name\":\"jit_dup\",\"program_id\":\"6\",\"source\":\"hlo_proto\","
            "\"occurrences\":0,\"total_time_us\":0},"
            "{\"name\":\"jit_init\",\"program_id\":\"3\",\"source\":\"kernels\","
            "\"occurrences\":1,\"total_time_us\":1},"
            "{\"name\":\"jit_odd\",\"program_id\":\"9\",\"source\":\"hlo_proto\","
            "\"occurrences\":0,\"total_time_us\":0}]}");
    /* the names module_list gives are the names the HLO views resolve */
    resolves(db, "jit_dot(21)", "jit_dot(21)", 21);
    resolves(db, "jit_init(3)", "jit_init(3)", 3);
    resolves(db, "jit_odd(9)", "odd", 9);
    resolves(db, "jit_dup(6)", "jit_dup(6)", 6);
    /* by program id: the one the name gives, not the metadata id */
    resolves(db, "3", "jit_init(3)", 3);
    resolves(db, "40", NULL, 0);
    resolves(db, "6", "jit_dup(6)", 6);
    changed_while_open(db, dir);
    /* two hosts with the same modules list each once */
    answer(db, (int64_t[]){PROTOS, PROTOS}, 2, 200,
           "[\"gemm_fusion_dot.1\",\"jit_dot(21)\",\"jit_dup\",\"jit_dup(5)\",\"jit_dup(6)\","
           "\"jit_init(3)\",\"jit_odd(9)\"]");
    sqlite3_close(db);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"XLA Modules executions", test_xla_modules},
        {"GPU kernels by hlo_module", test_kernels},
        {"no modules", test_no_modules},
        {"modules with an HloProto", test_protos},
        {NULL, NULL},
    };
    return xpv_test_run("hlo_modules", tests, 0);
}
