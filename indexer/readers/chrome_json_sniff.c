/*
 * chrome_json_sniff.c — telling the producers of Chrome trace JSON apart
 * by file name and by the first bytes: Perfetto's perfetto_trace.json,
 * PyTorch/Kineto, TensorFlow timelines, JAX's trace.json; anything else is
 * plain Chrome trace JSON. One reader (chrome_json_reader.c) reads them
 * all; the format name says who wrote the file, and which profiles pair
 * with an xplane twin (see the registry in registry.c).
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

/* Whatever else is worth opening, JSON or not, so that a damaged file is
 * listed with the reason it failed; SQLite databases are never ours here. */
int xpv_claims_chrome_json(const xpv_sniff_input *in)
{
    return !xpv_sniff_is_sqlite(in);
}
