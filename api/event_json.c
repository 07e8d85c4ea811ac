/*
 * event_json.c — see event_json.h.
 */
#include "event_json.h"

#include <string.h>

void xpv_api_put_arg_value(xpv_buf *b, const xpv_arg *a, xpv_api_strings *strings)
{
    size_t len;
    const char *s;
    switch (a->type) {
    case XPV_ARG_INT:
        xpv_buf_printf(b, "%lld", (long long)a->v.i);
        break;
    case XPV_ARG_UINT:
        xpv_buf_printf(b, "%llu", (unsigned long long)a->v.u);
        break;
    case XPV_ARG_DOUBLE:
        xpv_buf_json_double(b, a->v.d);
        break;
    case XPV_ARG_STR:
        s = xpv_api_string(strings, a->v.str, &len);
        xpv_buf_json_str(b, s, len);
        break;
    case XPV_ARG_TEXT:
        xpv_buf_json_str(b, a->text ? a->text : "", a->text ? a->len : 0);
        break;
    case XPV_ARG_JSON:
        if (a->text && a->len)
            xpv_buf_append(b, a->text, a->len);
        else
            xpv_buf_puts(b, "null");
        break;
    default:
        xpv_buf_puts(b, "null");
    }
}

static int seen_before(const xpv_event *ev, uint32_t i)
{
    for (uint32_t j = 0; j < i; j++)
        if (ev->args[j].key == ev->args[i].key) return 1;
    return 0;
}

void xpv_api_put_args(xpv_buf *b, const xpv_event *ev, xpv_api_strings *strings,
                      int (*skip)(const xpv_event *ev, const char *key))
{
    xpv_buf_putc(b, '{');
    int n = 0;
    for (uint32_t i = 0; i < ev->nargs; i++) {
        size_t klen;
        const char *key = xpv_api_string(strings, ev->args[i].key, &klen);
        if (skip && skip(ev, key)) continue;
        /* Small arg lists are the rule; a quadratic check keeps JSON valid. */
        if (ev->nargs <= 64 && seen_before(ev, i)) continue;
        if (n++) xpv_buf_putc(b, ',');
        xpv_buf_json_str(b, key, klen);
        xpv_buf_putc(b, ':');
        xpv_api_put_arg_value(b, &ev->args[i], strings);
    }
    xpv_buf_putc(b, '}');
}
