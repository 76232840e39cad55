/* All-to-all schedules, message patterns of SimGrid 3.32 SMPI's
 * alltoall:pair, ring, bruck and basic_linear (bytes per rank pair). */
#include "predict_internal.h"

#include <stdlib.h>
#include <string.h>

/* pair: P steps (step 0 a local copy), in step i rank r exchanges with r XOR i. */
static rw_status pair(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    if (!rw_is_pow2(p))
        return rw_fail(RW_ERR_ARG, "alltoall pair needs a power-of-two rank count, not %d (use ring)", (int)p);
    int32_t *to = malloc((size_t)p * sizeof(int32_t));
    if (!to)
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    for (int32_t i = 0; i < p; i++) {
        for (int32_t r = 0; r < p; r++)
            to[r] = r ^ i;
        rw_b_sendrecv_step(b, to, bytes);
    }
    free(to);
    return RW_OK;
}

/* ring: P steps, in step i rank r sends to r + i and receives from r - i. */
static rw_status ring(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    int32_t *to = malloc((size_t)p * sizeof(int32_t));
    if (!to)
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    for (int32_t i = 0; i < p; i++) {
        for (int32_t r = 0; r < p; r++)
            to[r] = (r + i) % p;
        rw_b_sendrecv_step(b, to, bytes);
    }
    free(to);
    return RW_OK;
}

/* bruck: a local rotation (two copies), ceil(lg P) steps in which rank r
 * sends to r + 2^k the blocks whose index has bit k set, then the inverse
 * rotation (two copies) and P single-block copies. */
static rw_status bruck(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    int32_t *to = malloc((size_t)p * sizeof(int32_t));
    if (!to)
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    for (int32_t r = 0; r < p; r++) {
        rw_b_local_copy(b, r, (double)(p - r) * bytes);
        rw_b_local_copy(b, r, (double)r * bytes);
    }
    for (int32_t pof2 = 1; pof2 < p; pof2 *= 2) {
        int32_t count = 0;
        for (int32_t blk = 1; blk < p; blk++)
            count += (blk & pof2) != 0;
        for (int32_t r = 0; r < p; r++)
            to[r] = (r + pof2) % p;
        rw_b_sendrecv_step(b, to, (double)count * bytes);
    }
    for (int32_t r = 0; r < p; r++) {
        rw_b_local_copy(b, r, (double)(p - r - 1) * bytes);
        rw_b_local_copy(b, r, (double)(r + 1) * bytes);
        for (int32_t i = 0; i < p; i++)
            rw_b_local_copy(b, r, bytes);
    }
    free(to);
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

rw_status rw_coll_alltoall(rw_builder *b, const char *alg, double bytes)
{
    if (!strcmp(alg, "pair"))
        return pair(b, bytes);
    if (!strcmp(alg, "ring"))
        return ring(b, bytes);
    if (!strcmp(alg, "bruck"))
        return bruck(b, bytes);
    if (!strcmp(alg, "linear"))
        return linear(b, bytes);
    return rw_fail(RW_ERR_ARG, "unknown alltoall algorithm '%s' (known: pair, ring, bruck, linear)", alg);
}
