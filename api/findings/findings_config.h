/*
 * findings_config.h — the findings' thresholds: the settings every
 * detector reads, their defaults and the key=value file that overrides
 * them. Apart from findings.h so that the detectors' shared header can
 * name the settings without the answer that runs the detectors.
 */
#ifndef XPV_FINDINGS_CONFIG_H
#define XPV_FINDINGS_CONFIG_H

#include "../../common/xpv_common.h"

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
    double host_share_warn, host_share_crit; /* step time waiting on the host between graphs */
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

#endif
