/*
 * route_params.c — the one parser of each kind of route parameter (see
 * route_table.h) and the pass that reads a row's parameters. Parsing is
 * strict: the whole text, within range, finite; anything else is a 400
 * whose text the parameter's spec gives or its kind composes.
 */
#define _GNU_SOURCE
#include "route_params.h"
#include "../api/api.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xpv_route_db(xpv_server *s, sqlite3 **db, xpv_reply *r)
{
    xpv_err err = {{0}};
    *db = xpv_server_db(s, &err);
    if (*db) return 0;
    xpv_reply_error(r, 503, "index unavailable: %s", err.msg);
    return -1;
}

int xpv_route_profile_id(xpv_server *s, const char *text, size_t len, int64_t *id, xpv_reply *r)
{
    char hex[32];
    if (len == 6 && strncmp(text, "latest", 6) == 0) {
        sqlite3 *db;
        if (xpv_route_db(s, &db, r) != 0) return -1;
        xpv_err err = {{0}};
        int found = xpv_api_latest_id(db, id, &err);
        if (found < 0)
            xpv_reply_error(r, 500, "%s", err.msg);
        else if (!found)
            xpv_reply_error(r, 404, "no profiles found");
        return found > 0 ? 0 : -1;
    }
    if (len == 16) {
        memcpy(hex, text, 16);
        hex[16] = 0;
    }
    if (len != 16 || xpv_profile_id_parse(hex, id) != 0) {
        xpv_reply_error(r, 400, "a profile id is 16 hex digits (or \"latest\")");
        return -1;
    }
    return 0;
}

/* The integer parser every integer goes through (lists and refs too). */
static int parse_int(const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    if (!v || !*v || strlen(v) > 24) return -1;
    long long n = strtoll(v, &end, 10);
    if (errno || *end || n < lo || n > hi) return -1;
    *out = n;
    return 0;
}

static int parse_number(const xpv_route_param *p, const char *v, double *out)
{
    char *end;
    errno = 0;
    size_t len = strlen(v);
    double d = len <= (size_t)p->max ? strtod(v, &end) : NAN;
    if (len > (size_t)p->max || !*v || *end || errno || !isfinite(d) || fabs(d) > p->limit)
        return -1;
    *out = d;
    return 0;
}

/* Is v one of choices ("a|b|c")? */
static int parse_enum(const char *choices, const char *v)
{
    size_t len = strlen(v);
    for (const char *c = choices; *c;) {
        size_t n = strcspn(c, "|");
        if (n == len && strncmp(c, v, n) == 0) return 0;
        c += n + (c[n] == '|');
    }
    return -1;
}

static int parse_list(const xpv_route_param *p, const char *v, xpv_route_value *out)
{
    out->list = xpv_xmalloc((size_t)p->max * sizeof *out->list);
    out->n = 0;
    while (*v) {
        char tmp[24];
        size_t len = strcspn(v, ",");
        long long t;
        if (len == 0 || len >= sizeof tmp || out->n >= (size_t)p->max) return -1;
        memcpy(tmp, v, len);
        tmp[len] = 0;
        if (parse_int(tmp, p->lo, p->hi, &t) != 0) return -1;
        out->list[out->n++] = t;
        v += len;
        if (*v == ',') v++;
    }
    return out->n ? 0 : -1;
}

/* "<block>:<index>": block in int64, index in uint32. */
static int parse_ref(const char *v, xpv_route_value *out)
{
    char block_s[24], index_s[24];
    const char *colon = strchr(v, ':');
    if (!colon || colon - v >= 24 || strlen(colon + 1) >= 24) return -1;
    snprintf(block_s, sizeof block_s, "%.*s", (int)(colon - v), v);
    snprintf(index_s, sizeof index_s, "%s", colon + 1);
    return parse_int(block_s, 0, INT64_MAX, &out->i) || parse_int(index_s, 0, UINT32_MAX, &out->j)
               ? -1
               : 0;
}

/* The 400 of a bad value: the spec's text, or its kind's. */
static void bad_value(const xpv_route_param *p, xpv_reply *r)
{
    char choices[256];
    if (p->error) {
        xpv_reply_error(r, 400, "%s", p->error);
    } else if (p->kind == XPV_PARAM_INT) {
        xpv_reply_error(r, 400, "%s must be an integer from %lld to %lld", p->name, p->lo, p->hi);
    } else if (p->kind == XPV_PARAM_TEXT) {
        xpv_reply_error(r, 400, "%s is longer than %lld bytes", p->name, p->max);
    } else {
        assert(p->kind == XPV_PARAM_ENUM); /* the other kinds name their error */
        /* "a|b|c" reads "a, b or c" */
        size_t n = 0, last = strrchr(p->choices, '|') - p->choices;
        for (size_t i = 0; p->choices[i] && n + 4 < sizeof choices; i++) {
            const char *sep = i == last ? " or " : ", ";
            if (p->choices[i] != '|')
                choices[n++] = p->choices[i];
            else
                n += (size_t)snprintf(choices + n, sizeof choices - n, "%s", sep);
        }
        choices[n] = 0;
        xpv_reply_error(r, 400, "%s must be %s", p->name, choices);
    }
}

int xpv_route_parse(xpv_server *s, const xpv_route_param *p, const char *text, xpv_route_value *v,
                    xpv_reply *r)
{
    int bad = 0;
    v->present = 1;
    v->text = text;
    switch (p->kind) {
    case XPV_PARAM_INT:
        bad = parse_int(text, p->lo, p->hi, &v->i);
        break;
    case XPV_PARAM_NUMBER:
        bad = parse_number(p, text, &v->d);
        break;
    case XPV_PARAM_ENUM:
        bad = parse_enum(p->choices, text);
        break;
    case XPV_PARAM_TEXT:
        bad = strlen(text) > (size_t)p->max;
        break;
    case XPV_PARAM_LIST:
        bad = parse_list(p, text, v);
        break;
    case XPV_PARAM_REF:
        bad = parse_ref(text, v);
        break;
    case XPV_PARAM_ID: {
        int64_t id;
        if (xpv_route_profile_id(s, text, strlen(text), &id, r) != 0) return -1;
        v->i = id;
        return 0;
    }
    }
    if (bad) bad_value(p, r);
    return bad ? -1 : 0;
}

/* The parameter's text as the request gives it, NULL when absent. */
static const char *lookup(const xpv_route_req *q, const xpv_route_param *p)
{
    const char *v = MHD_lookup_connection_value(q->c, MHD_GET_ARGUMENT_KIND, p->name);
    if (v && (p->flags & XPV_PARAM_LENIENT) && (!*v || strlen(v) > (size_t)p->max)) return NULL;
    if (v && p->kind == XPV_PARAM_LIST && !*v) return NULL;
    return v;
}

int xpv_route_read_params(xpv_route_req *q, xpv_reply *r)
{
    const xpv_route_param *ps = q->route->params;
    for (int i = 0; ps && ps[i].name; i++) {
        const xpv_route_param *p = &ps[i];
        if ((p->flags & XPV_PARAM_REQUIRED) && !(p->flags & XPV_PARAM_LAZY) && !lookup(q, p)) {
            xpv_reply_error(r, 400, "%s", p->missing ? p->missing : p->error);
            return -1;
        }
    }
    for (int i = 0; ps && ps[i].name; i++) {
        assert(i < XPV_ROUTE_MAX_PARAMS);
        const char *v = ps[i].flags & XPV_PARAM_LAZY ? NULL : lookup(q, &ps[i]);
        if (v && xpv_route_parse(q->s, &ps[i], v, &q->values[i], r) != 0) return -1;
    }
    return 0;
}

static int index_of(const xpv_route_req *q, const char *name)
{
    const xpv_route_param *ps = q->route->params;
    for (int i = 0; ps && ps[i].name; i++)
        if (strcmp(ps[i].name, name) == 0) return i;
    abort(); /* a handler asked for a parameter its row does not list */
}

int xpv_route_check(xpv_route_req *q, const char *name, xpv_reply *r)
{
    int i = index_of(q, name);
    const xpv_route_param *p = &q->route->params[i];
    assert(p->flags & XPV_PARAM_LAZY);
    const char *v = lookup(q, p);
    return v ? xpv_route_parse(q->s, p, v, &q->values[i], r) : 0;
}

const char *xpv_route_raw(const xpv_route_req *q, const char *name)
{
    const xpv_route_param *p = &q->route->params[index_of(q, name)];
    assert(p->flags & XPV_PARAM_LAZY);
    return lookup(q, p);
}

void xpv_route_free_params(xpv_route_req *q)
{
    for (int i = 0; i < XPV_ROUTE_MAX_PARAMS; i++) {
        free(q->values[i].list);
        q->values[i].list = NULL;
    }
}

const xpv_route_value *xpv_route_value_of(const xpv_route_req *q, const char *name)
{
    return &q->values[index_of(q, name)];
}

long long xpv_route_int(const xpv_route_req *q, const char *name)
{
    int i = index_of(q, name);
    return q->values[i].present ? q->values[i].i : q->route->params[i].dflt;
}

const char *xpv_route_text(const xpv_route_req *q, const char *name)
{
    const xpv_route_value *v = xpv_route_value_of(q, name);
    return v->present ? v->text : NULL;
}
