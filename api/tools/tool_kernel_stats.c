/*
 * tool_kernel_stats.c — XProf's kernel_stats tool: the profile's GPU
 * kernels (kernel_stats rows of kind 'kernel', all devices), the 1,000
 * with the most total time, with XProf's column ids.
 */
#include "tools.h"
#include "../../store/kernel_stats.h"

static const xpv_table_col COLS[] = {
    {"rank", "Rank", XPV_COL_NUMBER},
    {"kernel_name", "Kernel Name", XPV_COL_STRING},
    {"registers_per_thread", "Registers per thread", XPV_COL_NUMBER},
    {"shmem_bytes", "Shared Mem bytes", XPV_COL_NUMBER},
    {"block_dim", "Block dim", XPV_COL_STRING},
    {"grid_dim", "Grid dim", XPV_COL_STRING},
    {"occupancy_pct", "Occupancy %", XPV_COL_NUMBER},
    {"op_name", "Op Name", XPV_COL_STRING},
    {"occurrences", "Occurrences", XPV_COL_NUMBER},
    {"total_duration_us", "Total Duration (µs)", XPV_COL_NUMBER},
    {"avg_duration_us", "Avg Duration (µs)", XPV_COL_NUMBER},
    {"min_duration_us", "Min Duration (µs)", XPV_COL_NUMBER},
    {"max_duration_us", "Max Duration (µs)", XPV_COL_NUMBER},
};

int xpv_tool_kernel_stats_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    return xpv_store_kernel_stats_has_kind(db, s->ids, s->n, "kernel", err);
}

static void set_text(xpv_table *t, size_t row, size_t col, xpv_store_text v)
{
    if (v.s) xpv_table_set_text(t, row, col, v.s, v.n);
}

static void set_int(xpv_table *t, size_t row, size_t col, int known, int64_t v)
{
    if (known) xpv_table_set_int(t, row, col, v);
}

static void set_ps(xpv_table *t, size_t row, size_t col, int known, double ps)
{
    if (known) xpv_table_set_ps_us(t, row, col, ps);
}

/* The row's cells in COLS' order (rank apart). */
static void set_cells(xpv_table *t, size_t row, const xpv_store_kernel_stat *r)
{
    unsigned k = r->known;
    set_text(t, row, 1, r->name);
    set_int(t, row, 2, k & XPV_STORE_KSTAT_REGS, r->registers_per_thread);
    set_int(t, row, 3, k & XPV_STORE_KSTAT_SHMEM, r->shared_memory_bytes);
    set_text(t, row, 4, r->block);
    set_text(t, row, 5, r->grid);
    if (k & XPV_STORE_KSTAT_OCCUPANCY) xpv_table_set_double(t, row, 6, r->occupancy_pct);
    set_text(t, row, 7, r->op);
    set_int(t, row, 8, k & XPV_STORE_KSTAT_COUNT, r->count);
    int total = (k & XPV_STORE_KSTAT_TOTAL) != 0;
    set_ps(t, row, 9, total, (double)r->total_ps);
    set_ps(t, row, 10, total && (k & XPV_STORE_KSTAT_COUNT) && r->count != 0,
           (double)r->total_ps / (double)r->count);
    set_ps(t, row, 11, k & XPV_STORE_KSTAT_MIN, (double)r->min_ps);
    set_ps(t, row, 12, k & XPV_STORE_KSTAT_MAX, (double)r->max_ps);
}

xpv_table *xpv_tool_kernel_stats(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_kernel_stats_open_top(&c, db, s->ids, s->n, "kernel", 1000, err) != 0)
        return NULL;
    xpv_table *t = xpv_table_new(COLS, sizeof COLS / sizeof COLS[0]);
    xpv_store_kernel_stat r;
    int rc;
    while ((rc = xpv_store_kernel_stats_next(&c, &r, err)) == 1) {
        size_t row = xpv_table_add_row(t);
        xpv_table_set_int(t, row, 0, (int64_t)row + 1);
        set_cells(t, row, &r);
    }
    xpv_store_cursor_close(&c);
    if (rc == 0) return t;
    xpv_table_free(t);
    return NULL;
}
