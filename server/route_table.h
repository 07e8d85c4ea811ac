/*
 * route_table.h — every route of the main listener as one table
 * (route_table.c): method, path pattern, handler, query parameters,
 * whether the answer is cached, and a one-line summary. The router
 * (router.c) matches a request against it and calls the row's handler;
 * `xprof-view --routes` prints it, and docs/API.md, static/js/api.js,
 * scripts/api_snapshot.py and the fuzz dictionary are checked against that
 * print (tests/e2e/test_route_table.py).
 *
 * Patterns: literal text, `{name}` (one non-empty path segment) and, last
 * only, `{name*}` (the rest of the path, slashes included, maybe empty).
 * A `{id}` segment is always a profile id: 16 hex digits or "latest",
 * resolved before the handler runs. Rows are tried in order; the first
 * that matches answers, so a literal row precedes a pattern that would
 * also match it, and each prefix ends with a fallback row (the 404 of a
 * path under it that names no route).
 *
 * Parameters are parsed and checked once, by route_params.c, in the order
 * the row lists them: first every required one's presence, then each
 * value. A bad one is a 400 with the parameter's error text.
 */
#ifndef XPV_ROUTE_TABLE_H
#define XPV_ROUTE_TABLE_H

#include "route_params.h"

/* The table, in match order. */
const xpv_route *xpv_route_table(size_t *n);

/* Matches path against pattern: the number of captures (filled into
 * caps[0..max)), or -1. */
int xpv_route_match(const char *pattern, const char *path, xpv_route_capture *caps, int max);

/* The first row matching path and method (HEAD answers as GET), with its
 * captures; clean gets the path as matched (a trailing slash dropped for
 * SLASH rows). NULL when no row matches. */
const xpv_route *xpv_route_find(const char *method, const char *path, char *clean, size_t n,
                                xpv_route_capture *caps, int *ncaps);

/* The table as JSON ({"routes": [...]}), for `xprof-view --routes`. */
void xpv_route_table_json(xpv_buf *out);

#endif
