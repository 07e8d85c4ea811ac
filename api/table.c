/*
 * table.c — see table.h. Cells hold their JSON text already written
 * (numbers formatted once, exactly), so the three writers only arrange
 * them; strings keep their raw bytes and are escaped per writer.
 */
#include "table.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CELL_NULL, CELL_NUMBER, CELL_TEXT, CELL_BOOL };

typedef struct {
    int kind;
    char *text; /* the number's JSON, or the string's bytes */
    size_t len;
} cell;

struct xpv_table {
    const xpv_table_col *cols;
    size_t ncols, nrows, cap;
    cell *cells;   /* nrows x ncols */
    xpv_buf props; /* `"key":"value"` members */
};

xpv_table *xpv_table_new(const xpv_table_col *cols, size_t ncols)
{
    assert(ncols > 0);
    xpv_table *t = xpv_xcalloc(1, sizeof *t);
    t->cols = cols;
    t->ncols = ncols;
    return t;
}

void xpv_table_free(xpv_table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i].text);
    free(t->cells);
    xpv_buf_free(&t->props);
    free(t);
}

size_t xpv_table_add_row(xpv_table *t)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->cells = xpv_xrealloc(t->cells, t->cap * t->ncols * sizeof *t->cells);
    }
    memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof *t->cells);
    return t->nrows++;
}

size_t xpv_table_rows(const xpv_table *t)
{
    return t->nrows;
}

static cell *cell_at(xpv_table *t, size_t row, size_t col)
{
    assert(row < t->nrows && col < t->ncols);
    cell *c = &t->cells[row * t->ncols + col];
    free(c->text);
    *c = (cell){CELL_NULL, NULL, 0};
    return c;
}

static void set_number_text(xpv_table *t, size_t row, size_t col, const char *s, size_t n)
{
    cell *c = cell_at(t, row, col);
    c->kind = CELL_NUMBER;
    c->text = xpv_xstrndup(s, n);
    c->len = n;
}

void xpv_table_set_double(xpv_table *t, size_t row, size_t col, double v)
{
    xpv_buf b = {0};
    xpv_buf_json_double(&b, v); /* non-finite: null */
    set_number_text(t, row, col, b.data, b.len);
    if (strcmp(b.data, "null") == 0) cell_at(t, row, col)->kind = CELL_NULL;
    xpv_buf_free(&b);
}

void xpv_table_set_int(xpv_table *t, size_t row, size_t col, int64_t v)
{
    char s[32];
    int n = snprintf(s, sizeof s, "%lld", (long long)v);
    set_number_text(t, row, col, s, (size_t)n);
}

void xpv_table_set_ps_us(xpv_table *t, size_t row, size_t col, double ps)
{
    /* As xpv_api_put_ps_col: an integer ps divided by 1e6 rounds once, to
     * the double nearest the exact decimal, which prints as that decimal. */
    xpv_table_set_double(t, row, col, ps / 1e6);
}

void xpv_table_set_text(xpv_table *t, size_t row, size_t col, const char *s, size_t n)
{
    cell *c = cell_at(t, row, col);
    if (!s) return; /* null */
    c->kind = t->cols[col].type == XPV_COL_BOOLEAN ? CELL_BOOL : CELL_TEXT;
    c->text = xpv_xstrndup(s, n);
    c->len = n;
}

void xpv_table_set_property(xpv_table *t, const char *key, const char *value)
{
    if (t->props.len) xpv_buf_putc(&t->props, ',');
    xpv_buf_json_str(&t->props, key, strlen(key));
    xpv_buf_putc(&t->props, ':');
    xpv_buf_json_str(&t->props, value, strlen(value));
}

static const char *type_name(xpv_col_type type)
{
    return type == XPV_COL_NUMBER ? "number" : type == XPV_COL_BOOLEAN ? "boolean" : "string";
}

static void put_value(xpv_buf *out, const cell *c)
{
    if (c->kind == CELL_NULL)
        xpv_buf_puts(out, "null");
    else if (c->kind == CELL_TEXT)
        xpv_buf_json_str(out, c->text, c->len);
    else if (c->kind == CELL_BOOL)
        xpv_buf_puts(out, c->len && c->text[0] != '0' && c->text[0] != 'f' ? "true" : "false");
    else
        xpv_buf_append(out, c->text, c->len);
}

static void put_columns(const xpv_table *t, xpv_buf *out)
{
    for (size_t i = 0; i < t->ncols; i++) {
        const xpv_table_col *c = &t->cols[i];
        xpv_buf_puts(out, i ? ",{\"id\":" : "{\"id\":");
        xpv_buf_json_str(out, c->id, strlen(c->id));
        xpv_buf_puts(out, ",\"label\":");
        xpv_buf_json_str(out, c->label, strlen(c->label));
        xpv_buf_printf(out, ",\"type\":\"%s\"}", type_name(c->type));
    }
}

void xpv_table_put_datatable(const xpv_table *t, xpv_buf *out)
{
    xpv_buf_puts(out, "{\"cols\":[");
    put_columns(t, out);
    xpv_buf_puts(out, "],\"rows\":[");
    for (size_t r = 0; r < t->nrows; r++) {
        xpv_buf_puts(out, r ? ",{\"c\":[" : "{\"c\":[");
        for (size_t i = 0; i < t->ncols; i++) {
            xpv_buf_puts(out, i ? ",{\"v\":" : "{\"v\":");
            put_value(out, &t->cells[r * t->ncols + i]);
            xpv_buf_putc(out, '}');
        }
        xpv_buf_puts(out, "]}");
    }
    xpv_buf_printf(out, "],\"p\":{%.*s}}", (int)t->props.len, t->props.data ? t->props.data : "");
}

void xpv_table_put_json(const xpv_table *t, xpv_buf *out)
{
    xpv_buf_puts(out, "{\"columns\":[");
    put_columns(t, out);
    xpv_buf_puts(out, "],\"rows\":[");
    for (size_t r = 0; r < t->nrows; r++) {
        xpv_buf_putc(out, r ? ',' : '{');
        if (r) xpv_buf_putc(out, '{');
        for (size_t i = 0; i < t->ncols; i++) {
            if (i) xpv_buf_putc(out, ',');
            xpv_buf_json_str(out, t->cols[i].id, strlen(t->cols[i].id));
            xpv_buf_putc(out, ':');
            put_value(out, &t->cells[r * t->ncols + i]);
        }
        xpv_buf_putc(out, '}');
    }
    xpv_buf_printf(out, "],\"properties\":{%.*s}}", (int)t->props.len,
                   t->props.data ? t->props.data : "");
}

/* RFC 4180: a field with a comma, quote or line break is quoted. */
static void put_csv_field(xpv_buf *out, const char *s, size_t n)
{
    if (!memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\n', n) && !memchr(s, '\r', n)) {
        xpv_buf_append(out, s, n);
        return;
    }
    xpv_buf_putc(out, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') xpv_buf_putc(out, '"');
        xpv_buf_putc(out, s[i]);
    }
    xpv_buf_putc(out, '"');
}

void xpv_table_put_csv(const xpv_table *t, xpv_buf *out)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (i) xpv_buf_putc(out, ',');
        put_csv_field(out, t->cols[i].label, strlen(t->cols[i].label));
    }
    xpv_buf_puts(out, "\r\n");
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t i = 0; i < t->ncols; i++) {
            const cell *c = &t->cells[r * t->ncols + i];
            if (i) xpv_buf_putc(out, ',');
            if (c->kind != CELL_NULL) put_csv_field(out, c->text, c->len);
        }
        xpv_buf_puts(out, "\r\n");
    }
}
