/*
 * fuzz_kernel_details.c — the `kernel_details` text parser, alone (it is
 * reached through the readers too, but only with what survives them).
 */
#include "fuzz.h"

#include "indexer/readers/kernel_details.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so that reading one byte past the text is caught. */
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    xpv_launch launch;
    memset(&launch, 0xff, sizeof launch);
    int n = xpv_kernel_details_parse(text, size, &launch);
    assert(n >= 0);
    (void)n; /* read only by the assert, which NDEBUG removes */
    free(text);
    return 0;
}
