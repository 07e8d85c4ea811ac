/*
 * profile_warnings.c — which of a profile's stored warnings a user reads.
 *
 * The readers and the step analysis store every note they make in one list;
 * some say something is missing or was cut (a user can act on them, or must
 * know), others are reader bookkeeping a user cannot act on (how device
 * events were joined to steps, stat ids without metadata). The profile
 * answer keeps the first kind in "warnings" and moves the second to
 * "diagnostics", which the UI shows collapsed.
 *
 * Invariant: every stored warning lands in exactly one of the two lists, in
 * its stored order.
 */
#include "profile_warnings.h"

#include "api_util.h"

#include <cjson/cJSON.h>
#include <string.h>

/* Reader notes that describe how the index was built, not the profile: a
 * warning that starts with `head` and holds `part` (when not NULL). */
static const struct {
    const char *head, *part;
} DIAGNOSTICS[] = {
    {"steps: ", "joined to their step through"},
    {"plane ", "refer to missing event metadata"},
    {"plane ", "refer to missing stat metadata"},
    {"plane ", "metadata map entries without key or value"},
    {"device planes state different ", NULL},
};

int xpv_api_warning_is_diagnostic(const char *text)
{
    if (!text) return 0;
    for (size_t i = 0; i < sizeof DIAGNOSTICS / sizeof DIAGNOSTICS[0]; i++) {
        size_t n = strlen(DIAGNOSTICS[i].head);
        if (strncmp(text, DIAGNOSTICS[i].head, n) != 0) continue;
        if (!DIAGNOSTICS[i].part || strstr(text + n, DIAGNOSTICS[i].part)) return 1;
    }
    return 0;
}

/* The array's items of one kind, written as a JSON array. */
static void put_list(xpv_buf *b, const cJSON *arr, int diagnostics)
{
    int first = 1;
    const cJSON *it;
    xpv_buf_putc(b, '[');
    cJSON_ArrayForEach(it, arr)
    {
        const char *s = cJSON_IsString(it) ? it->valuestring : NULL;
        if (xpv_api_warning_is_diagnostic(s) != diagnostics) continue;
        if (!first) xpv_buf_putc(b, ',');
        first = 0;
        if (s) {
            xpv_api_put_text_opt(b, s, strlen(s));
        } else {
            char *raw = cJSON_PrintUnformatted(it);
            xpv_buf_puts(b, raw ? raw : "null");
            cJSON_free(raw);
        }
    }
    xpv_buf_putc(b, ']');
}

void xpv_api_put_profile_warnings(xpv_buf *b, const char *json, size_t n)
{
    cJSON *arr = json && n ? cJSON_ParseWithLength(json, n) : NULL;
    xpv_buf_puts(b, ",\"warnings\":");
    if (cJSON_IsArray(arr)) {
        put_list(b, arr, 0);
    } else if (json && n) {
        xpv_buf_putc(b, '[');
        xpv_api_put_text_opt(b, json, n);
        xpv_buf_putc(b, ']');
    } else {
        xpv_buf_puts(b, "[]");
    }
    xpv_buf_puts(b, ",\"diagnostics\":");
    if (cJSON_IsArray(arr))
        put_list(b, arr, 1);
    else
        xpv_buf_puts(b, "[]");
    cJSON_Delete(arr);
}
