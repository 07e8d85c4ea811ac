/*
 * routes.h — the handlers of the REST API under /api/, one per row of the
 * route table (route_table.c, which lists the routes, their parameters
 * and what each answers; `xprof-view --routes` prints it). A handler is
 * called with its parameters checked and its {id} resolved, and fills the
 * reply from api/.
 */
#ifndef XPV_ROUTES_H
#define XPV_ROUTES_H

#include "route_params.h"

void xpv_routes_health(xpv_route_req *q, xpv_reply *r);
void xpv_routes_stream(xpv_route_req *q, xpv_reply *r);
void xpv_routes_profiles(xpv_route_req *q, xpv_reply *r);
void xpv_routes_latest(xpv_route_req *q, xpv_reply *r);
void xpv_routes_profile(xpv_route_req *q, xpv_reply *r);
void xpv_routes_kernels(xpv_route_req *q, xpv_reply *r);
void xpv_routes_steps(xpv_route_req *q, xpv_reply *r);
void xpv_routes_tracks(xpv_route_req *q, xpv_reply *r);
void xpv_routes_events(xpv_route_req *q, xpv_reply *r);
void xpv_routes_event(xpv_route_req *q, xpv_reply *r);
void xpv_routes_search(xpv_route_req *q, xpv_reply *r);
void xpv_routes_counters(xpv_route_req *q, xpv_reply *r);
void xpv_routes_aggregate(xpv_route_req *q, xpv_reply *r);
void xpv_routes_modules(xpv_route_req *q, xpv_reply *r);
void xpv_routes_findings(xpv_route_req *q, xpv_reply *r);
void xpv_routes_trace(xpv_route_req *q, xpv_reply *r);
void xpv_routes_tools(xpv_route_req *q, xpv_reply *r);
void xpv_routes_trace_viewer(xpv_route_req *q, xpv_reply *r);
void xpv_routes_tool(xpv_route_req *q, xpv_reply *r);
void xpv_routes_memory_profile(xpv_route_req *q, xpv_reply *r);
void xpv_routes_memory_viewer(xpv_route_req *q, xpv_reply *r);
void xpv_routes_hlo(xpv_route_req *q, xpv_reply *r);
/* The compiled module a request names: module=, or XProf's module_name=
 * ("jit_train_step(18566)") or program_id= (18566); NULL when none. */
const char *xpv_routes_module(xpv_route_req *q);
void xpv_routes_compare(xpv_route_req *q, xpv_reply *r);
/* The 404 of a path under /api/ that names no route. */
void xpv_routes_not_found(xpv_route_req *q, xpv_reply *r);

/* After an answer about profiles ids[0..n): a 500 caused by a damaged event
 * block becomes a 503 naming the profile, and the indexer thread is asked
 * to check them (and index a damaged one again). */
void xpv_routes_damaged(xpv_server *s, const int64_t *ids, size_t n, xpv_reply *r);

#endif
