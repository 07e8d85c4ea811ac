/*
 * test_chrome_json_slices.c — chrome_json_slices.c on small inline
 * documents: B/E pairing per track, b/e pairing by id, what is left
 * unmatched and its warnings, and the phases stored as they are beside
 * them (counters, flows, instants, M, unknown phases).
 */
#define _GNU_SOURCE
#include "chrome_json_testutil.h"

static void test_begin_end(void)
{
    result r;
    CU_ASSERT_EQUAL(run_doc("[{\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":1,"
                            "\"args\":{\"x\":1}},{\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,"
                            "\"tid\":1,\"ts\":2},{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":4,"
                            "\"args\":{\"y\":2}},{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":10},"
                            "{\"ph\":\"E\",\"name\":\"stray\",\"pid\":1,\"tid\":2,\"ts\":5},"
                            "{\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":3,\"ts\":6},"
                            "{\"ph\":\"B\",\"name\":\"same\",\"pid\":1,\"tid\":4,\"ts\":7},"
                            "{\"ph\":\"E\",\"pid\":1,\"tid\":4,\"ts\":7}]",
                            &r),
                    0);
    CU_ASSERT_EQUAL(r.n, 5);
    /* B and E at the same time: a slice of 0, not an open B */
    CU_ASSERT_EQUAL(find(&r, "same")->ph, 'X');
    CU_ASSERT_EQUAL(find(&r, "same")->dur_ns, 0);
    const rec *outer = find(&r, "outer"), *inner = find(&r, "inner"), *stray = find(&r, "stray"),
              *open = find(&r, "open");
    CU_ASSERT_PTR_NOT_NULL_FATAL(outer);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
    CU_ASSERT_PTR_NOT_NULL_FATAL(stray);
    CU_ASSERT_PTR_NOT_NULL_FATAL(open);
    CU_ASSERT_EQUAL(outer->ph, 'X');
    CU_ASSERT_EQUAL(outer->dur_ns, 9000);
    CU_ASSERT(strstr(outer->args, "x=i:1;") != NULL);
    CU_ASSERT_EQUAL(inner->dur_ns, 2000);
    CU_ASSERT(strstr(inner->args, "y=i:2;") != NULL);
    CU_ASSERT_EQUAL(stray->ph, 'E');
    CU_ASSERT_EQUAL(stray->dur_ns, -1);
    CU_ASSERT_EQUAL(open->ph, 'B');
    CU_ASSERT_EQUAL(open->dur_ns, -1);
    CU_ASSERT_EQUAL(r.stats.phase_counts['B'], 4);
    CU_ASSERT_EQUAL(r.stats.phase_counts['E'], 4);
    const char *w = query(&r, "SELECT warnings FROM profiles WHERE id=7");
    CU_ASSERT(strstr(w, "1 B events without a matching E") != NULL);
    CU_ASSERT(strstr(w, "1 E events without a matching B") != NULL);
    result_free(&r);
}

static void test_counters_async_flows(void)
{
    result r;
    CU_ASSERT_EQUAL(
        run_doc(
            "[{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":1,\"args\":{\"a\":1,\"b\":2.5}},"
            "{\"ph\":\"b\",\"cat\":\"q\",\"id\":\"0x1\",\"name\":\"req\",\"pid\":1,\"tid\":1,"
            "\"ts\":2},{\"ph\":\"n\",\"cat\":\"q\",\"id\":\"0x1\",\"name\":\"mark\",\"pid\":1,"
            "\"tid\":1,\"ts\":3},{\"ph\":\"b\",\"cat\":\"q\",\"id\":\"0x2\",\"name\":\"req\","
            "\"pid\":1,\"tid\":1,\"ts\":3},{\"ph\":\"e\",\"cat\":\"q\",\"id\":\"0x1\",\"name\":"
            "\"req\",\"pid\":1,\"tid\":1,\"ts\":7},{\"ph\":\"e\",\"cat\":\"q\",\"id\":\"0x9\","
            "\"name\":\"lost\",\"pid\":1,\"tid\":1,\"ts\":8},"
            "{\"ph\":\"s\",\"id\":41,\"name\":\"fl\",\"cat\":\"ac2g\",\"pid\":1,\"tid\":1,"
            "\"ts\":4},{\"ph\":\"t\",\"id\":41,\"name\":\"fl\",\"pid\":1,\"tid\":1,\"ts\":5},"
            "{\"ph\":\"f\",\"id\":41,\"name\":\"fl\",\"pid\":2,\"tid\":1,\"ts\":6,\"bp\":\"e\"},"
            "{\"ph\":\"X\",\"name\":\"bound\",\"bind_id\":\"0xab\",\"flow_out\":true,"
            "\"ts\":1,\"dur\":1},{\"ph\":\"P\",\"name\":\"sample\",\"ts\":1},"
            "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"args\":{\"name\":\"dev\"}}]",
            &r),
        0);
    const rec *mem = find(&r, "mem");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
    CU_ASSERT_EQUAL(mem->ph, 'C');
    CU_ASSERT(strstr(mem->args, "a=i:1;b=d:2.5;") != NULL);
    CU_ASSERT_EQUAL(count_ph(&r, 'b'), 2); /* one paired, one left open */
    int paired = 0;
    for (int i = 0; i < r.n; i++)
        if (r.v[i].ph == 'b' && r.v[i].dur_ns == 5000 && strstr(r.v[i].args, "id=s:0x1")) paired++;
    CU_ASSERT_EQUAL(paired, 1);
    CU_ASSERT_EQUAL(find(&r, "lost")->ph, 'e');
    CU_ASSERT_EQUAL(find(&r, "mark")->ph, 'n');
    CU_ASSERT_EQUAL(count_ph(&r, 's') + count_ph(&r, 't') + count_ph(&r, 'f'), 3);
    for (int i = 0; i < r.n; i++)
        if (strchr("stf", r.v[i].ph)) CU_ASSERT(strstr(r.v[i].args, "id=i:41;") != NULL);
    CU_ASSERT(strstr(find(&r, "bound")->args, "bind_id=s:0xab;flow_out=j:true;") != NULL);
    CU_ASSERT_EQUAL(r.stats.phase_counts['P'], 1);
    CU_ASSERT_EQUAL(r.stats.phase_counts['M'], 1);
    CU_ASSERT_EQUAL(r.n, 9);
    CU_ASSERT(strstr(query(&r, "SELECT facts FROM profiles WHERE id=7"), "\"phase P\":1") != NULL);
    CU_ASSERT_STRING_EQUAL(
        query(&r, "SELECT process_name FROM tracks WHERE profile_id=7 AND pid=2"), "dev");
    result_free(&r);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"B/E pairing and unmatched ones", test_begin_end},
        {"counters, async, flows, unknown phases, M", test_counters_async_flows},
        {NULL, NULL},
    };
    return xpv_test_run("chrome_json_slices", tests, 0);
}
