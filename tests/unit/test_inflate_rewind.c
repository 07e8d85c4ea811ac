/*
 * test_inflate_rewind.c — test_inflate_raw's cases on ISA-L's engine as
 * ISA-L behaves from 2.32.1 on: at a stream's end isal_inflate moves its
 * own input pointer back over the bytes it read past the end, where older
 * versions leave them in their bit buffer (inflate_raw.h's read-ahead).
 * Whichever version is installed, this program wraps isal_inflate to do
 * what 2.32.1 does, then compiles inflate_raw.c and test_inflate_raw.c's
 * cases against the wrapper. Built without ISA-L it has nothing to test.
 */
#include <stdio.h>

#ifdef XPV_TEST_HAVE_ISAL
#include <isa-l/igzip_lib.h>

static int rewinding_inflate(struct inflate_state *st)
{
    int rc = isal_inflate(st);
    if (rc >= 0 && st->block_state == ISAL_BLOCK_FINISH && st->read_in_length >= 8) {
        int back = st->read_in_length / 8;
        st->next_in -= back;
        st->avail_in += (uint32_t)back;
        st->read_in = 0;
        st->read_in_length = 0;
    }
    return rc;
}

#define isal_inflate rewinding_inflate
#define XPV_HAVE_ISAL
#include "indexer/readers/inflate_raw.c"
#undef isal_inflate
#include "test_inflate_raw.c"

#else
int main(void)
{
    printf("skipped: built without ISA-L, whose behaviour this emulates\n");
    return 77;
}
#endif
