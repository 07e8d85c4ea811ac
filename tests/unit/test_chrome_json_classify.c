/*
 * test_chrome_json_classify.c — chrome_json_classify.c on small inline
 * documents: string pids and tids, then what each producer's events are
 * (PyTorch/Kineto categories and launch shapes, JAX device threads,
 * TensorFlow stream and executor rows), step markers of every source, and
 * the facts they leave (producer, devices, rank).
 */
#define _GNU_SOURCE
#include "chrome_json_testutil.h"

/* ---- pid/tid tables ---- */

static void test_string_pids_and_tids(void)
{
    result r;
    CU_ASSERT_EQUAL(run_doc("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":\"Spans\","
                            "\"tid\":\"PyTorch Profiler\",\"ts\":1,\"dur\":1},"
                            "{\"ph\":\"X\",\"name\":\"b\",\"pid\":5,\"tid\":\"7\",\"ts\":2,"
                            "\"dur\":1},{\"ph\":\"X\",\"name\":\"c\",\"pid\":5,\"tid\":7,\"ts\":3,"
                            "\"dur\":1},{\"ph\":\"X\",\"name\":\"d\",\"pid\":4611686018427387904,"
                            "\"tid\":null,\"ts\":3,\"dur\":1}]}",
                            &r),
                    0);
    CU_ASSERT_EQUAL(r.n, 4);
    CU_ASSERT_EQUAL(find(&r, "b")->track, find(&r, "c")->track);
    CU_ASSERT_NOT_EQUAL(find(&r, "a")->track, find(&r, "c")->track);
    CU_ASSERT_NOT_EQUAL(find(&r, "a")->track, find(&r, "d")->track);
    CU_ASSERT_STRING_EQUAL(
        query(&r, "SELECT process_name || '/' || thread_name FROM tracks WHERE profile_id=7 AND "
                  "process_name='Spans'"),
        "Spans/PyTorch Profiler");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT count(*) FROM tracks WHERE profile_id=7"), "3");
    result_free(&r);
}

/* Nineteen-digit string tids: below 2^62 the plain id the integer maps to,
 * above it a string id named after its text (its value would not fit an
 * int64 at 10^19). */
static void test_long_spelled_tids(void)
{
    result r;
    CU_ASSERT_EQUAL(run_doc("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"e\",\"pid\":5,"
                            "\"tid\":\"4611686018427387903\",\"ts\":1,\"dur\":1},"
                            "{\"ph\":\"X\",\"name\":\"f\",\"pid\":5,"
                            "\"tid\":4611686018427387903,\"ts\":2,\"dur\":1},"
                            "{\"ph\":\"X\",\"name\":\"g\",\"pid\":5,"
                            "\"tid\":\"9999999999999999999\",\"ts\":3,\"dur\":1}]}",
                            &r),
                    0);
    CU_ASSERT_EQUAL(r.n, 3);
    CU_ASSERT_EQUAL(find(&r, "e")->track, find(&r, "f")->track);
    CU_ASSERT_NOT_EQUAL(find(&r, "e")->track, find(&r, "g")->track);
    CU_ASSERT_STRING_EQUAL(
        query(&r, "SELECT thread_name FROM tracks WHERE profile_id=7 AND tid>=4611686018427387904"),
        "9999999999999999999");
    result_free(&r);
}

/* ---- classification and facts ---- */

static void test_pytorch_classification(void)
{
    result r;
    const char *doc =
        "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"GPU-A\"},{\"id\":1,"
        "\"name\":\"GPU-B\"}],\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,"
        "\"world_size\":8},\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#12\",\"pid\":9,\"tid\":9,"
        "\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9,"
        "\"ts\":1,\"dur\":1,\"args\":{\"correlation\":77}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":1,\"tid\":7,\"ts\":5,"
        "\"dur\":3,\"args\":{\"device\":1,\"stream\":7,\"correlation\":77,\"grid\":[4,2,1],"
        "\"block\":[128,1,1],\"registers per thread\":32,\"shared memory\":1024,"
        "\"est. achieved occupancy %\":50}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\","
        "\"pid\":1,\"tid\":7,\"ts\":9,\"dur\":1,\"args\":{\"device\":1}},"
        "{\"ph\":\"X\",\"cat\":\"Memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":1,\"tid\":7,\"ts\":11,"
        "\"dur\":1},{\"ph\":\"X\",\"cat\":\"Memset\",\"name\":\"Memset (Device)\",\"pid\":1,"
        "\"tid\":7,\"ts\":13,\"dur\":1}]}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    const rec *step = find(&r, "ProfilerStep#12"), *launch = find(&r, "cudaLaunchKernel"),
              *k = find(&r, "gemm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(step);
    CU_ASSERT_PTR_NOT_NULL_FATAL(launch);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(step->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(step->step, 12);
    CU_ASSERT_EQUAL(step->step_src, XPV_STEP_PROFILER_STEP);
    CU_ASSERT_EQUAL(launch->kind, XPV_KIND_LAUNCH);
    CU_ASSERT_EQUAL(launch->corr, 77);
    CU_ASSERT_EQUAL(k->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(k->corr, 77);
    CU_ASSERT_EQUAL(find(&r, "Memcpy DtoH (Device -> Pinned)")->kind, XPV_KIND_MEMCPY_D2H);
    CU_ASSERT_EQUAL(find(&r, "Memcpy HtoD")->kind, XPV_KIND_MEMCPY_H2D);
    CU_ASSERT_EQUAL(find(&r, "Memset (Device)")->kind, XPV_KIND_MEMSET);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT producer FROM profiles WHERE id=7"), "PyTorch");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT devices FROM profiles WHERE id=7"),
                           "[\"GPU-A\",\"GPU-B\"]");
    const char *facts = query(&r, "SELECT facts FROM profiles WHERE id=7");
    CU_ASSERT(strstr(facts, "\"rank\":\"3\"") && strstr(facts, "\"world_size\":\"8\""));
    CU_ASSERT_STRING_EQUAL(
        query(&r, "SELECT device_id FROM tracks WHERE profile_id=7 AND pid=1 AND tid=7"), "1");
    result_free(&r);
}

/* Without ProfilerStep#N: Lightning's training_step and torch.optim's
 * Optimizer.step annotations are step markers of their own, weaker sources;
 * a zero-length kernel keeps its duration of 0 (not "no duration"). */
static void test_pytorch_weaker_step_markers(void)
{
    result r;
    const char *doc =
        "{\"schemaVersion\":1,\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
        "\"[LightningModule]Lit.training_step\",\"pid\":9,\"tid\":9,\"ts\":0,\"dur\":50},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"Optimizer.step#SGD.step\","
        "\"pid\":9,\"tid\":9,\"ts\":60,\"dur\":10},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::train_steps\",\"pid\":9,"
        "\"tid\":9,\"ts\":61,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"fill\",\"pid\":1,\"tid\":7,"
        "\"ts\":65,\"dur\":0,\"args\":{\"device\":1,\"stream\":7}}]}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    const rec *ts = find(&r, "[LightningModule]Lit.training_step"),
              *opt = find(&r, "Optimizer.step#SGD.step"), *op = find(&r, "aten::train_steps"),
              *k = find(&r, "fill");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(opt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(ts->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(ts->step_src, XPV_STEP_TRAINING_STEP);
    CU_ASSERT_EQUAL(opt->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(opt->step_src, XPV_STEP_OPTIMIZER);
    CU_ASSERT_EQUAL(opt->step, -1);
    CU_ASSERT_NOT_EQUAL(op->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(k->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(k->dur_ns, 0);
    CU_ASSERT_EQUAL(k->dur_ps, 0);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT step_source FROM profiles WHERE id=7"),
                           "training_step");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT count FROM kernel_stats WHERE profile_id=7 AND"
                                     " kind='kernel' AND device=-1 AND name='fill'"),
                           "1");
    result_free(&r);
}

static void test_jax_classification(void)
{
    result r;
    const char *doc =
        "{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true},\"traceEvents\":["
        "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:0\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":16,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #16(Kernel)\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":7,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #7(MemcpyH2D)\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":3,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA "
        "Ops\"}},"
        "{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":16,\"name\":\"fusion_3\",\"ts\":10,\"dur\":2,\"args\":{"
        "\"correlation_id\":\"55\",\"kernel_details\":\"regs:32 grid:1,2,3 block:4,5,6\","
        "\"hlo_op\":\"fusion.3\",\"group_id\":\"4\"}},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"name\":\"copy\",\"ts\":12,\"dur\":2},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"name\":\"dot.1\",\"ts\":12,\"dur\":2},"
        "{\"ph\":\"X\",\"pid\":2,\"tid\":1,\"name\":\"train\",\"ts\":1,\"dur\":50,\"args\":{"
        "\"step_num\":\"4\",\"_r\":\"1\"}},"
        "{\"ph\":\"X\",\"pid\":2,\"tid\":1,\"name\":\"cuLaunchKernel\",\"ts\":2,\"dur\":1,"
        "\"args\":{\"correlation_id\":\"55\"}}]}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    const rec *k = find(&r, "fusion_3"), *step = find(&r, "train");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(step);
    CU_ASSERT_EQUAL(k->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(k->corr, 55);
    CU_ASSERT_EQUAL(k->step, 4);
    CU_ASSERT_EQUAL(find(&r, "copy")->kind, XPV_KIND_MEMCPY_H2D);
    CU_ASSERT_EQUAL(find(&r, "dot.1")->kind, XPV_KIND_XLA_OP);
    CU_ASSERT_EQUAL(step->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(step->step, 4);
    CU_ASSERT_EQUAL(step->step_src, XPV_STEP_ANNOTATION);
    CU_ASSERT_EQUAL(find(&r, "cuLaunchKernel")->kind, XPV_KIND_LAUNCH);
    CU_ASSERT_EQUAL(find(&r, "cuLaunchKernel")->corr, 55);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT producer FROM profiles WHERE id=7"), "JAX/XLA");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT devices FROM profiles WHERE id=7"),
                           "[\"/device:GPU:0\"]");
    result_free(&r);
}

/* JAX 0.11 on an H100 names a stream after every kind it ran, "Stream
 * #14(Memset,MemcpyD2D,Compute)": each event is then what its details and
 * name say, as the xplane reader reads the same line (a memset there was
 * once read as a D2D copy); one kind still decides alone. */
static void test_jax_mixed_streams(void)
{
    result r;
    const char *doc =
        "{\"displayTimeUnit\":\"ns\",\"traceEvents\":["
        "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:0\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":14,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #14(Memset,MemcpyD2D,Compute)\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":15,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #15(MemcpyH2D)\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":16,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #16(Kernel,MemcpyD2H)\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":17,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #17(Memset)\"}},"
        /* what follows the kinds is not a kind; an unclosed list ends with the name */
        "{\"ph\":\"M\",\"pid\":1,\"tid\":18,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #18(Kernel) MemcpyD2H\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":19,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #19(MemcpyH2D\"}},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"name\":\"Memset 0\",\"ts\":1,\"dur\":1},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"name\":\"MemcpyD2D\",\"ts\":2,\"dur\":1,"
        "\"args\":{\"memcpy_details\":\"kind_src:device kind_dst:device size:4\"}},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"name\":\"memcpy128\",\"ts\":3,\"dur\":1,"
        "\"args\":{\"kernel_details\":\"regs:16 grid:1,1,1 block:256,1,1\"}},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"name\":\"marker\",\"ts\":4,\"dur\":1},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":15,\"name\":\"copy\",\"ts\":5,\"dur\":1},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":16,\"name\":\"gemm\",\"ts\":6,\"dur\":1},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":16,\"name\":\"MemcpyD2H\",\"ts\":7,\"dur\":1},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":17,\"name\":\"fill\",\"ts\":8,\"dur\":1},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":18,\"name\":\"gather_D2H_fusion\",\"ts\":9,\"dur\":1},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":19,\"name\":\"load\",\"ts\":10,\"dur\":1}]}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    CU_ASSERT_EQUAL(find(&r, "Memset 0")->kind, XPV_KIND_MEMSET);
    CU_ASSERT_EQUAL(find(&r, "MemcpyD2D")->kind, XPV_KIND_MEMCPY_D2D);
    CU_ASSERT_EQUAL(find(&r, "memcpy128")->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(find(&r, "marker")->kind, XPV_KIND_DEVICE_OTHER);
    CU_ASSERT_EQUAL(find(&r, "copy")->kind, XPV_KIND_MEMCPY_H2D);
    CU_ASSERT_EQUAL(find(&r, "gemm")->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(find(&r, "MemcpyD2H")->kind, XPV_KIND_MEMCPY_D2H);
    CU_ASSERT_EQUAL(find(&r, "fill")->kind, XPV_KIND_MEMSET);
    CU_ASSERT_EQUAL(find(&r, "gather_D2H_fusion")->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(find(&r, "load")->kind, XPV_KIND_MEMCPY_H2D);
    result_free(&r);
}

static void test_tensorflow_classification(void)
{
    result r;
    const char *doc =
        "{\"traceEvents\":[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":"
        "\"/device:GPU:0/stream:15 Compute\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,"
        "\"args\":{\"name\":\"/job:localhost/replica:0/task:0/device:GPU:0 Compute\"}},"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMul\",\"pid\":1,\"tid\":0,\"ts\":1,\"dur\":2,"
        "\"args\":{\"name\":\"dense/MatMul\",\"op\":\"MatMul\"}},"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MEMCPYDtoH\",\"pid\":1,\"tid\":0,\"ts\":4,"
        "\"dur\":1,\"args\":{\"name\":\"edge\",\"op\":\"MEMCPYDtoH\"}},"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMulOp\",\"pid\":2,\"tid\":0,\"ts\":1,"
        "\"dur\":2},"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"Relu\",\"pid\":1,\"tid\":0,\"ts\":6,\"dur\":0}]}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    CU_ASSERT_EQUAL(find(&r, "MatMul")->kind, XPV_KIND_KERNEL);
    /* a zero-length kernel is a kernel instance, counted in kernel_stats */
    CU_ASSERT_EQUAL(find(&r, "Relu")->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(find(&r, "Relu")->dur_ps, 0);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT count || '/' || min_ps FROM kernel_stats WHERE"
                                     " profile_id=7 AND device=-1 AND name='Relu'"),
                           "1/0");
    CU_ASSERT_EQUAL(find(&r, "MEMCPYDtoH")->kind, XPV_KIND_MEMCPY_D2H);
    CU_ASSERT_EQUAL(find(&r, "MatMulOp")->kind, XPV_KIND_DEVICE_OTHER);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT producer FROM profiles WHERE id=7"), "TensorFlow");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT device_id FROM tracks WHERE profile_id=7 AND pid=1"),
                           "0");
    result_free(&r);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"string pids and tids", test_string_pids_and_tids},
        {"nineteen-digit string tids", test_long_spelled_tids},
        {"PyTorch classification and facts", test_pytorch_classification},
        {"PyTorch training_step and Optimizer.step markers", test_pytorch_weaker_step_markers},
        {"JAX classification and facts", test_jax_classification},
        {"JAX streams of several kinds", test_jax_mixed_streams},
        {"TensorFlow classification", test_tensorflow_classification},
        {NULL, NULL},
    };
    return xpv_test_run("chrome_json_classify", tests, 0);
}
