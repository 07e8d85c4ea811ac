/*
 * kernel_device_stats.c — the blob of one (profile, kind, device)'s kernel
 * rows, and kernel_device_rows(blob), the table-valued function that reads
 * it as rows (see kernel_device_stats.h).
 *
 * Blob layout (integers LEB128 varints; "z" = zigzag-encoded signed):
 *   u8 version (1), row count, then per row in key order (name, seq):
 *     varint known (XPV_STORE_KSTAT_* bits of the optional columns),
 *     u8 texts (1 category, 2 grid, 4 block: present, else NULL),
 *     name (length + bytes), z seq, z count, z total_ps, z min_ps, z max_ps,
 *     median_ps and stddev_ps (8 bytes little-endian each), then when known:
 *     percent (8 bytes), the present texts (length + bytes each), z
 *     registers_per_thread, z shared_memory_bytes, occupancy_pct (8 bytes),
 *     z op_id, z shapes, z top_rank.
 * The columns always written are those kernel_stats_write always binds, so
 * a row reads back as the table's row would: a NaN median or stddev is
 * NULL (SQLite stores a NaN double as NULL), texts keep their bytes.
 * Decoding checks every length against the blob: damage is an error
 * naming it (XPV_STORE_KERNEL_DEVICE_DAMAGED), never an out-of-bounds read.
 */
#include "kernel_device_stats.h"
#include "db.h"
#include "../common/varint.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define KDEV_VERSION 1

/* The nullable texts, in the order of their bits in a row's texts byte. */
static const int OPTIONAL_TEXTS[] = {XPV_STORE_KCOL_CATEGORY, XPV_STORE_KCOL_GRID,
                                     XPV_STORE_KCOL_BLOCK};
enum { N_OPTIONAL_TEXTS = sizeof OPTIONAL_TEXTS / sizeof OPTIONAL_TEXTS[0] };

/* Optional columns: written, and read, only when known. */
#define OPTIONAL_BITS                                                                              \
    (XPV_STORE_KSTAT_PERCENT | XPV_STORE_KSTAT_REGS | XPV_STORE_KSTAT_SHMEM |                      \
     XPV_STORE_KSTAT_OCCUPANCY | XPV_STORE_KSTAT_OP | XPV_STORE_KSTAT_SHAPES |                     \
     XPV_STORE_KSTAT_RANK)

/* ---- writing ---- */

/* Rows are written through a pointer into space reserved for the row's
 * largest encoding (row_bound): the writer's one thread encodes every
 * device row of the run, and a call per byte written cost it twice as
 * much. */

static unsigned char *put_double(unsigned char *p, double v)
{
    memcpy(p, &v, sizeof v); /* the index is little-endian, as event_store.c */
    return p + sizeof v;
}

static unsigned char *put_text(unsigned char *p, const xpv_store_kernel_rows *rows,
                               xpv_store_kernel_text t)
{
    p = xpv_varint_put(p, t.len);
    if (t.len) memcpy(p, rows->text.data + t.off, t.len);
    return p + t.len;
}

/* Which optional texts a row has, as its texts byte. */
static unsigned row_texts(const xpv_store_kernel_row *r)
{
    unsigned texts = 0;
    for (int i = 0; i < N_OPTIONAL_TEXTS; i++)
        if (r->text[OPTIONAL_TEXTS[i]].off != SIZE_MAX) texts |= 1u << i;
    return texts;
}

/* The most bytes put_row writes for r: 1 texts byte, 4 doubles, 15
 * integers (known, 4 text lengths, 10 numbers) each a full varint. */
static size_t row_bound(const xpv_store_kernel_row *r, unsigned texts)
{
    size_t n = 1 + 4 * sizeof(double) + 15 * XPV_VARINT_MAX + r->text[XPV_STORE_KCOL_NAME].len;
    for (int i = 0; i < N_OPTIONAL_TEXTS; i++)
        if (texts & (1u << i)) n += r->text[OPTIONAL_TEXTS[i]].len;
    return n;
}

static unsigned char *put_row(unsigned char *p, const xpv_store_kernel_rows *rows,
                              const xpv_store_kernel_row *r, unsigned texts)
{
    unsigned known = r->known & OPTIONAL_BITS;
    p = xpv_varint_put(p, known);
    *p++ = (unsigned char)texts;
    assert(r->text[XPV_STORE_KCOL_NAME].off != SIZE_MAX); /* name is NOT NULL */
    p = put_text(p, rows, r->text[XPV_STORE_KCOL_NAME]);
    const int64_t always[] = {r->seq, r->count, r->total_ps, r->min_ps, r->max_ps};
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        p = xpv_zigzag_put(p, always[i]);
    p = put_double(p, r->median_ps);
    p = put_double(p, r->stddev_ps);
    if (known & XPV_STORE_KSTAT_PERCENT) p = put_double(p, r->percent);
    for (int i = 0; i < N_OPTIONAL_TEXTS; i++)
        if (texts & (1u << i)) p = put_text(p, rows, r->text[OPTIONAL_TEXTS[i]]);
    if (known & XPV_STORE_KSTAT_REGS) p = xpv_zigzag_put(p, r->registers_per_thread);
    if (known & XPV_STORE_KSTAT_SHMEM) p = xpv_zigzag_put(p, r->shared_memory_bytes);
    if (known & XPV_STORE_KSTAT_OCCUPANCY) p = put_double(p, r->occupancy_pct);
    if (known & XPV_STORE_KSTAT_OP) p = xpv_zigzag_put(p, r->op_id);
    if (known & XPV_STORE_KSTAT_SHAPES) p = xpv_zigzag_put(p, r->shapes);
    if (known & XPV_STORE_KSTAT_RANK) p = xpv_zigzag_put(p, r->top_rank);
    return p;
}

void xpv_store_kernel_device_stats_encode(const xpv_store_kernel_rows *rows, size_t from, size_t to,
                                          xpv_buf *out)
{
    assert(from < to && to <= rows->n && rows->ordered == rows->n);
    xpv_buf_reserve(out, 1 + XPV_VARINT_MAX);
    unsigned char *p = (unsigned char *)out->data + out->len;
    *p++ = KDEV_VERSION;
    p = xpv_varint_put(p, to - from);
    out->len = (size_t)(p - (unsigned char *)out->data);
    for (size_t i = from; i < to; i++) {
        const xpv_store_kernel_row *r = &rows->v[rows->order[i]];
        unsigned texts = row_texts(r);
        xpv_buf_reserve(out, row_bound(r, texts));
        p = put_row((unsigned char *)out->data + out->len, rows, r, texts);
        out->len = (size_t)(p - (unsigned char *)out->data);
    }
}

/* ---- reading ---- */

/* A row is read into the writer's row type (kernel_rows.h), its texts at
 * offsets into the blob; kind, the only text not in a blob, stays NULL. */

static xpv_store_kernel_text get_text(xpv_varint_reader *r, const unsigned char *blob)
{
    uint64_t n = xpv_varint_get(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) {
        r->bad = 1;
        return (xpv_store_kernel_text){0, 0};
    }
    xpv_store_kernel_text t = {(size_t)(r->p - blob), (size_t)n};
    r->p += n;
    return t;
}

static double get_double(xpv_varint_reader *r)
{
    double v = 0;
    if (r->end - r->p < (ptrdiff_t)sizeof v) {
        r->bad = 1;
        return 0;
    }
    memcpy(&v, r->p, sizeof v);
    r->p += sizeof v;
    return v;
}

/* The next row at r (in blob) into row; 0, or -1 when the bytes are damaged. */
static int get_row(xpv_varint_reader *r, const unsigned char *blob, xpv_store_kernel_row *row)
{
    memset(row, 0, sizeof *row);
    for (int c = 0; c < XPV_STORE_KCOL_TEXTS; c++)
        row->text[c].off = SIZE_MAX;
    uint64_t known = xpv_varint_get(r);
    unsigned texts = xpv_varint_u8(r);
    if (known & ~(uint64_t)OPTIONAL_BITS || texts >> N_OPTIONAL_TEXTS) return -1;
    row->known = (unsigned)known;
    row->text[XPV_STORE_KCOL_NAME] = get_text(r, blob);
    int64_t *always[] = {&row->seq, &row->count, &row->total_ps, &row->min_ps, &row->max_ps};
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        *always[i] = xpv_zigzag_get(r);
    row->median_ps = get_double(r);
    row->stddev_ps = get_double(r);
    unsigned k = row->known;
    if (k & XPV_STORE_KSTAT_PERCENT) row->percent = get_double(r);
    for (int i = 0; i < N_OPTIONAL_TEXTS; i++)
        if (texts & (1u << i)) row->text[OPTIONAL_TEXTS[i]] = get_text(r, blob);
    if (k & XPV_STORE_KSTAT_REGS) row->registers_per_thread = xpv_zigzag_get(r);
    if (k & XPV_STORE_KSTAT_SHMEM) row->shared_memory_bytes = xpv_zigzag_get(r);
    if (k & XPV_STORE_KSTAT_OCCUPANCY) row->occupancy_pct = get_double(r);
    if (k & XPV_STORE_KSTAT_OP) row->op_id = xpv_zigzag_get(r);
    if (k & XPV_STORE_KSTAT_SHAPES) row->shapes = xpv_zigzag_get(r);
    if (k & XPV_STORE_KSTAT_RANK) row->top_rank = xpv_zigzag_get(r);
    return r->bad ? -1 : 0;
}

/* ---- kernel_device_rows(blob) ---- */

enum {
    C_NAME,
    C_SEQ,
    C_CATEGORY,
    C_COUNT,
    C_TOTAL,
    C_MIN,
    C_MAX,
    C_MEDIAN,
    C_STDDEV,
    C_PERCENT,
    C_GRID,
    C_BLOCK,
    C_REGS,
    C_SHMEM,
    C_OCCUPANCY,
    C_OP,
    C_SHAPES,
    C_RANK,
    C_BLOB /* hidden: the argument */
};

typedef struct {
    sqlite3_vtab base;
} kdev_vtab;

typedef struct {
    sqlite3_vtab_cursor base;
    unsigned char *blob; /* a copy: the argument lives as long as one call */
    xpv_varint_reader at;
    uint64_t left; /* rows after the current one */
    int64_t rowid;
    int eof;
    xpv_store_kernel_row row;
} kdev_cursor;

static int kdev_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **errmsg)
{
    (void)aux, (void)argc, (void)argv, (void)errmsg;
    int rc = sqlite3_declare_vtab(
        db, "CREATE TABLE x(name TEXT, seq INTEGER, category TEXT, count INTEGER,"
            " total_ps INTEGER, min_ps INTEGER, max_ps INTEGER, median_ps REAL, stddev_ps REAL,"
            " percent REAL, grid TEXT, block TEXT, registers_per_thread INTEGER,"
            " shared_memory_bytes INTEGER, occupancy_pct REAL, op_id INTEGER, shapes INTEGER,"
            " top_rank INTEGER, blob HIDDEN)");
    if (rc != SQLITE_OK) return rc;
    kdev_vtab *t = sqlite3_malloc(sizeof *t);
    if (!t) return SQLITE_NOMEM;
    memset(t, 0, sizeof *t);
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    *out = &t->base;
    return SQLITE_OK;
}

static int kdev_disconnect(sqlite3_vtab *t)
{
    sqlite3_free(t);
    return SQLITE_OK;
}

/* The blob must be given (blob = ?): rows exist only for one. */
static int kdev_best_index(sqlite3_vtab *t, sqlite3_index_info *info)
{
    (void)t;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        if (c->iColumn != C_BLOB || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
        if (!c->usable) return SQLITE_CONSTRAINT;
        info->aConstraintUsage[i].argvIndex = 1;
        info->aConstraintUsage[i].omit = 1;
        info->estimatedCost = 1000;
        info->estimatedRows = 1000;
        return SQLITE_OK;
    }
    return SQLITE_CONSTRAINT;
}

static int kdev_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out)
{
    (void)t;
    kdev_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->eof = 1;
    *out = &c->base;
    return SQLITE_OK;
}

static int kdev_close(sqlite3_vtab_cursor *cur)
{
    kdev_cursor *c = (kdev_cursor *)cur;
    sqlite3_free(c->blob);
    sqlite3_free(c);
    return SQLITE_OK;
}

/* The server then checks the profile (xpv_store_kernel_device_stats_verify)
 * and indexes it again (db.h: xpv_db_vtab_damaged). */
static int damaged(kdev_cursor *c)
{
    c->eof = 1;
    return xpv_db_vtab_damaged(c->base.pVtab, XPV_STORE_KERNEL_DEVICE_DAMAGED);
}

static int kdev_next(sqlite3_vtab_cursor *cur)
{
    kdev_cursor *c = (kdev_cursor *)cur;
    if (c->left == 0) {
        c->eof = 1;
        return c->at.p == c->at.end ? SQLITE_OK : damaged(c);
    }
    c->left--;
    c->rowid++;
    return get_row(&c->at, c->blob, &c->row) == 0 ? SQLITE_OK : damaged(c);
}

static int kdev_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                       sqlite3_value **argv)
{
    (void)idx_num, (void)idx_str;
    kdev_cursor *c = (kdev_cursor *)cur;
    sqlite3_free(c->blob);
    c->blob = NULL;
    c->eof = 1;
    c->rowid = 0;
    if (argc != 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) return SQLITE_OK;
    int n = sqlite3_value_bytes(argv[0]);
    const void *src = sqlite3_value_blob(argv[0]);
    if (n == 0 || !src) return damaged(c);
    if (!(c->blob = sqlite3_malloc(n))) return SQLITE_NOMEM;
    memcpy(c->blob, src, (size_t)n);
    c->at = (xpv_varint_reader){c->blob, c->blob + n, 0};
    unsigned version = xpv_varint_u8(&c->at);
    c->left = xpv_varint_get(&c->at);
    if (version != KDEV_VERSION || c->at.bad) return damaged(c);
    c->eof = 0;
    return kdev_next(cur);
}

static int kdev_eof(sqlite3_vtab_cursor *cur)
{
    return ((kdev_cursor *)cur)->eof;
}

static void result_text(sqlite3_context *ctx, const kdev_cursor *c, int col)
{
    xpv_store_kernel_text t = c->row.text[col];
    if (t.off != SIZE_MAX)
        sqlite3_result_text(ctx, (const char *)c->blob + t.off, (int)t.len, SQLITE_TRANSIENT);
    else
        sqlite3_result_null(ctx);
}

static void result_known_int(sqlite3_context *ctx, const xpv_store_kernel_row *r, unsigned bit,
                             int64_t v)
{
    if (r->known & bit)
        sqlite3_result_int64(ctx, v);
    else
        sqlite3_result_null(ctx);
}

static void result_known_real(sqlite3_context *ctx, const xpv_store_kernel_row *r, unsigned bit,
                              double v)
{
    if (r->known & bit)
        sqlite3_result_double(ctx, v);
    else
        sqlite3_result_null(ctx);
}

static int kdev_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    const kdev_cursor *c = (const kdev_cursor *)cur;
    const xpv_store_kernel_row *r = &c->row;
    switch (col) {
    case C_NAME:
        result_text(ctx, c, XPV_STORE_KCOL_NAME);
        break;
    case C_SEQ:
        sqlite3_result_int64(ctx, r->seq);
        break;
    case C_CATEGORY:
        result_text(ctx, c, XPV_STORE_KCOL_CATEGORY);
        break;
    case C_COUNT:
        sqlite3_result_int64(ctx, r->count);
        break;
    case C_TOTAL:
        sqlite3_result_int64(ctx, r->total_ps);
        break;
    case C_MIN:
        sqlite3_result_int64(ctx, r->min_ps);
        break;
    case C_MAX:
        sqlite3_result_int64(ctx, r->max_ps);
        break;
    case C_MEDIAN:
        sqlite3_result_double(ctx, r->median_ps);
        break; /* NaN: NULL */
    case C_STDDEV:
        sqlite3_result_double(ctx, r->stddev_ps);
        break;
    case C_PERCENT:
        result_known_real(ctx, r, XPV_STORE_KSTAT_PERCENT, r->percent);
        break;
    case C_GRID:
        result_text(ctx, c, XPV_STORE_KCOL_GRID);
        break;
    case C_BLOCK:
        result_text(ctx, c, XPV_STORE_KCOL_BLOCK);
        break;
    case C_REGS:
        result_known_int(ctx, r, XPV_STORE_KSTAT_REGS, r->registers_per_thread);
        break;
    case C_SHMEM:
        result_known_int(ctx, r, XPV_STORE_KSTAT_SHMEM, r->shared_memory_bytes);
        break;
    case C_OCCUPANCY:
        result_known_real(ctx, r, XPV_STORE_KSTAT_OCCUPANCY, r->occupancy_pct);
        break;
    case C_OP:
        result_known_int(ctx, r, XPV_STORE_KSTAT_OP, r->op_id);
        break;
    case C_SHAPES:
        result_known_int(ctx, r, XPV_STORE_KSTAT_SHAPES, r->shapes);
        break;
    case C_RANK:
        result_known_int(ctx, r, XPV_STORE_KSTAT_RANK, r->top_rank);
        break;
    default:
        sqlite3_result_null(ctx); /* the blob itself is not read back */
    }
    return SQLITE_OK;
}

static int kdev_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    *rowid = ((kdev_cursor *)cur)->rowid;
    return SQLITE_OK;
}

static const sqlite3_module KDEV_MODULE = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous only: no CREATE VIRTUAL TABLE */
    .xConnect = kdev_connect,
    .xBestIndex = kdev_best_index,
    .xDisconnect = kdev_disconnect,
    .xOpen = kdev_open,
    .xClose = kdev_close,
    .xFilter = kdev_filter,
    .xNext = kdev_next,
    .xEof = kdev_eof,
    .xColumn = kdev_column,
    .xRowid = kdev_rowid,
};

int xpv_store_kernel_device_stats_register(sqlite3 *db)
{
    return sqlite3_create_module_v2(db, "kernel_device_rows", &KDEV_MODULE, NULL, NULL);
}

int xpv_store_kernel_device_stats_verify(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    return xpv_db_verify_packed(db,
                                "SELECT count(*) FROM kernel_device_stats b,"
                                " kernel_device_rows(b.data) WHERE b.profile_id=?1",
                                profile_id, XPV_STORE_KERNEL_DEVICE_DAMAGED, err);
}
