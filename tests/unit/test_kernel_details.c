/*
 * test_kernel_details.c — both kernel_details text forms, and unparsable
 * values staying unknown rather than becoming 0.
 */
#include "testutil.h"
#include "indexer/readers/kernel_details.h"

#include <string.h>

static void test_current_form(void)
{
    const char *t = "regs:32 static_shared:1024 dynamic_shared:49152 grid:108,2,1 block:256,1,1 "
                    "occ_pct:62.5";
    xpv_launch l;
    xpv_launch_init(&l);
    CU_ASSERT_EQUAL(xpv_kernel_details_parse(t, strlen(t), &l), 6);
    CU_ASSERT_EQUAL(l.registers_per_thread, 32);
    CU_ASSERT_EQUAL(l.static_shared_bytes, 1024);
    CU_ASSERT_EQUAL(l.dynamic_shared_bytes, 49152);
    CU_ASSERT_EQUAL(l.grid[0], 108);
    CU_ASSERT_EQUAL(l.grid[1], 2);
    CU_ASSERT_EQUAL(l.block[0], 256);
    CU_ASSERT_DOUBLE_EQUAL(l.occupancy_pct, 62.5, 1e-9);
}

static void test_old_form_newlines(void)
{
    const char *t = "regs:64\nshm:0\ngrid:1,1,1\nblock:128,1,1";
    xpv_launch l;
    xpv_launch_init(&l);
    CU_ASSERT_EQUAL(xpv_kernel_details_parse(t, strlen(t), &l), 4);
    CU_ASSERT_EQUAL(l.registers_per_thread, 64);
    CU_ASSERT_EQUAL(l.static_shared_bytes, 0);
    CU_ASSERT_EQUAL(l.dynamic_shared_bytes, -1);
    CU_ASSERT_EQUAL(l.block[0], 128);
    CU_ASSERT(l.occupancy_pct < 0);
}

static void test_garbage_stays_unknown(void)
{
    const char *t = "regs:abc grid:1,2 block:4,4,4,4 occ_pct:nope other:7";
    xpv_launch l;
    xpv_launch_init(&l);
    CU_ASSERT_EQUAL(xpv_kernel_details_parse(t, strlen(t), &l), 0);
    CU_ASSERT_EQUAL(l.registers_per_thread, -1);
    CU_ASSERT_EQUAL(l.grid[0], -1);
    CU_ASSERT_EQUAL(l.block[0], -1);
    CU_ASSERT(l.occupancy_pct < 0);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"current form", test_current_form},
        {"older form, newline separated", test_old_form_newlines},
        {"unparsable values stay unknown", test_garbage_stays_unknown},
        {NULL, NULL},
    };
    return xpv_test_run("kernel_details", tests, 0);
}
