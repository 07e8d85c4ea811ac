/*
 * route_params.h — what a route is made of (its parameters' specs, the
 * row, the request a handler is given) and the checking of parameters
 * (route_params.c): each kind parsed once, by its spec, for every route.
 * The table of rows itself is route_table.h; handlers see only this
 * header, so the table can name them without a loop back.
 */
#ifndef XPV_ROUTE_PARAMS_H
#define XPV_ROUTE_PARAMS_H

#include "http.h"
#include "server_state.h"

#define XPV_ROUTE_MAX_PARAMS 12
#define XPV_ROUTE_MAX_CAPTURES 4
#define XPV_ROUTE_MAX_LIST 4096 /* items of a list parameter */

typedef enum {
    XPV_PARAM_INT,    /* decimal integer in [lo, hi] */
    XPV_PARAM_NUMBER, /* finite decimal number with |x| <= limit, at most max bytes */
    XPV_PARAM_ENUM,   /* one of choices ("a|b|c") */
    XPV_PARAM_TEXT,   /* any text of at most max bytes */
    XPV_PARAM_ID,     /* a profile id, as {id} */
    XPV_PARAM_LIST,   /* comma-separated integers in [lo, hi], at most max of them;
                         empty counts as absent */
    XPV_PARAM_REF,    /* "<block>:<index>", an event's ref */
} xpv_param_kind;

enum {
    XPV_PARAM_REQUIRED = 1, /* absent: a 400 with `missing` (or `error`) */
    XPV_PARAM_LENIENT = 2,  /* empty, or longer than max bytes: counts as absent */
    XPV_PARAM_LAZY = 4,     /* checked by the handler when its answer uses it */
    XPV_PARAM_UNUSED = 8,   /* checked (as always) but used by no answer: not documented */
};

typedef struct {
    const char *name;
    xpv_param_kind kind;
    long long lo, hi; /* INT, LIST items: the range */
    long long dflt;   /* INT: the value when absent */
    long long max;    /* TEXT, NUMBER: bytes; LIST: items */
    double limit;     /* NUMBER: the largest magnitude */
    const char *choices;
    unsigned flags;
    const char *error;   /* the 400's text for a bad value; NULL: the kind's own */
    const char *missing; /* REQUIRED and absent; NULL: error */
} xpv_route_param;

enum {
    XPV_ROUTE_SLASH = 1,    /* one trailing slash is ignored */
    XPV_ROUTE_NO_DB = 2,    /* the index is not opened before the handler runs */
    XPV_ROUTE_TB = 4,       /* a TensorBoard plugin route: not with --ui=perfetto */
    XPV_ROUTE_FALLBACK = 8, /* the 404 of its prefix, not a route: not listed */
};

typedef struct xpv_route_req xpv_route_req;
typedef void (*xpv_route_fn)(xpv_route_req *q, xpv_reply *r);

typedef struct {
    const char *method;
    const char *pattern;
    xpv_route_fn handler;
    const xpv_route_param *params; /* ends with a row whose name is NULL */
    int cacheable;                 /* answered from response_cache.c when it can */
    unsigned flags;
    const char *summary;
} xpv_route;

/* One {name} or {name*} of a matched path: pointers into the pattern and
 * the path (a {name*} value runs to the path's end). */
typedef struct {
    const char *name;
    size_t name_len;
    const char *value;
    size_t len;
} xpv_route_capture;

typedef struct {
    int present;
    long long i; /* INT, ID, REF's block */
    long long j; /* REF's index */
    double d;    /* NUMBER */
    const char *text;
    int64_t *list; /* LIST (owned by the request) */
    size_t n;
} xpv_route_value;

/* What a handler is given: the request, the index (unless the row is
 * NO_DB), the resolved {id}, the {name*} text and the checked parameters. */
struct xpv_route_req {
    xpv_server *s;
    struct MHD_Connection *c;
    const xpv_route *route;
    sqlite3 *db;
    int64_t id;
    const char *rest;                /* the {name*} capture, "" when none */
    char path[XPV_HTTP_MAX_URL + 1]; /* the longest URL router.c lets through, and its NUL */
    xpv_route_value values[XPV_ROUTE_MAX_PARAMS];
};

/* Parses one value (non-NULL) by its spec into v: 0, or -1 with a 400 in r.
 * s is needed for an ID only. */
int xpv_route_parse(xpv_server *s, const xpv_route_param *p, const char *text, xpv_route_value *v,
                    xpv_reply *r);
/* Reads and checks the row's parameters (all but LAZY ones) into q->values:
 * 0, or -1 with a 400 (or an id's 404 or 503) in r. */
int xpv_route_read_params(xpv_route_req *q, xpv_reply *r);
/* Checks a LAZY parameter now: 0, or -1 with a 400 in r. */
int xpv_route_check(xpv_route_req *q, const char *name, xpv_reply *r);
/* A LAZY parameter's text as the request gives it, unchecked, for an
 * answer that checks it itself (NULL when absent). */
const char *xpv_route_raw(const xpv_route_req *q, const char *name);
/* Frees what reading the parameters allocated. */
void xpv_route_free_params(xpv_route_req *q);

/* A checked parameter's value; assert-fails on a name the row lacks. */
const xpv_route_value *xpv_route_value_of(const xpv_route_req *q, const char *name);
/* An INT parameter, or its default when absent. */
long long xpv_route_int(const xpv_route_req *q, const char *name);
/* A parameter's text, NULL when absent. */
const char *xpv_route_text(const xpv_route_req *q, const char *name);

/* Resolves "latest" or a hex id to a profile id: 0, or -1 with r filled
 * (400 malformed, 404 no profiles, 503 no index). */
int xpv_route_profile_id(xpv_server *s, const char *text, size_t len, int64_t *id, xpv_reply *r);
/* The thread's index connection: 0, or -1 with a 503 in r. */
int xpv_route_db(xpv_server *s, sqlite3 **db, xpv_reply *r);

#endif
