/*
 * readers.h — the format registry: which profile formats exist, how a file
 * is recognised as one, and which reader streams it into a sink (see
 * ../ingest.h). Discovery (../discover.c) and indexing (../indexer.c) ask
 * it; they know no format by itself.
 *
 * The table is in registry.c, one row per format, in the order formats are
 * tried: the first row whose claims() accepts a file decides its format. A
 * new format is one reader file in this folder (its claims and read
 * functions) and one row, with their declarations, in registry.c.
 *
 * A reader returns 0, or -1 with a message that names the byte offset and
 * the reason; what it wrote before failing is kept (a partial profile).
 */
#ifndef XPV_READERS_H
#define XPV_READERS_H

#include "../ingest.h"

/* Names of the formats that code outside their reader refers to (tests,
 * the indexer's special cases); stored in profiles.format and shown. */
#define XPV_FMT_XPLANE "xplane"
#define XPV_FMT_JAX_JSON "jax_trace_json"
#define XPV_FMT_PERFETTO_JSON "perfetto_trace_json"
#define XPV_FMT_PYTORCH_JSON "pytorch_trace_json"
#define XPV_FMT_TF_JSON "tf_timeline_json"
#define XPV_FMT_CHROME_JSON "chrome_trace_json"
#define XPV_FMT_NSYS_SQLITE "nsys_sqlite"
#define XPV_FMT_NSYS_REP "nsys_rep"
#define XPV_FMT_UNKNOWN "unknown" /* a file that could not be read far enough to tell */

/* What a claims() function looks at: the file's name and its first bytes
 * (gzip already inflated). head is NULL when the file could not be read;
 * only formats flagged XPV_FORMAT_NAME_DECIDES are asked then. path is NULL
 * when only the name and head are known (tests); a format may open the
 * file for a closer look otherwise. */
typedef struct {
    const char *name; /* file name, no folder */
    const char *path;
    const unsigned char *head;
    size_t len;
    int json; /* head starts a JSON document (after a BOM and blanks) */
} xpv_sniff_input;

typedef int (*xpv_reader_fn)(const char *path, xpv_sink *sink, xpv_err *err);

/* A file ending in one of the format's endings is this format or none. */
#define XPV_FORMAT_NAME_DECIDES 1u
/* The file name names no host (one such file per run folder, as JAX's
 * perfetto_trace.json.gz): the file belongs to the host of the other
 * profiles in its folder when they all have one, else its name is kept
 * (see discover.c). */
#define XPV_FORMAT_RUN_HOST 2u

typedef struct {
    const char *name;
    /* File-name endings, '|'-separated: a file so named is worth opening,
     * and its host name is the file name without the longest ending
     * (unless XPV_FORMAT_RUN_HOST). */
    const char *endings;
    int (*claims)(const xpv_sniff_input *in);
    xpv_reader_fn read; /* NULL: listed as unsupported, and explain() says why */
    void (*explain)(const char *path, char *out, size_t n);
    /* The pairing rule: a file of this format beside a `twin_of` file of
     * the same run and host is the same capture, shown once (its
     * companion_of names the twin). NULL: never paired. */
    const char *twin_of;
    unsigned flags; /* XPV_FORMAT_* */
} xpv_format;

/* The format that claims the file, or NULL when it is not a profile. */
const xpv_format *xpv_format_sniff(const xpv_sniff_input *in);
/* The format of that name, or NULL (XPV_FMT_UNKNOWN has no row). */
const xpv_format *xpv_format_named(const char *name);
/* The length of the longest format ending that file_name has, 0 when none:
 * nonzero means the file is worth opening. */
size_t xpv_format_ending_len(const char *file_name);
/* The reader of a format, NULL when it has none (unsupported, unknown). */
xpv_reader_fn xpv_reader_for(const char *format);

/* Helpers for claims() functions. */
int xpv_sniff_name_ends(const xpv_sniff_input *in, const char *ending);
int xpv_sniff_contains(const xpv_sniff_input *in, const char *needle);
int xpv_sniff_is_sqlite(const xpv_sniff_input *in);

#endif
