/*
 * hlo_table.h — the cells the HLO tools (hlo_stats, op_profile,
 * roofline_model) write alike: an op's program, module, category and name,
 * rates over the ops' time, exact sums, and the table's properties saying
 * where the numbers came from.
 *
 * Invariant: a value the profile does not carry is left null, never 0.
 */
#ifndef XPV_HLO_TABLE_H
#define XPV_HLO_TABLE_H

#include "hlo_ops.h"

/* Text, or null for NULL. */
void xpv_hlo_table_set_str(xpv_table *t, size_t row, size_t col, const char *s);
/* The program id (decimal text: ids are 64-bit fingerprints), module,
 * category and op name of o, each in its column; XPV_HLO_SKIP skips one. */
#define XPV_HLO_SKIP ((size_t)-1)
void xpv_hlo_table_set_op_names(xpv_table *t, size_t row, const xpv_hlo_op *o, size_t program,
                                size_t module, size_t category, size_t name);
/* amount per ns of time_ps (giga-amount per second: GFLOP/s for flops);
 * null when !has or no time. */
void xpv_hlo_table_set_rate(xpv_table *t, size_t row, size_t col, int has, long double amount,
                            int64_t time_ps);
/* bytes over time_ps in GiB/s (XProf's unit for bandwidth); null likewise. */
void xpv_hlo_table_set_bw(xpv_table *t, size_t row, size_t col, int has, long double bytes,
                          int64_t time_ps);
/* A sum: an integer when it is one, null when !has. */
void xpv_hlo_table_set_sum(xpv_table *t, size_t row, size_t col, int has, long double v);
/* Where a sum came from: "derived" (from the module's shapes,
 * hlo_derive.h) or "measured" (a stat the profile carries); null when
 * !has. Groups that hold both say "measured,derived". */
void xpv_hlo_table_set_source(xpv_table *t, size_t row, size_t col, int measured, int derived);
/* source ("xla_ops", "kernels" or both), category_source ("hlo_category",
 * "op_name" or both), total_self_time_us, the device events without an
 * HLO op (unattributed_events, unattributed_time_us) where there are any,
 * and flops_source / bytes_source ("measured", "derived" or both) where
 * any op has FLOPs / bytes, with flops_derive_error when a profile's
 * modules could not be read. */
void xpv_hlo_table_set_properties(xpv_table *t, const xpv_hlo_ops *ops);

#endif
