/*
 * api_util.c — see api_util.h.
 */
#include "api_util.h"
#include "api.h"
#include "../store/event_store.h"
#include "../store/profiles.h"
#include "../store/strings.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xpv_api_error(xpv_buf *out, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    xpv_buf_reset(out);
    xpv_buf_puts(out, "{\"error\":");
    xpv_buf_json_str(out, msg, strlen(msg));
    xpv_buf_putc(out, '}');
    return status;
}

void xpv_api_put_int(xpv_buf *b, int64_t v)
{
    char tmp[24], *p = tmp + sizeof tmp;
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do
        *--p = (char)('0' + mag % 10), mag /= 10;
    while (mag);
    if (v < 0) *--p = '-';
    xpv_buf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

void xpv_api_put_us(xpv_buf *b, int64_t ns)
{
    char tmp[32], *p = tmp + sizeof tmp;
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(mag % 1000);
    uint64_t whole = mag / 1000;
    *--p = 0;
    if (frac) {
        int digits = 3;
        while (frac % 10 == 0)
            frac /= 10, digits--;
        for (int i = 0; i < digits; i++)
            *--p = (char)('0' + frac % 10), frac /= 10;
        *--p = '.';
    }
    do
        *--p = (char)('0' + whole % 10), whole /= 10;
    while (whole);
    if (ns < 0) *--p = '-';
    xpv_buf_append(b, p, (size_t)(tmp + sizeof tmp - 1 - p));
}

void xpv_api_put_ps_col(xpv_buf *b, sqlite3_stmt *st, int col)
{
    /* An integer ps value divided by 1e6 rounds once, to the double nearest
     * the exact decimal, which the shortest-form printer then writes. */
    int type = sqlite3_column_type(st, col);
    xpv_api_put_ps_opt(b, type != SQLITE_NULL,
                       type == SQLITE_INTEGER ? (double)sqlite3_column_int64(st, col)
                                              : sqlite3_column_double(st, col));
}

void xpv_api_put_int_col(xpv_buf *b, sqlite3_stmt *st, int col)
{
    xpv_api_put_int_opt(b, sqlite3_column_type(st, col) != SQLITE_NULL,
                        sqlite3_column_int64(st, col));
}

void xpv_api_put_real_col(xpv_buf *b, sqlite3_stmt *st, int col)
{
    xpv_api_put_real_opt(b, sqlite3_column_type(st, col) != SQLITE_NULL,
                         sqlite3_column_double(st, col));
}

void xpv_api_put_text_col(xpv_buf *b, sqlite3_stmt *st, int col)
{
    const char *v = (const char *)sqlite3_column_text(st, col);
    xpv_api_put_text_opt(b, v, v ? (size_t)sqlite3_column_bytes(st, col) : 0);
}

void xpv_api_put_ps_opt(xpv_buf *b, int known, double ps)
{
    if (known)
        xpv_buf_json_double(b, ps / 1e6);
    else
        xpv_buf_puts(b, "null");
}

void xpv_api_put_int_opt(xpv_buf *b, int known, int64_t v)
{
    if (known)
        xpv_api_put_int(b, v);
    else
        xpv_buf_puts(b, "null");
}

void xpv_api_put_real_opt(xpv_buf *b, int known, double v)
{
    if (known)
        xpv_buf_json_double(b, v);
    else
        xpv_buf_puts(b, "null");
}

void xpv_api_put_text_opt(xpv_buf *b, const char *s, size_t n)
{
    if (s)
        xpv_buf_json_str(b, s, n);
    else
        xpv_buf_puts(b, "null");
}

/* ---- interned strings ---- */

#define STRING_CACHE_SLOTS 4096

typedef struct {
    uint32_t id;
    int used;
    char *value;
    size_t len;
} string_slot;

struct xpv_api_strings {
    xpv_store_strings_lookup lookup; /* lookup.st NULL: every lookup answers "" */
    string_slot slots[STRING_CACHE_SLOTS];
    xpv_err damage; /* the first damaged chunk met, else msg empty */
};

xpv_api_strings *xpv_api_strings_open_checked(sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    xpv_api_strings *s = xpv_xcalloc(1, sizeof *s);
    if (xpv_store_strings_lookup_open(&s->lookup, db, profile_id, err) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

xpv_api_strings *xpv_api_strings_open(sqlite3 *db, int64_t profile_id)
{
    xpv_err err = {{0}};
    xpv_api_strings *s = xpv_api_strings_open_checked(db, profile_id, &err);
    if (s) return s;
    /* The fallback its callers answer with: names unknown, every one "". */
    s = xpv_xcalloc(1, sizeof *s);
    s->lookup.profile_id = profile_id;
    return s;
}

const char *xpv_api_string(xpv_api_strings *s, uint32_t id, size_t *len)
{
    string_slot *slot = &s->slots[(id * 2654435761u) % STRING_CACHE_SLOTS];
    if (!slot->used || slot->id != id) {
        free(slot->value);
        slot->value = NULL;
        slot->len = 0;
        /* A failed step reads as a missing string (""), as a name that
         * cannot be read is unknown; the answers go on without it. A
         * damaged chunk is kept for xpv_api_strings_status to report, so
         * that the profile is checked and indexed again. */
        xpv_err *damage = s->damage.msg[0] ? NULL : &s->damage; /* the first is kept */
        if (s->lookup.st && id &&
            xpv_store_strings_lookup_get(&s->lookup, id, &slot->value, &slot->len, damage) < 0 &&
            damage && !xpv_store_damage_in(damage->msg))
            damage->msg[0] = '\0'; /* SQLite's: read as a missing string */
        slot->id = id;
        slot->used = 1;
    }
    if (len) *len = slot->len;
    return slot->value ? slot->value : "";
}

int xpv_api_strings_status(const xpv_api_strings *s, xpv_buf *out)
{
    return s->damage.msg[0] ? xpv_api_error(out, 500, "%s", s->damage.msg) : 200;
}

void xpv_api_strings_free(xpv_api_strings *s)
{
    if (!s) return;
    for (size_t i = 0; i < STRING_CACHE_SLOTS; i++)
        free(s->slots[i].value);
    xpv_store_strings_lookup_close(&s->lookup);
    free(s);
}

int xpv_api_profile_state_find(sqlite3 *db, int64_t id, xpv_api_profile_state *ps, xpv_err *err)
{
    xpv_store_cursor c;
    xpv_store_profile_state row;
    memset(ps, 0, sizeof *ps);
    int found = xpv_store_profiles_state(&c, db, id, &row, err);
    if (found <= 0) return found;
    snprintf(ps->status, sizeof ps->status, "%s", row.status.s ? row.status.s : "");
    ps->events = row.num[XPV_STORE_PROFILE_STATE_EVENTS];
    ps->has_span = (row.known >> XPV_STORE_PROFILE_STATE_START_NS) & 1u;
    ps->start_ns = row.num[XPV_STORE_PROFILE_STATE_START_NS];
    ps->end_ns = row.num[XPV_STORE_PROFILE_STATE_END_NS];
    ps->mtime_ns = row.num[XPV_STORE_PROFILE_STATE_MTIME_NS];
    ps->indexed_at = row.indexed_at;
    const char *path = row.path.s, *slash = path ? strrchr(path, '/') : NULL;
    snprintf(ps->file_name, sizeof ps->file_name, "%s", slash ? slash + 1 : path ? path : "");
    xpv_store_cursor_close(&c);
    return 1;
}

int xpv_api_profile_state_get(sqlite3 *db, int64_t id, xpv_api_profile_state *ps, xpv_buf *out)
{
    xpv_err err = {{0}};
    int found = xpv_api_profile_state_find(db, id, ps, &err);
    if (found < 0) return xpv_api_error(out, 500, "%s", err.msg);
    if (!found) return xpv_api_error(out, 404, "no such profile");
    return 200;
}

void xpv_api_put_profile_head(xpv_buf *b, int64_t id, const xpv_api_profile_state *ps)
{
    char hex[17];
    xpv_profile_id_hex(id, hex);
    xpv_buf_printf(b, "{\"profile\":\"%s\",\"status\":", hex);
    xpv_buf_json_str(b, ps->status, strlen(ps->status));
}
