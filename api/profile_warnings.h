/*
 * profile_warnings.h — a profile's stored warnings split into those a user
 * can act on and the readers' internal diagnostics.
 */
#ifndef XPV_API_PROFILE_WARNINGS_H
#define XPV_API_PROFILE_WARNINGS_H

#include "../common/xpv_common.h"

#include <stddef.h>

/* Writes `,"warnings":[...],"diagnostics":[...]` from the stored JSON array
 * `json` (n bytes; NULL or unparsable: both empty, or the text as one
 * warning when it is not an array). */
void xpv_api_put_profile_warnings(xpv_buf *b, const char *json, size_t n);

/* Whether one warning text is a reader diagnostic (1) or the user's (0). */
int xpv_api_warning_is_diagnostic(const char *text);

#endif
