/*
 * findings.h — what is slow in a profile and why: compilation in the
 * profiled window, input stalls, exposed collectives, transfers, launch
 * overhead, slow steps, hot spots and idle devices, each with its number,
 * the threshold it crossed and evidence (time windows and event refs that
 * open the timeline there).
 *
 * Computed from what the index holds (steps, kernel_stats, the event
 * blocks) once per profile and thresholds, and kept in the index
 * (findings_keep.c, store/findings.h); thresholds come from one table of
 * defaults (findings_config.h) that a key=value file can override.
 */
#ifndef XPV_FINDINGS_H
#define XPV_FINDINGS_H

#include "findings_config.h"
#include "../../common/xpv_common.h"
#include <sqlite3.h>

/* `{"profile", "status", "findings": [{"kind", "severity": "info" |
 * "warning" | "critical", "title", "value", "unit", "threshold",
 * "explanation", "evidence": [{"start_us", "end_us", "ref", "label"}]}]}`,
 * most severe first. start_us/end_us are in the events answer's clock;
 * ref is "<block>:<index>" (xpv_api_event) or null. A profile not
 * indexed (pending, unsupported, unreadable) has "findings": null; one
 * read in part (an error after some events) is judged on what was read.
 * 200, 404 or 500. */
int xpv_api_findings(sqlite3 *db, int64_t id, const xpv_findings_config *cfg, xpv_buf *out);

/* The writer's step: computes profile id's answer for cfg and keeps it in
 * the index, unless one is kept already, the profile is not read whole
 * (pending, read in part, unsupported) or XPV_FINDINGS_STORE=off. Until
 * then xpv_api_findings computes it on each ask. Returns 1 when it kept
 * one, 0 when there was nothing to keep (or another connection indexed
 * the profile again meanwhile), -1 with err. */
int xpv_api_findings_keep(sqlite3 *db, int64_t id, const xpv_findings_config *cfg, xpv_err *err);

#endif
