/*
 * serve.c — placeholder until the HTTP server lands.
 */
#include "serve.h"

int xpv_serve(const xpv_options *opts, const char *db_path, xpv_found_list *found)
{
    (void)opts;
    (void)db_path;
    (void)found;
    fprintf(stderr, "xprof-view: the HTTP server is not built yet\n");
    return 1;
}
