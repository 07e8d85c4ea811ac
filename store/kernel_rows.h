/*
 * kernel_rows.h — kernel rows as the indexer gathers them in memory, before
 * they are written (kernel_stats.c writes them; kernel_device_stats.c packs
 * each device's), and the bits that say which of a row's values are known,
 * on rows written and rows read alike. Types only: the functions on rows
 * are kernel_stats.h's.
 */
#ifndef XPV_STORE_KERNEL_ROWS_H
#define XPV_STORE_KERNEL_ROWS_H

#include "../common/xpv_common.h"

#include <stddef.h>
#include <stdint.h>

/* Bits of xpv_store_kernel_stat.known. */
enum {
    XPV_STORE_KSTAT_COUNT = 1u << 0,
    XPV_STORE_KSTAT_TOTAL = 1u << 1,
    XPV_STORE_KSTAT_MIN = 1u << 2,
    XPV_STORE_KSTAT_MAX = 1u << 3,
    XPV_STORE_KSTAT_MEDIAN = 1u << 4,
    XPV_STORE_KSTAT_STDDEV = 1u << 5,
    XPV_STORE_KSTAT_PERCENT = 1u << 6,
    XPV_STORE_KSTAT_REGS = 1u << 7,
    XPV_STORE_KSTAT_SHMEM = 1u << 8,
    XPV_STORE_KSTAT_OCCUPANCY = 1u << 9,
    XPV_STORE_KSTAT_SHAPES = 1u << 10,
};

/* Rows gathered in memory for xpv_store_kernel_stats_write. Texts (the
 * columns below) are copied into `text`; a numeric column marked in
 * `known` by the bits above or below is written, else NULL (count, total,
 * min, max, median, stddev and seq are always written). */
enum { XPV_STORE_KSTAT_OP = 1u << 11, XPV_STORE_KSTAT_RANK = 1u << 12 };
enum {
    XPV_STORE_KCOL_KIND,
    XPV_STORE_KCOL_NAME,
    XPV_STORE_KCOL_CATEGORY,
    XPV_STORE_KCOL_GRID,
    XPV_STORE_KCOL_BLOCK,
    XPV_STORE_KCOL_TEXTS
};

typedef struct {
    size_t off, len; /* in the rows' text; off SIZE_MAX: NULL */
} xpv_store_kernel_text;

typedef struct {
    xpv_store_kernel_text text[XPV_STORE_KCOL_TEXTS];
    int device;
    int64_t seq, count, total_ps, min_ps, max_ps;
    double median_ps, stddev_ps, percent;
    int64_t registers_per_thread, shared_memory_bytes;
    double occupancy_pct;
    int64_t op_id, shapes, top_rank;
    unsigned known;
} xpv_store_kernel_row;

typedef struct xpv_store_kernel_rows {
    xpv_store_kernel_row *v;
    size_t n, cap;
    xpv_buf text;
    uint32_t *order; /* v's indexes in the table's key order, when made */
    size_t ordered;  /* how many rows order covers; stale unless n */
} xpv_store_kernel_rows;

#endif
