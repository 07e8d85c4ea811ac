/*
 * cli.h — command-line options, compatible with the view_profile script
 * xprof-view replaces.
 */
#ifndef XPV_CLI_H
#define XPV_CLI_H

#include "../common/xpv_common.h"
#include "../server/server_options.h"

#include <stdio.h>

#define XPV_CLI_MAX_HOSTS 16

typedef struct {
    const char *profile_dir; /* NULL: auto-detect */
    int port;
    const char *host;
    int bind_all;
    const char *token;                          /* --token=T; NULL: made up when needed */
    int no_token;                               /* --no-token */
    const char *allow_hosts[XPV_CLI_MAX_HOSTS]; /* --allow-host=NAME, repeatable */
    int n_allow_hosts;
    int perfetto_port; /* 0 disables the hand-off listener */
    xpv_ui_mode ui;
    int list_only;
    int extract;
    const char *extract_dir; /* NULL: xprof-extract-<timestamp> */
    int json;
    const char *db_path;
    int open_browser;
    int show_version;
    int show_help;
    int show_routes; /* --routes: print the route table and exit */
    int quiet;
    xpv_input_limits limits;           /* what one gzip file may inflate to */
    int max_connections;               /* open HTTP connections at once */
    int jobs;                          /* profiles indexed at once; 0: one per CPU */
    int client_timeout_s;              /* an idle or slow connection is closed after this */
    const char *compare_a, *compare_b; /* --compare A B; NULL: not comparing */
    double fail_if_slower;             /* percent; < 0: no gate */
    xpv_findings_config findings;      /* the defaults, or as --findings-config=FILE sets them */
    int poll_seconds;   /* 0: inotify where it works; N: poll the directory every N s */
    int settle_ms;      /* how long a new or changed file must hold still before it is read */
    uint64_t cache_max; /* index cache cap in bytes; 0: the default */
    int cache_list;     /* --cache: list the cached indexes and exit */
    int cache_clear;    /* --cache-clear: remove them and exit */
} xpv_options;

/* Parses argv into opts. Returns 0, or -1 after printing the problem. */
int xpv_cli_parse(int argc, char **argv, xpv_options *opts);
void xpv_cli_usage(FILE *out);

#endif
