/*
 * serve.h — the HTTP server (libmicrohttpd): API routes, embedded frontend,
 * the Perfetto hand-off listener, and background indexing.
 */
#ifndef XPV_SERVE_H
#define XPV_SERVE_H

#include "cli.h"
#include "../indexer/discover.h"

/* Serves until SIGINT/SIGTERM. The index at db_path is already registered
 * (pending profiles are indexed in the background). profile_arg is the
 * directory or file discovery walked (re-scanned while serving). Returns
 * the exit code. */
int xpv_serve(const xpv_options *opts, const char *db_path, const char *profile_arg,
              xpv_found_list *found);

#endif
