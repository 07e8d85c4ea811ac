/*
 * cli.c — parsing the command line.
 */
#include "cli.h"
#include "../common/xpv_common.h"
#include "../server/access.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void xpv_cli_usage(FILE *out)
{
    fprintf(
        out,
        "usage: xprof-view [--profile-dir=DIR|FILE] [--port=N] [--host=ADDR] [--bind-all]\n"
        "                  [--token=T] [--no-token] [--allow-host=NAME]\n"
        "                  [--perfetto-port=N] [--ui=perfetto|tensorboard|both] [--list-only]\n"
        "                  [--extract[=OUTDIR]] [--json] [--db=PATH] [--open] [--version]\n"
        "                  [--findings-config=FILE] [--poll=SECONDS] [--settle-ms=N]\n"
        "                  [--max-inflate=SIZE] [--max-inflate-ratio=N] [--max-connections=N]\n"
        "                  [--client-timeout=S] [--cache-max=SIZE] [--cache] [--cache-clear]\n"
        "                  [--jobs=N]\n"
        "       xprof-view --compare A B [--json] [--fail-if-slower=PCT]\n"
        "       xprof-view --routes\n"
        "\n"
        "Finds JAX/XLA, PyTorch, TensorFlow and Nsight Systems profiles under DIR, indexes\n"
        "them and serves them in the browser at http://HOST:PORT/ (works offline).\n"
        "\n"
        "  --profile-dir=DIR   directory searched recursively, or one profile file;\n"
        "                      default: newest of ./profiles/*/, ./profiles/*/*/, ./*/profiles/*/\n"
        "  --port=N            HTTP port (default 6006)\n"
        "  --host=ADDR         address to bind (default 127.0.0.1, this machine only)\n"
        "  --bind-all          bind every interface: profiles become visible on the network\n"
        "                      to whoever has the access token in the printed URL\n"
        "  --token=T           the access token (8-128 of A-Z a-z 0-9 - . _ ~); asked even\n"
        "                      on 127.0.0.1 (default: a random one, on the network only)\n"
        "  --no-token          serve the network without a token: anyone can read\n"
        "  --allow-host=NAME   also answer requests that reach this server under NAME\n"
        "                      (e.g. behind a proxy or an SSH tunnel); repeatable\n"
        "  --perfetto-port=N   trace server for ui.perfetto.dev (default 9001, 0 disables)\n"
        "  --ui=MODE           start page: perfetto (timeline), tensorboard (overview),\n"
        "                      both (profile list, default)\n"
        "  --list-only         print the profiles found and exit (with --json: as JSON)\n"
        "  --extract[=OUTDIR]  write each profile as Perfetto-ready trace JSON into OUTDIR\n"
        "                      (default: ./xprof-extract-<timestamp>) and exit\n"
        "  --compare A B       compare profile B with profile A (files, or directories:\n"
        "                      their latest profile), print the deltas and exit\n"
        "  --fail-if-slower=PCT  with --compare: exit 3 when B's median step time (device\n"
        "                      time without steps) is more than PCT%% above A's\n"
        "  --db=PATH           index file (default under $XDG_CACHE_HOME/xprof-view/)\n"
        "  --cache-max=SIZE    cap on the index cache: the least recently used indexes of\n"
        "                      other directories go first (default: 10%% of the free disk\n"
        "                      or 20G, whichever is smaller)\n"
        "  --cache             list the cached indexes (directory, size, last use) and exit\n"
        "  --cache-clear       remove the cached indexes no running xprof-view uses, and exit\n"
        "  --findings-config=FILE  key=value lines overriding the findings' thresholds\n"
        "                      (see docs/FINDINGS.md)\n"
        "  --poll=SECONDS      look for new profiles every SECONDS instead of with inotify\n"
        "                      (automatic on NFS, SMB, 9p and FUSE mounts)\n"
        "  --settle-ms=N       read a new or changed file once it held still N ms (300)\n"
        "  --jobs=N            profiles indexed at once (default: one per CPU)\n"
        "  --open              open the system browser\n"
        "  --quiet             print less\n"
        "  --max-inflate=SIZE  largest a gzip profile may inflate to (default 256G)\n"
        "  --max-inflate-ratio=N  stop a gzip profile inflating more than N times its\n"
        "                      compressed size, a gzip bomb (default 250; 0 disables)\n"
        "  --max-connections=N HTTP connections at once (default 4096)\n"
        "  --client-timeout=S  close a connection that is idle, or still sending its request,\n"
        "                      after S seconds (default 30)\n"
        "  --routes            print the HTTP routes and their parameters as JSON and exit\n"
        "  --version, --help\n");
}

static int parse_int(const char *name, const char *v, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *v == 0 || *end || n < lo || n > hi) {
        fprintf(stderr, "xprof-view: %s must be a number from %d to %d, not '%s'\n", name, lo, hi,
                v);
        return -1;
    }
    *out = (int)n;
    return 0;
}

/* Matches --name=value and --name value; returns the value or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

/* A byte count with an optional K, M, G or T suffix (powers of 1024). */
static int parse_size(const char *name, const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    if (*end == 'M' || *end == 'm') shift = 20;
    if (*end == 'G' || *end == 'g') shift = 30;
    if (*end == 'T' || *end == 't') shift = 40;
    if (shift) end++;
    if (*end == 'B' || *end == 'b') end++;
    if (errno || *v == 0 || *v == '-' || *end || n == 0 || n > (UINT64_MAX >> shift)) {
        fprintf(stderr, "xprof-view: %s must be a size such as 512M or 64G, not '%s'\n", name, v);
        return -1;
    }
    *out = (uint64_t)n << shift;
    return 0;
}

static int parse_ratio(const char *v, xpv_input_limits *limits)
{
    int ratio;
    if (parse_int("--max-inflate-ratio", v, 0, 1 << 30, &ratio) != 0) return -1;
    limits->max_ratio = (uint32_t)ratio;
    return 0;
}

/* Reads a findings threshold file (key=value lines) on top of the defaults. */
static int load_findings_config(const char *path, xpv_findings_config *c)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "xprof-view: --findings-config: cannot open %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    int big = !feof(f);
    fclose(f);
    text[n] = 0;
    xpv_err err = {{0}};
    if (big)
        xpv_err_set(&err, "longer than %zu bytes", sizeof text - 1);
    else if (xpv_findings_config_parse(c, text, &err) == 0)
        return 0;
    fprintf(stderr, "xprof-view: --findings-config %s: %s\n", path, err.msg);
    return -1;
}

static int parse_ui(const char *v, xpv_ui_mode *ui)
{
    if (strcmp(v, "both") == 0)
        *ui = XPV_UI_BOTH;
    else if (strcmp(v, "perfetto") == 0)
        *ui = XPV_UI_PERFETTO;
    else if (strcmp(v, "tensorboard") == 0)
        *ui = XPV_UI_TENSORBOARD;
    else {
        fprintf(stderr, "xprof-view: --ui must be perfetto, tensorboard or both, not '%s'\n", v);
        return -1;
    }
    return 0;
}

static int parse_token(const char *v, xpv_options *o)
{
    if (!xpv_access_token_valid(v)) {
        fprintf(stderr, "xprof-view: --token must be 8 to 128 of A-Z a-z 0-9 - . _ ~ (URL- and "
                        "cookie-safe)\n");
        return -1;
    }
    o->token = v;
    return 0;
}

static int add_allow_host(const char *v, xpv_options *o)
{
    if (!*v || strpbrk(v, " \t\r\n/") || o->n_allow_hosts == XPV_CLI_MAX_HOSTS) {
        fprintf(stderr,
                "xprof-view: --allow-host takes a host name (at most %d of them), not '%s'\n",
                XPV_CLI_MAX_HOSTS, v);
        return -1;
    }
    o->allow_hosts[o->n_allow_hosts++] = v;
    return 0;
}

static int parse_percent(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || *v == 0 || *end || !(d >= 0 && d <= 1e6)) {
        fprintf(stderr, "xprof-view: --fail-if-slower must be a percentage >= 0, not '%s'\n", v);
        return -1;
    }
    *out = d;
    return 0;
}

static int parse_compare(int argc, char **argv, int *i, xpv_options *o)
{
    if (*i + 2 >= argc) {
        fprintf(stderr, "xprof-view: --compare needs two profiles: --compare A B\n");
        return -1;
    }
    o->compare_a = argv[++*i];
    o->compare_b = argv[++*i];
    return 0;
}

static int parse_one(int argc, char **argv, int *i, xpv_options *o)
{
    const char *a = argv[*i], *v;
    if (strcmp(a, "--compare") == 0)
        return parse_compare(argc, argv, i, o);
    else if ((v = option_value(argc, argv, i, "--fail-if-slower")))
        return parse_percent(v, &o->fail_if_slower);
    else if (strcmp(a, "--list-only") == 0)
        o->list_only = 1;
    else if (strcmp(a, "--json") == 0)
        o->json = 1;
    else if (strcmp(a, "--bind-all") == 0)
        o->bind_all = 1;
    else if (strcmp(a, "--no-token") == 0)
        o->no_token = 1;
    else if ((v = option_value(argc, argv, i, "--token")))
        return parse_token(v, o);
    else if ((v = option_value(argc, argv, i, "--allow-host")))
        return add_allow_host(v, o);
    else if (strcmp(a, "--open") == 0)
        o->open_browser = 1;
    else if (strcmp(a, "--quiet") == 0)
        o->quiet = 1;
    else if (strcmp(a, "--routes") == 0)
        o->show_routes = 1;
    else if (strcmp(a, "--version") == 0)
        o->show_version = 1;
    else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
        o->show_help = 1;
    else if (strcmp(a, "--extract") == 0)
        o->extract = 1;
    else if (strcmp(a, "--cache") == 0)
        o->cache_list = 1;
    else if (strcmp(a, "--cache-clear") == 0)
        o->cache_clear = 1;
    else if ((v = option_value(argc, argv, i, "--cache-max")))
        return parse_size("--cache-max", v, &o->cache_max);
    else if (strncmp(a, "--extract=", 10) == 0)
        o->extract = 1, o->extract_dir = a + 10;
    else if ((v = option_value(argc, argv, i, "--profile-dir")) ||
             (v = option_value(argc, argv, i, "--profile_dir")) ||
             (v = option_value(argc, argv, i, "--logdir")))
        o->profile_dir = v;
    else if ((v = option_value(argc, argv, i, "--port")))
        return parse_int("--port", v, 1, 65535, &o->port);
    else if ((v = option_value(argc, argv, i, "--perfetto-port")))
        return parse_int("--perfetto-port", v, 0, 65535, &o->perfetto_port);
    else if ((v = option_value(argc, argv, i, "--poll")))
        return parse_int("--poll", v, 1, 3600, &o->poll_seconds);
    else if ((v = option_value(argc, argv, i, "--settle-ms")))
        return parse_int("--settle-ms", v, 0, 600000, &o->settle_ms);
    else if ((v = option_value(argc, argv, i, "--host")))
        o->host = v;
    else if ((v = option_value(argc, argv, i, "--db")))
        o->db_path = v;
    else if ((v = option_value(argc, argv, i, "--findings-config")))
        return load_findings_config(v, &o->findings);
    else if ((v = option_value(argc, argv, i, "--ui")))
        return parse_ui(v, &o->ui);
    else if ((v = option_value(argc, argv, i, "--max-inflate-ratio")))
        return parse_ratio(v, &o->limits);
    else if ((v = option_value(argc, argv, i, "--max-inflate")))
        return parse_size("--max-inflate", v, &o->limits.max_bytes);
    else if ((v = option_value(argc, argv, i, "--jobs")))
        return parse_int("--jobs", v, 1, 1024, &o->jobs);
    else if ((v = option_value(argc, argv, i, "--max-connections")))
        return parse_int("--max-connections", v, 1, 65536, &o->max_connections);
    else if ((v = option_value(argc, argv, i, "--client-timeout")))
        return parse_int("--client-timeout", v, 1, 86400, &o->client_timeout_s);
    else if (a[0] != '-' && !o->profile_dir)
        o->profile_dir = a;
    else {
        fprintf(stderr, "xprof-view: unknown option '%s' (see --help)\n", a);
        return -1;
    }
    return 0;
}

int xpv_cli_parse(int argc, char **argv, xpv_options *o)
{
    memset(o, 0, sizeof *o);
    o->port = 6006;
    o->perfetto_port = 9001;
    o->host = "127.0.0.1";
    o->ui = XPV_UI_BOTH;
    o->settle_ms = 300;
    o->limits = XPV_INPUT_LIMITS_DEFAULT;
    o->max_connections = 4096;
    o->client_timeout_s = 30;
    xpv_findings_config_defaults(&o->findings);
    o->fail_if_slower = -1;
    for (int i = 1; i < argc; i++)
        if (parse_one(argc, argv, &i, o) != 0) return -1;
    if (o->bind_all) o->host = "0.0.0.0";
    if (o->token && o->no_token) {
        fprintf(stderr, "xprof-view: --token and --no-token contradict each other\n");
        return -1;
    }
    if (o->fail_if_slower >= 0 && !o->compare_a) {
        fprintf(stderr, "xprof-view: --fail-if-slower goes with --compare A B\n");
        return -1;
    }
    if (o->compare_a && (o->list_only || o->extract || o->profile_dir)) {
        fprintf(stderr,
                "xprof-view: --compare A B takes no --list-only, --extract or profile dir\n");
        return -1;
    }
    if (o->extract_dir && !*o->extract_dir) {
        fprintf(stderr, "xprof-view: --extract= needs a directory\n");
        return -1;
    }
    return 0;
}
