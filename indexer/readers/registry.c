/*
 * registry.c — the format table and the lookups over it (see readers.h).
 *
 * Invariants: rows are tried in order and the first claim wins, so a row
 * that claims by content must come after every row that claims the same
 * files by name more surely; the last row (chrome_trace_json) claims every
 * file worth opening that no other row took, except SQLite databases and
 * JSON documents not shaped as a trace (a manifest, a config), so a damaged
 * .json is listed with the reason it failed instead of vanishing.
 */
#define _GNU_SOURCE /* memmem */
#include "readers.h"

#include <string.h>

/* ---- each format's entry points, defined in its reader's file ---- */

int xpv_claims_nsys_rep(const xpv_sniff_input *in); /* nsys_rep.c */
void xpv_explain_nsys_rep(const char *path, char *out, size_t n);
int xpv_claims_xplane(const xpv_sniff_input *in); /* xplane_reader.c */
int xpv_read_xplane(const char *path, xpv_sink *sink, xpv_err *err);
int xpv_claims_nsys_sqlite(const xpv_sniff_input *in); /* nsys_sqlite_reader.c */
int xpv_read_nsys_sqlite(const char *path, xpv_sink *sink, xpv_err *err);
int xpv_claims_perfetto_json(const xpv_sniff_input *in); /* chrome_json_sniff.c */
int xpv_claims_pytorch_json(const xpv_sniff_input *in);
int xpv_claims_tf_json(const xpv_sniff_input *in);
int xpv_claims_jax_json(const xpv_sniff_input *in);
int xpv_claims_chrome_json(const xpv_sniff_input *in);
int xpv_read_chrome_json(const char *path, xpv_sink *sink, xpv_err *err); /* chrome_json_reader.c */

/* ---- the table ---- */

#define JSON_ENDINGS                                                                               \
    ".pt.trace.json.gz|.pt.trace.json|.trace.json.gz|.trace.json|.ctf.json|.json.gz|.json"

static const xpv_format FORMATS[] = {
    /* name, endings, claims, read, explain, twin_of, flags */
    {XPV_FMT_NSYS_REP, ".nsys-rep|.qdrep", xpv_claims_nsys_rep, NULL, xpv_explain_nsys_rep, NULL,
     XPV_FORMAT_NAME_DECIDES},
    {XPV_FMT_XPLANE, ".xplane.pb", xpv_claims_xplane, xpv_read_xplane, NULL, NULL,
     XPV_FORMAT_NAME_DECIDES},
    {XPV_FMT_NSYS_SQLITE, ".sqlite3|.sqlite", xpv_claims_nsys_sqlite, xpv_read_nsys_sqlite, NULL,
     NULL, XPV_FORMAT_NAME_DECIDES},
    {XPV_FMT_PERFETTO_JSON, JSON_ENDINGS, xpv_claims_perfetto_json, xpv_read_chrome_json, NULL,
     NULL, XPV_FORMAT_RUN_HOST},
    {XPV_FMT_PYTORCH_JSON, JSON_ENDINGS, xpv_claims_pytorch_json, xpv_read_chrome_json, NULL,
     XPV_FMT_XPLANE, 0},
    {XPV_FMT_TF_JSON, JSON_ENDINGS, xpv_claims_tf_json, xpv_read_chrome_json, NULL, XPV_FMT_XPLANE,
     0},
    {XPV_FMT_JAX_JSON, JSON_ENDINGS, xpv_claims_jax_json, xpv_read_chrome_json, NULL,
     XPV_FMT_XPLANE, 0},
    {XPV_FMT_CHROME_JSON, JSON_ENDINGS, xpv_claims_chrome_json, xpv_read_chrome_json, NULL,
     XPV_FMT_XPLANE, 0},
};

#define NFORMATS (sizeof FORMATS / sizeof FORMATS[0])

/* ---- lookups ---- */

static int ends_with(const char *s, size_t n, const char *ending, size_t m)
{
    return n >= m && memcmp(s + n - m, ending, m) == 0;
}

/* The longest of a row's '|'-separated endings that name has, 0 when none. */
static size_t row_ending_len(const xpv_format *f, const char *name)
{
    size_t n = strlen(name), best = 0;
    for (const char *e = f->endings; *e;) {
        const char *bar = strchr(e, '|');
        size_t m = bar ? (size_t)(bar - e) : strlen(e);
        if (m > best && ends_with(name, n, e, m)) best = m;
        e += m + (bar != NULL);
    }
    return best;
}

size_t xpv_format_ending_len(const char *file_name)
{
    size_t best = 0;
    for (size_t i = 0; i < NFORMATS; i++) {
        size_t m = row_ending_len(&FORMATS[i], file_name);
        if (m > best) best = m;
    }
    return best;
}

const xpv_format *xpv_format_sniff(const xpv_sniff_input *in)
{
    for (size_t i = 0; i < NFORMATS; i++) {
        const xpv_format *f = &FORMATS[i];
        int by_name = (f->flags & XPV_FORMAT_NAME_DECIDES) && row_ending_len(f, in->name);
        if (!in->head && !by_name) continue;
        if (f->claims(in)) return f;
        if (by_name) return NULL; /* named as this format, and it is not: no profile */
    }
    return NULL;
}

const xpv_format *xpv_format_named(const char *name)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(FORMATS[i].name, name) == 0) return &FORMATS[i];
    return NULL;
}

xpv_reader_fn xpv_reader_for(const char *format)
{
    const xpv_format *f = xpv_format_named(format);
    return f ? f->read : NULL;
}

/* ---- helpers for claims() ---- */

int xpv_sniff_name_ends(const xpv_sniff_input *in, const char *ending)
{
    return ends_with(in->name, strlen(in->name), ending, strlen(ending));
}

int xpv_sniff_contains(const xpv_sniff_input *in, const char *needle)
{
    return in->head && memmem(in->head, in->len, needle, strlen(needle)) != NULL;
}

int xpv_sniff_is_sqlite(const xpv_sniff_input *in)
{
    return in->head && in->len >= 16 && memcmp(in->head, "SQLite format 3", 16) == 0;
}
