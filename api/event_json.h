/*
 * event_json.h — one stored event's parts as JSON: arg values with interned
 * names resolved, used by the trace export and the event details answer.
 */
#ifndef XPV_EVENT_JSON_H
#define XPV_EVENT_JSON_H

#include "api_util.h"
#include "../store/xpv_event.h"

/* Appends one arg's value (number, string or raw JSON). */
void xpv_api_put_arg_value(xpv_buf *b, const xpv_arg *a, xpv_api_strings *strings);

/* Appends {"key": value, ...}; args for which skip(key) returns 1 are left
 * out (skip may be NULL). Duplicate keys keep the first. */
void xpv_api_put_args(xpv_buf *b, const xpv_event *ev, xpv_api_strings *strings,
                      int (*skip)(const xpv_event *ev, const char *key));

#endif
