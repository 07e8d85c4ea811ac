/*
 * table.h — a tool's answer as a table built in memory, written three ways:
 * as a Google Charts DataTable (what XProf's frontend reads: `{"cols":
 * [{"id","label","type"}], "rows":[{"c":[{"v"}]}], "p":{}}`), as our own
 * JSON (`{"columns":[{"id","label","type"}], "rows":[{id: value}]}`), and
 * as CSV. One builder, so the three never disagree.
 *
 * Invariants: every row has a cell per column; an unset cell is null
 * (unknown), never 0; numbers written from integers are exact.
 */
#ifndef XPV_TABLE_H
#define XPV_TABLE_H

#include "../common/xpv_common.h"

typedef enum { XPV_COL_NUMBER, XPV_COL_STRING, XPV_COL_BOOLEAN } xpv_col_type;

typedef struct {
    const char *id, *label;
    xpv_col_type type;
} xpv_table_col;

typedef struct xpv_table xpv_table;

/* cols must outlive the table (they are static in every tool). */
xpv_table *xpv_table_new(const xpv_table_col *cols, size_t ncols);
void xpv_table_free(xpv_table *t);
/* Starts a row whose cells are all null; returns its index. */
size_t xpv_table_add_row(xpv_table *t);
size_t xpv_table_rows(const xpv_table *t);
void xpv_table_set_double(xpv_table *t, size_t row, size_t col, double v);
void xpv_table_set_int(xpv_table *t, size_t row, size_t col, int64_t v);
/* ps -> µs, written as every answer writes them (xpv_api_put_ps_col). */
void xpv_table_set_ps_us(xpv_table *t, size_t row, size_t col, double ps);
void xpv_table_set_text(xpv_table *t, size_t row, size_t col, const char *s, size_t n);
/* Sets a property of the whole table (DataTable "p"; our JSON "properties"). */
void xpv_table_set_property(xpv_table *t, const char *key, const char *value);

void xpv_table_put_datatable(const xpv_table *t, xpv_buf *out);
void xpv_table_put_json(const xpv_table *t, xpv_buf *out);
void xpv_table_put_csv(const xpv_table *t, xpv_buf *out);

#endif
