/*
 * tensorboard_routes.h — a minimal TensorBoard profile-plugin API under
 * /data/plugin/profile/ (runs, run_tools, hosts, data, data_csv,
 * module_list) for tools written
 * against TensorBoard: trace_viewer (Chrome trace JSON) and kernel_stats
 * (a Google Charts DataTable). See FORMATS.md section 7.
 */
#ifndef XPV_TENSORBOARD_ROUTES_H
#define XPV_TENSORBOARD_ROUTES_H

#include "http.h"
#include "server_state.h"

void xpv_tensorboard_reply(xpv_server *s, struct MHD_Connection *c, const char *path, xpv_reply *r);

#endif
