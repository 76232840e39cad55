/* Allgather: SimGrid 3.32 SMPI's allgather:ring, rdb, bruck and
 * ompi_neighborexchange (bytes per rank). SMPI's "ring" sends the rank's own block to rank + i in step i.
 * Each starts and bruck ends with local copies, which cost nothing. */
#include "predict_internal.h"

#include <string.h>

static rw_status ring(rw_builder *b, double bytes)
{
    for (int32_t i = 1; i < b->p; i++)
        rw_b_peer_step(b, RW_PEER_SHIFT, i, bytes, 0.0);
    return RW_OK;
}

/* rdb: in step `mask` ranks r and r XOR mask swap the mask blocks they hold. */
static rw_status rdb(rw_builder *b, double bytes)
{
    if (!rw_is_pow2(b->p))
        return rw_fail(RW_ERR_ARG, "allgather rdb is modelled for a power-of-two rank count, not %d", (int)b->p);
    for (int32_t mask = 1; mask < b->p; mask <<= 1)
        rw_b_peer_step(b, RW_PEER_XOR, mask, (double)mask * bytes, 0.0);
    return RW_OK;
}

/* bruck: step k sends the 2^k blocks gathered so far to rank - 2^k; the
 * remainder P - 2^K blocks last; then the local rotation. */
static rw_status bruck(rw_builder *b, double bytes)
{
    int32_t p = b->p, pof2 = 1;
    for (; pof2 <= p / 2; pof2 *= 2)
        rw_b_peer_step(b, RW_PEER_SHIFT, p - pof2, (double)pof2 * bytes, 0.0);
    if (p - pof2 > 0)
        rw_b_peer_step(b, RW_PEER_SHIFT, p - pof2, (double)(p - pof2) * bytes, 0.0);
    return RW_OK;
}

/* ompi_neighborexchange (even P; odd P runs ring): step 0 swaps one block
 * with the neighbour r XOR 1, then P/2 - 1 steps swap two blocks, with the
 * other neighbour (even r: r - 1, odd r: r + 1) at odd steps and r XOR 1
 * again at even ones. */
static rw_status neighborexchange(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    if (p % 2)
        return ring(b, bytes);
    for (int32_t i = 0; i < p / 2; i++) {
        for (int32_t r = 0; r < p; r++) {
            int32_t to = i % 2 == 0 ? r ^ 1 : r % 2 == 0 ? (r - 1 + p) % p : (r + 1) % p;
            double sz = i == 0 ? bytes : 2 * bytes;
            int64_t id = rw_b_xfer(b, r, to, sz, 0.0);
            rw_b_next(b, to, id);
            rw_b_send_done(b, r, id, sz);
        }
        rw_b_commit(b);
    }
    return RW_OK;
}

rw_status rwp_sched_allgather(rw_builder *b, const char *alg, double bytes)
{
    if (!strcmp(alg, "ring"))
        return ring(b, bytes);
    if (!strcmp(alg, "rdb"))
        return rdb(b, bytes);
    if (!strcmp(alg, "bruck"))
        return bruck(b, bytes);
    if (!strcmp(alg, "neighborexchange"))
        return neighborexchange(b, bytes);
    return rw_fail(RW_ERR_ARG, "unknown allgather algorithm '%s' (known: ring, rdb, bruck, neighborexchange)", alg);
}
