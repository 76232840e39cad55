/* Scatter: SimGrid 3.32 SMPI's scatter:ompi_binomial (Open MPI's in-order
 * binomial tree) and ompi_basic_linear (bytes per rank). */
#include "predict_internal.h"

#include <string.h>

rw_status rwp_sched_scatter(rw_builder *b, const char *alg, double bytes)
{
    if (b->opt.root < 0 || b->opt.root >= b->p)
        return rw_fail(RW_ERR_ARG, "scatter root %d outside ranks 0..%d", (int)b->opt.root, (int)b->p - 1);
    if (!strcmp(alg, "binomial"))
        rw_b_binomial_blocks(b, bytes, 0);
    else if (!strcmp(alg, "linear"))
        rw_b_linear_rooted(b, bytes, 0);
    else
        return rw_fail(RW_ERR_ARG, "unknown scatter algorithm '%s' (known: binomial, linear)", alg);
    return RW_OK;
}
