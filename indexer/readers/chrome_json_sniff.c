/*
 * chrome_json_sniff.c — telling the producers of Chrome trace JSON apart
 * by file name and by the first bytes: Perfetto's perfetto_trace.json,
 * PyTorch/Kineto, TensorFlow timelines, JAX's trace.json; anything else is
 * plain Chrome trace JSON. One reader (chrome_json_reader.c) reads them
 * all; the format name says who wrote the file, and which profiles pair
 * with an xplane twin (see the registry in registry.c).
 *
 * A JSON document that is no trace (an experiment's MANIFEST.json, a
 * config) is not claimed: the plain Chrome row takes JSON only when its
 * head has the shape of a trace. Anything that starts like a trace is
 * claimed, even cut short, so a damaged trace is listed with its reason.
 */
#include "readers.h"

#include <string.h>

int xpv_claims_perfetto_json(const xpv_sniff_input *in)
{
    return in->json && (strcmp(in->name, "perfetto_trace.json.gz") == 0 ||
                        strcmp(in->name, "perfetto_trace.json") == 0);
}

int xpv_claims_pytorch_json(const xpv_sniff_input *in)
{
    return in->json &&
           (xpv_sniff_name_ends(in, ".pt.trace.json") ||
            xpv_sniff_name_ends(in, ".pt.trace.json.gz") ||
            xpv_sniff_contains(in, "\"schemaVersion\"") ||
            xpv_sniff_contains(in, "\"deviceProperties\"") ||
            xpv_sniff_contains(in, "\"ProfilerStep#") || xpv_sniff_contains(in, "\"cpu_op\""));
}

int xpv_claims_tf_json(const xpv_sniff_input *in)
{
    return in->json &&
           (xpv_sniff_name_ends(in, ".ctf.json") || xpv_sniff_contains(in, "/job:") ||
            (xpv_sniff_contains(in, "/device:") && xpv_sniff_contains(in, " Compute\"")));
}

int xpv_claims_jax_json(const xpv_sniff_input *in)
{
    return in->json &&
           (xpv_sniff_name_ends(in, ".trace.json") || xpv_sniff_name_ends(in, ".trace.json.gz") ||
            xpv_sniff_contains(in, "\"highres-ticks\""));
}

/* The index of the first byte at or after i that is no JSON blank. */
static size_t skip_blanks(const unsigned char *h, size_t n, size_t i)
{
    while (i < n && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
        i++;
    return i;
}

/* 1 when a JSON head has the shape of a Chrome trace: an object with a key
 * only the trace object format has, or an array of event objects ("ph" is
 * the one key every event has); a head that ends before it can tell (an
 * opening bracket and nothing more) is a trace cut short. */
static int json_head_is_trace(const xpv_sniff_input *in)
{
    if (xpv_sniff_contains(in, "\"traceEvents\"") ||
        xpv_sniff_contains(in, "\"systemTraceEvents\"") ||
        xpv_sniff_contains(in, "\"displayTimeUnit\""))
        return 1;
    const unsigned char *h = in->head;
    size_t i = in->len >= 3 && h[0] == 0xEF && h[1] == 0xBB && h[2] == 0xBF ? 3 : 0;
    i = skip_blanks(h, in->len, i);
    if (i == in->len) return 1;
    unsigned char open = h[i];
    i = skip_blanks(h, in->len, i + 1);
    if (i == in->len) return 1;
    return open == '[' && h[i] == '{' && xpv_sniff_contains(in, "\"ph\"");
}

/* Whatever else is worth opening, so that a damaged file is listed with
 * the reason it failed; never a SQLite database, nor a JSON document that
 * is not shaped as a trace. */
int xpv_claims_chrome_json(const xpv_sniff_input *in)
{
    if (xpv_sniff_is_sqlite(in)) return 0;
    return !in->json || json_head_is_trace(in);
}
