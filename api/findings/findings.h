/*
 * findings.h — what is slow in a profile and why: compilation in the
 * profiled window, input stalls, exposed collectives, transfers, launch
 * overhead, slow steps, hot spots and idle devices, each with its number,
 * the threshold it crossed and evidence (time windows and event refs that
 * open the timeline there).
 *
 * Computed on request from what the index holds (steps, kernel_stats, the
 * event blocks); thresholds come from one table of defaults
 * (findings_config.c) that a key=value file can override.
 */
#ifndef XPV_FINDINGS_H
#define XPV_FINDINGS_H

#include "../../common/xpv_common.h"
#include <sqlite3.h>

/* Every threshold, by key (see findings_config.c for the defaults and
 * what each one means). */
typedef struct {
    double compile_min_ms;          /* compilation below this is not reported */
    double compile_step_share_crit; /* compile time inside steps, share of step time: critical */
    double input_share_warn, input_share_crit;
    double collective_share_info; /* collectives this share of device step time: info */
    double exposed_share_warn, exposed_share_crit;
    double transfer_share_warn, transfer_share_crit;
    double sync_copies_per_step_warn;
    double launch_min_kernels, launch_short_kernel_us, launch_short_share, launch_idle_share_warn;
    double step_outlier_factor, step_outlier_min_steps;
    double hot_spot_top_share; /* the top 3 ops/kernels' share of device time */
    double idle_device_share;  /* busy time under this share of the busiest device's */
} xpv_findings_config;

/* The defaults (one table in findings_config.c). */
void xpv_findings_config_defaults(xpv_findings_config *c);
/* Applies "key=value" lines ('#' starts a comment, blank lines ignored) on
 * top of c. 0, or -1 with err naming the line and the reason (an unknown
 * key, a value that is not a finite number >= 0). */
int xpv_findings_config_parse(xpv_findings_config *c, const char *text, xpv_err *err);
/* Writes the table of keys, defaults and meanings (for --help and docs). */
void xpv_findings_config_describe(xpv_buf *out);

/* `{"profile", "status", "findings": [{"kind", "severity": "info" |
 * "warning" | "critical", "title", "value", "unit", "threshold",
 * "explanation", "evidence": [{"start_us", "end_us", "ref", "label"}]}]}`,
 * most severe first. start_us/end_us are in the events answer's clock;
 * ref is "<block>:<index>" (xpv_api_event) or null. A profile not
 * indexed (pending, unsupported, unreadable) has "findings": null; one
 * read in part (an error after some events) is judged on what was read.
 * 200, 404 or 500. */
int xpv_api_findings(sqlite3 *db, int64_t id, const xpv_findings_config *cfg, xpv_buf *out);

#endif
