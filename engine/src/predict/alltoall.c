/* All-to-all schedules, message patterns of SimGrid 3.32 SMPI's
 * alltoall:pair, ring, bruck and basic_linear (bytes per rank pair). */
#include "predict_internal.h"

#include <string.h>

/* pair: P steps (step 0 a local copy), in step i rank r exchanges with r XOR i;
 * ring: in step i rank r sends to r + i and receives from r - i. */
static rw_status peer_steps(rw_builder *b, rw_peer peer, double bytes)
{
    if (peer == RW_PEER_XOR && !rw_is_pow2(b->p))
        return rw_fail(RW_ERR_ARG, "alltoall pair needs a power-of-two rank count, not %d (use ring)", (int)b->p);
    for (int32_t i = 0; i < b->p; i++)
        rw_b_peer_step(b, peer, i, bytes, 0.0);
    return RW_OK;
}

/* bruck: a local rotation (free copies), ceil(lg P) steps in which rank r
 * sends to r + 2^k the blocks whose index has bit k set, then the inverse
 * rotation (free copies again). */
static rw_status bruck(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    for (int32_t pof2 = 1; pof2 < p; pof2 *= 2) {
        int32_t count = 0;
        for (int32_t blk = 1; blk < p; blk++)
            count += (blk & pof2) != 0;
        rw_b_peer_step(b, RW_PEER_SHIFT, pof2, (double)count * bytes, 0.0);
    }
    return RW_OK;
}

/* linear: every receive and send posted at once, then one wait. The local
 * block is a copy that costs nothing. */
static rw_status linear(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    for (int32_t r = 0; r < p; r++)
        for (int32_t i = (r + p - 1) % p; i != r; i = (i + p - 1) % p) {
            int64_t id = rw_b_xfer(b, r, i, bytes, 0.0);
            if (id >= 0)
                b->s->preposted[id] = 1; /* every receive is posted before the sends */
        }
    return RW_OK;
}

rw_status rwp_sched_alltoall(rw_builder *b, const char *alg, double bytes)
{
    if (!strcmp(alg, "pair"))
        return peer_steps(b, RW_PEER_XOR, bytes);
    if (!strcmp(alg, "ring"))
        return peer_steps(b, RW_PEER_SHIFT, bytes);
    if (!strcmp(alg, "bruck"))
        return bruck(b, bytes);
    if (!strcmp(alg, "linear"))
        return linear(b, bytes);
    return rw_fail(RW_ERR_ARG, "unknown alltoall algorithm '%s' (known: pair, ring, bruck, linear)", alg);
}
