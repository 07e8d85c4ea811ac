/*
 * tensorboard_routes.h — a minimal TensorBoard profile-plugin API under
 * /data/plugin/profile/ (runs, run_tools, hosts, data, data_csv,
 * module_list) for tools written against TensorBoard: trace_viewer
 * (Chrome trace JSON) and the other tools as Google Charts DataTables.
 * The handlers of the route table's TensorBoard rows (route_table.c);
 * see docs/API.md.
 */
#ifndef XPV_TENSORBOARD_ROUTES_H
#define XPV_TENSORBOARD_ROUTES_H

#include "route_params.h"

/* Any fault of data's trace window (start_time_ms, end_time_ms). */
#define XPV_TB_WINDOW_ERROR "start_time_ms and end_time_ms must be numbers, start < end"

void xpv_tb_runs(xpv_route_req *q, xpv_reply *r);
void xpv_tb_run_tools(xpv_route_req *q, xpv_reply *r);
void xpv_tb_hosts(xpv_route_req *q, xpv_reply *r);
void xpv_tb_data(xpv_route_req *q, xpv_reply *r);
void xpv_tb_data_csv(xpv_route_req *q, xpv_reply *r);
void xpv_tb_module_list(xpv_route_req *q, xpv_reply *r);
/* The 404 of a path under /data/plugin/profile/ that names no route. */
void xpv_tb_not_found(xpv_route_req *q, xpv_reply *r);

#endif
