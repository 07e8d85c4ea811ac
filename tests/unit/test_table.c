/*
 * test_table.c — the tool tables (api/table.c): the same rows written as a
 * Google Charts DataTable, as our JSON and as CSV, unknown cells as null
 * (never 0), CSV quoting, exact microseconds.
 */
#include "testutil.h"
#include "api/table.h"

#include <string.h>

static const xpv_table_col COLS[] = {
    {"name", "Name", XPV_COL_STRING},
    {"count", "Count", XPV_COL_NUMBER},
    {"total_us", "Total (us)", XPV_COL_NUMBER},
};

static xpv_table *sample(void)
{
    xpv_table *t = xpv_table_new(COLS, 3);
    size_t r = xpv_table_add_row(t);
    xpv_table_set_text(t, r, 0, "gemm, \"big\"", 11);
    xpv_table_set_int(t, r, 1, 3);
    xpv_table_set_ps_us(t, r, 2, 1500000.0); /* 1.5 us */
    r = xpv_table_add_row(t);
    xpv_table_set_text(t, r, 0, "relu", 4); /* count, total unknown */
    xpv_table_set_property(t, "source", "test");
    return t;
}

static void test_datatable(void)
{
    xpv_table *t = sample();
    xpv_buf b = {0};
    xpv_table_put_datatable(t, &b);
    xpv_buf_putc(&b, 0);
    CU_ASSERT_STRING_EQUAL(
        b.data,
        "{\"cols\":[{\"id\":\"name\",\"label\":\"Name\",\"type\":\"string\"},"
        "{\"id\":\"count\",\"label\":\"Count\",\"type\":\"number\"},"
        "{\"id\":\"total_us\",\"label\":\"Total (us)\",\"type\":\"number\"}],"
        "\"rows\":[{\"c\":[{\"v\":\"gemm, \\\"big\\\"\"},{\"v\":3},{\"v\":1.5}]},"
        "{\"c\":[{\"v\":\"relu\"},{\"v\":null},{\"v\":null}]}],\"p\":{\"source\":\"test\"}}");
    xpv_buf_free(&b);
    xpv_table_free(t);
}

static void test_json_and_csv(void)
{
    xpv_table *t = sample();
    xpv_buf b = {0};
    xpv_table_put_json(t, &b);
    xpv_buf_putc(&b, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.data,
                                  "\"rows\":[{\"name\":\"gemm, \\\"big\\\"\",\"count\":3,"
                                  "\"total_us\":1.5},{\"name\":\"relu\",\"count\":null,"
                                  "\"total_us\":null}],\"properties\":{\"source\":\"test\"}}"));
    xpv_buf_reset(&b);
    xpv_table_put_csv(t, &b);
    xpv_buf_putc(&b, 0);
    CU_ASSERT_STRING_EQUAL(b.data,
                           "Name,Count,Total (us)\r\n\"gemm, \"\"big\"\"\",3,1.5\r\nrelu,,\r\n");
    CU_ASSERT_EQUAL(xpv_table_rows(t), 2);
    xpv_buf_free(&b);
    xpv_table_free(t);
}

static void test_overwrite_and_non_finite(void)
{
    xpv_table *t = xpv_table_new(COLS, 3);
    size_t r = xpv_table_add_row(t);
    xpv_table_set_int(t, r, 1, 7);
    xpv_table_set_int(t, r, 1, -8); /* the last value wins */
    xpv_table_set_double(t, r, 2, 0.0 / 0.0);
    xpv_buf b = {0};
    xpv_table_put_csv(t, &b);
    xpv_buf_putc(&b, 0);
    CU_ASSERT_STRING_EQUAL(b.data, "Name,Count,Total (us)\r\n,-8,\r\n");
    xpv_buf_free(&b);
    xpv_table_free(t);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"DataTable", test_datatable},
        {"our JSON and CSV", test_json_and_csv},
        {"overwrite, NaN is unknown", test_overwrite_and_non_finite},
        {NULL, NULL},
    };
    return xpv_test_run("table", tests, 0);
}
