/* gen_jax.c — placeholder until this writer lands. */
#include "gen.h"
#include <stdio.h>

int xpv_gen_jax(const xpv_gen_opts *o)
{
    (void)o;
    fprintf(stderr, "xpv-gen: --kind jax is not built yet\n");
    return -1;
}
