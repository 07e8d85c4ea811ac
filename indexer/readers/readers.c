/*
 * readers.c — which reader handles which format.
 */
#include "readers.h"
#include "../discover.h"

#include <string.h>

xpv_reader_fn xpv_reader_for(const char *format)
{
    if (strcmp(format, XPV_FMT_XPLANE) == 0) return xpv_read_xplane;
    if (strcmp(format, XPV_FMT_NSYS_SQLITE) == 0) return xpv_read_nsys_sqlite;
    if (strcmp(format, XPV_FMT_NSYS_REP) == 0 || strcmp(format, XPV_FMT_UNKNOWN) == 0) return NULL;
    return xpv_read_chrome_json;
}
