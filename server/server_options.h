/*
 * server_options.h — what the HTTP server needs to know of the command
 * line, and nothing more: app/ parses the flags and fills this in, so the
 * server does not depend on the flag parser.
 */
#ifndef XPV_SERVER_OPTIONS_H
#define XPV_SERVER_OPTIONS_H

#include "../api/findings/findings.h"

typedef enum { XPV_UI_BOTH, XPV_UI_PERFETTO, XPV_UI_TENSORBOARD } xpv_ui_mode;

typedef struct {
    const char *host;               /* the address the main listener binds */
    int port;                       /* 0: any free port */
    int perfetto_port;              /* 0 disables the hand-off listener */
    xpv_ui_mode ui;                 /* which UI "/" opens */
    int max_connections;            /* open HTTP connections at once */
    int client_timeout_s;           /* an idle or slow connection is closed after this */
    int settle_ms;                  /* reported by /api/health: how long a file must settle */
    xpv_findings_config findings;   /* thresholds of /findings */
    const char *token;              /* asked of every request of the main listener; NULL: none */
    const char *const *allow_hosts; /* more names the Host header may give ("*": any) */
    int n_allow_hosts;
} xpv_server_options;

#endif
