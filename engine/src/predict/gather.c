/* Gather: SimGrid 3.32 SMPI's gather:ompi_binomial (Open MPI's in-order
 * binomial tree) and ompi_basic_linear (bytes per rank). */
#include "predict_internal.h"

#include <string.h>

/* Relative rank v receives, in turn, the subtrees of v + 1, v + 2, v + 4, ...
 * (masks below its lowest set bit; child v + m holds min(m, P - v - m)
 * blocks), then sends everything it holds to v - lowbit(v). Children are
 * built first (ranks visited from the last). */
static rw_status binomial(rw_builder *b, double bytes)
{
    int32_t p = b->p, root = b->opt.root;
    for (int32_t v = p - 1; v >= 0; v--) {
        int32_t r = (v + root) % p;
        for (int32_t mask = 1; mask < p; mask <<= 1) {
            if (v & mask)
                break;
            int32_t cv = v + mask;
            if (cv >= p)
                break;
            int32_t blocks = p - cv < mask ? p - cv : mask;
            int64_t id = rw_b_xfer(b, (cv + root) % p, r, (double)blocks * bytes, 0.0);
            rw_b_set(b, r, id);
        }
    }
    return RW_OK;
}

/* The root receives from ranks 0, 1, ... in order, one blocking receive at a
 * time; every other rank sends at once. */
static rw_status linear(rw_builder *b, double bytes)
{
    int32_t root = b->opt.root;
    for (int32_t i = 0; i < b->p; i++) {
        if (i == root)
            continue;
        int64_t id = rw_b_xfer(b, i, root, bytes, 0.0);
        rw_b_set(b, root, id);
    }
    return RW_OK;
}

rw_status rw_coll_gather(rw_builder *b, const char *alg, double bytes)
{
    if (b->opt.root < 0 || b->opt.root >= b->p)
        return rw_fail(RW_ERR_ARG, "gather root %d outside ranks 0..%d", (int)b->opt.root, (int)b->p - 1);
    if (!strcmp(alg, "binomial"))
        return binomial(b, bytes);
    if (!strcmp(alg, "linear"))
        return linear(b, bytes);
    return rw_fail(RW_ERR_ARG, "unknown gather algorithm '%s' (known: binomial, linear)", alg);
}
