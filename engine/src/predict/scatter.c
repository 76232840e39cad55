/* Scatter: SimGrid 3.32 SMPI's scatter:ompi_binomial (Open MPI's in-order
 * binomial tree) and ompi_basic_linear (bytes per rank). */
#include "predict_internal.h"

#include <string.h>

/* Relative rank v receives its subtree's blocks from v - lowbit(v), then
 * sends to v + 1, v + 2, v + 4, ... (blocking sends; child v + m gets
 * min(m, P - v - m) blocks). Parents are built first. */
static rw_status binomial(rw_builder *b, double bytes)
{
    int32_t p = b->p, root = b->opt.root;
    for (int32_t v = 0; v < p; v++) {
        int32_t r = (v + root) % p;
        for (int32_t mask = 1; mask < p; mask <<= 1) {
            if (v & mask)
                break;
            int32_t cv = v + mask;
            if (cv >= p)
                break;
            int32_t blocks = p - cv < mask ? p - cv : mask;
            double send = (double)blocks * bytes;
            int32_t c = (cv + root) % p;
            int64_t id = rw_b_xfer(b, r, c, send, 0.0);
            rw_b_set(b, c, id);
            if (send >= (double)b->opt.eager_threshold)
                rw_b_set(b, r, id);
        }
    }
    return RW_OK;
}

/* The root sends to ranks 0, 1, ... in order, blocking sends. */
static rw_status linear(rw_builder *b, double bytes)
{
    int32_t root = b->opt.root;
    for (int32_t i = 0; i < b->p; i++) {
        if (i == root)
            continue;
        int64_t id = rw_b_xfer(b, root, i, bytes, 0.0);
        rw_b_set(b, i, id);
        if (bytes >= (double)b->opt.eager_threshold)
            rw_b_set(b, root, id);
    }
    return RW_OK;
}

rw_status rw_coll_scatter(rw_builder *b, const char *alg, double bytes)
{
    if (b->opt.root < 0 || b->opt.root >= b->p)
        return rw_fail(RW_ERR_ARG, "scatter root %d outside ranks 0..%d", (int)b->opt.root, (int)b->p - 1);
    if (!strcmp(alg, "binomial"))
        return binomial(b, bytes);
    if (!strcmp(alg, "linear"))
        return linear(b, bytes);
    return rw_fail(RW_ERR_ARG, "unknown scatter algorithm '%s' (known: binomial, linear)", alg);
}
