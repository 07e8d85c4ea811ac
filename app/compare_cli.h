/*
 * compare_cli.h — `xprof-view --compare A B [--json] [--fail-if-slower=PCT]`.
 */
#ifndef XPV_COMPARE_CLI_H
#define XPV_COMPARE_CLI_H

#include "cli.h"

/* Exit status of the process: 0 compared (within the gate), 1 could not
 * compare (or the gate's figure is unknown), 3 B slower than the gate. */
#define XPV_COMPARE_EXIT_SLOWER 3
int xpv_compare_main(const xpv_options *o);

#endif
