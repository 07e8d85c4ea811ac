/*
 * test_findings.c — the findings' pure parts: the threshold file format
 * (api/findings/findings_config.c: defaults, overrides, comments, errors with line
 * numbers) and which event names are compilation, input work, collectives,
 * synchronous or pageable copies (api/findings/findings_scan.c), and the
 * key answers are kept under (findings_keep.c): none without a build id.
 */
#include "testutil.h"
#include "api/findings/findings_internal.h"

#include <string.h>

static void test_defaults_and_overrides(void)
{
    xpv_findings_config c;
    xpv_findings_config_defaults(&c);
    CU_ASSERT_DOUBLE_EQUAL(c.input_share_warn, 0.05, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.step_outlier_factor, 1.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.launch_min_kernels, 20, 1e-12);
    xpv_err err = {{0}};
    const char *text = "# comment\n\n  input_share_warn = 0.5  # trailing\r\n"
                       "step_outlier_factor=4\nhot_spot_top_share = 0";
    CU_ASSERT_EQUAL(xpv_findings_config_parse(&c, text, &err), 0);
    CU_ASSERT_DOUBLE_EQUAL(c.input_share_warn, 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.step_outlier_factor, 4, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.hot_spot_top_share, 0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.input_share_crit, 0.20, 1e-12); /* untouched */
    /* every key is documented */
    xpv_buf b = {0};
    xpv_findings_config_describe(&b);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "idle_device_share"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data, "compile_min_ms"));
    xpv_buf_free(&b);
}

static void test_config_errors(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"nope = 1\n", "line 1: unknown key 'nope'"},
        {"\ninput_share_warn = -1\n", "line 2: input_share_warn needs a number >= 0"},
        {"input_share_warn = abc", "needs a number"},
        {"input_share_warn = inf", "needs a number"},
        {"input_share_warn =", "needs a number"},
        {"input_share_warn 0.1", "line 1: expected key=value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        xpv_findings_config c;
        xpv_findings_config_defaults(&c);
        xpv_err err = {{0}};
        CU_ASSERT_EQUAL(xpv_findings_config_parse(&c, cases[i].text, &err), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].want));
        CU_ASSERT_DOUBLE_EQUAL(c.input_share_warn, 0.05, 1e-12); /* a bad line changes nothing */
    }
}

static uint8_t cls(const char *s)
{
    return xpv_findings_name_class(s, strlen(s));
}

static void test_name_classes(void)
{
    CU_ASSERT(cls("backend_compile") & XPV_FN_COMPILE);
    CU_ASSERT(cls("TfrtTpuCompiler::Compile") & XPV_FN_COMPILE);
    CU_ASSERT(cls("PjRtStreamExecutorClient::Compile") & XPV_FN_COMPILE);
    CU_ASSERT(cls("XlaCompile#module=cluster_0#") & XPV_FN_COMPILE);
    CU_ASSERT(cls("torch/_dynamo/convert_frame.py(650): _compile") & XPV_FN_COMPILE);
    CU_ASSERT(cls("_compile.compile_inner (dynamo_timed)") & XPV_FN_COMPILE);
    /* checks and setup that only mention compiling are not compilation */
    CU_ASSERT_FALSE(cls("SetupCompileTimeHelpfulBackendConfigInfo") & XPV_FN_COMPILE);
    CU_ASSERT_FALSE(cls("torch/compiler/__init__.py(367): is_compiling") & XPV_FN_COMPILE);
    CU_ASSERT_FALSE(cls("transformers/utils/import_utils.py(793): is_torchdynamo_compiling") &
                    XPV_FN_COMPILE);
    CU_ASSERT(cls("cudaMemcpy") & XPV_FN_SYNC_COPY);
    CU_ASSERT(cls("cudaMemcpy_v3020") & XPV_FN_SYNC_COPY);
    CU_ASSERT(cls("hipMemcpy") & XPV_FN_SYNC_COPY);
    CU_ASSERT_FALSE(cls("cudaMemcpyAsync") & XPV_FN_SYNC_COPY);
    CU_ASSERT_FALSE(cls("hipMemcpyDtoDAsync") & XPV_FN_SYNC_COPY);
    CU_ASSERT(cls("Memcpy HtoD (Pageable -> Device)") & XPV_FN_PAGEABLE);
    CU_ASSERT_FALSE(cls("Memcpy HtoD (Pinned -> Device)") & XPV_FN_PAGEABLE);
    CU_ASSERT(cls("ncclKernel_AllReduce_RING_LL_Sum_float") & XPV_FN_COLLECTIVE);
    CU_ASSERT(cls("all-reduce.3") & XPV_FN_COLLECTIVE);
    CU_ASSERT(cls("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__") & XPV_FN_INPUT);
    CU_ASSERT(cls("infeed.3") & XPV_FN_FEED);
    /* JAX programs' TraceAnnotation for their input */
    CU_ASSERT(cls("data_loading") & XPV_FN_INPUT);
    CU_ASSERT(cls("DataLoading") & XPV_FN_INPUT);
    CU_ASSERT_FALSE(cls("log_metrics") & XPV_FN_INPUT);
    /* a graph launch runs a whole graph: CUDA, HIP, XLA's command buffers */
    CU_ASSERT(cls("cudaGraphLaunch") & XPV_FN_GRAPH_LAUNCH);
    CU_ASSERT(cls("cudaGraphLaunch_v10000") & XPV_FN_GRAPH_LAUNCH);
    CU_ASSERT(cls("cuGraphLaunch (CudaGraph:18)") & XPV_FN_GRAPH_LAUNCH);
    CU_ASSERT(cls("hipGraphLaunch") & XPV_FN_GRAPH_LAUNCH);
    CU_ASSERT(cls("command_buffer::execute") & XPV_FN_GRAPH_LAUNCH);
    CU_ASSERT_FALSE(cls("cuGraphCreate (CudaGraph:36)") & XPV_FN_GRAPH_LAUNCH);
    CU_ASSERT_FALSE(cls("command_buffer::update") & XPV_FN_GRAPH_LAUNCH);
    CU_ASSERT_FALSE(cls("cudaLaunchKernel") & XPV_FN_GRAPH_LAUNCH);
    /* call stacks are never any of these */
    CU_ASSERT_EQUAL(cls("a.py(1): f;backend_compile"), 0);
    CU_ASSERT_EQUAL(cls("volta_sgemm_128x64_nn"), 0);
}

static void test_key_needs_a_build_id(void)
{
    xpv_findings_config c, strict;
    xpv_findings_config_defaults(&c);
    xpv_findings_config_defaults(&strict);
    CU_ASSERT_EQUAL(xpv_findings_config_parse(&strict, "input_share_warn = 0.5\n", NULL), 0);
    static const unsigned char a[20] = {1, 2, 3}, b[20] = {1, 2, 4};
    uint64_t ka = 0, ka2 = 0, kb = 0, ks = 0, none = 42;
    /* without a build id, two builds would share a key: there is none */
    CU_ASSERT_EQUAL(xpv_findings_key(&c, a, 0, &none), 0);
    CU_ASSERT_EQUAL(none, 42);
    CU_ASSERT_EQUAL(xpv_findings_key(&c, a, sizeof a, &ka), 1);
    CU_ASSERT_EQUAL(xpv_findings_key(&c, a, sizeof a, &ka2), 1);
    CU_ASSERT_EQUAL(xpv_findings_key(&c, b, sizeof b, &kb), 1);
    CU_ASSERT_EQUAL(xpv_findings_key(&strict, a, sizeof a, &ks), 1);
    CU_ASSERT_EQUAL(ka, ka2);
    CU_ASSERT_NOT_EQUAL(ka, kb); /* another build */
    CU_ASSERT_NOT_EQUAL(ka, ks); /* other thresholds */
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"defaults and overrides", test_defaults_and_overrides},
        {"config errors name the line", test_config_errors},
        {"name classes", test_name_classes},
        {"the key needs a build id", test_key_needs_a_build_id},
        {NULL, NULL},
    };
    return xpv_test_run("findings", tests, 0);
}
