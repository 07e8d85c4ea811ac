/*
 * test_stream_kinds.c — the kinds a JAX GPU stream line's name lists
 * (indexer/readers/stream_kinds.c), read alike by the xplane and trace-JSON
 * readers.
 */
#include "testutil.h"
#include "indexer/readers/stream_kinds.h"
#include "store/xpv_event.h"

#include <string.h>

static xpv_stream_kinds of(const char *name)
{
    return xpv_stream_kinds_of(name, strlen(name));
}

static void test_one_kind_decides(void)
{
    CU_ASSERT_EQUAL(of("Stream #16(Kernel)").one, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(of("Stream #7(MemcpyH2D)").one, XPV_KIND_MEMCPY_H2D);
    CU_ASSERT_EQUAL(of("Stream #8(MemcpyD2H)").one, XPV_KIND_MEMCPY_D2H);
    CU_ASSERT_EQUAL(of("Stream #9(MemcpyD2D)").one, XPV_KIND_MEMCPY_D2D);
    CU_ASSERT_EQUAL(of("Stream #10(MemcpyOther)").one, XPV_KIND_MEMCPY_OTHER);
    CU_ASSERT_EQUAL(of("Stream #11(P2P)").one, XPV_KIND_MEMCPY_OTHER);
    CU_ASSERT_EQUAL(of("Stream #12(Memset)").one, XPV_KIND_MEMSET);
    CU_ASSERT_EQUAL(of("Stream #13(Compute)").one, XPV_KIND_DEVICE_OTHER);
    CU_ASSERT_EQUAL(of("Stream #16(Kernel)").has_kernel, 1);
}

static void test_several_or_none(void)
{
    xpv_stream_kinds k = of("Stream #14(Memset,MemcpyD2D,Compute)");
    CU_ASSERT_EQUAL(k.one, 0);
    CU_ASSERT_EQUAL(k.has_kernel, 0);
    k = of("Stream #15(MemcpyD2H,Kernel)");
    CU_ASSERT_EQUAL(k.one, 0);
    CU_ASSERT_EQUAL(k.has_kernel, 1);
    CU_ASSERT_EQUAL(of("Stream #7()").one, 0);
    CU_ASSERT_EQUAL(of("Stream #7").one, 0);
    /* the list ends at ')' or at the name's end, and a trailing comma adds none */
    CU_ASSERT_EQUAL(of("Stream #18(Kernel) MemcpyD2H").one, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(of("Stream #19(MemcpyH2D").one, XPV_KIND_MEMCPY_H2D);
    CU_ASSERT_EQUAL(of("Stream #20(Kernel,)").one, XPV_KIND_KERNEL);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"one kind decides", test_one_kind_decides},
        {"several kinds, or none", test_several_or_none},
        {NULL, NULL},
    };
    return xpv_test_run("stream_kinds", tests, 0);
}
