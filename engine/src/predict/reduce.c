/* Reduce: SimGrid 3.32 SMPI's reduce:binomial (commutative operation). */
#include "predict_internal.h"

#include <string.h>

/* Relative rank v receives, in turn, from v | mask for every mask below its
 * lowest set bit (reducing each arrival: opt.gamma s per byte), then sends
 * its partial result to v & ~lowbit(v). Children have larger relative ranks,
 * so ranks are visited from the last to the root. The reduction of an
 * arrival delays the rank's next transfer. */
static rw_status binomial(rw_builder *b, double bytes)
{
    int32_t p = b->p, root = b->opt.root;
    double compute = b->opt.gamma * bytes;
    for (int32_t v = p - 1; v >= 0; v--) {
        int32_t r = (v + root) % p;
        for (int32_t mask = 1; mask < p; mask <<= 1) {
            if (v & mask)
                break;
            int32_t cv = v | mask;
            if (cv >= p)
                continue;
            int32_t c = (cv + root) % p;
            int64_t id = rw_b_xfer(b, c, r, bytes, (b->front[r].n || b->front[c].n) ? compute : 0.0);
            rw_b_set(b, r, id);
        }
    }
    /* The ranks' sends to their parents were made by the parents' loops. */
    return RW_OK;
}

rw_status rwp_sched_reduce(rw_builder *b, const char *alg, double bytes)
{
    if (b->opt.root < 0 || b->opt.root >= b->p)
        return rw_fail(RW_ERR_ARG, "reduce root %d outside ranks 0..%d", (int)b->opt.root, (int)b->p - 1);
    if (!strcmp(alg, "binomial"))
        return binomial(b, bytes);
    return rw_fail(RW_ERR_ARG, "unknown reduce algorithm '%s' (known: binomial)", alg);
}
