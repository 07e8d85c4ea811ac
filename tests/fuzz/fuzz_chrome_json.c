/*
 * fuzz_chrome_json.c — the Chrome trace JSON readers (JAX, PyTorch,
 * TensorFlow, Perfetto, plain Chrome) through sniffing, the JSON scanner,
 * the slice pairer and the analysis. An input starting with the gzip magic
 * goes through the inflater too.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xpv_fuzz_index_file("host.trace.json", data, size);
    return 0;
}
