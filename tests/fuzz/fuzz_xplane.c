/*
 * fuzz_xplane.c — the xplane.pb reader: the protobuf wire decoder, XSpace
 * planes, lines, events, stat metadata, kernel_details text, and the
 * analysis of what it produced.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xpv_fuzz_index_file("host.xplane.pb", data, size);
    return 0;
}
