/* Allgather: SimGrid 3.32 SMPI's allgather:ring, rdb and bruck (bytes per
 * rank). SMPI's "ring" sends the rank's own block to rank + i in step i. */
#include "predict_internal.h"

#include <stdlib.h>
#include <string.h>

static rw_status ring(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    int32_t *to = malloc((size_t)p * sizeof(int32_t));
    if (!to)
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    for (int32_t r = 0; r < p; r++)
        rw_b_local_copy(b, r, bytes);
    for (int32_t i = 1; i < p; i++) {
        for (int32_t r = 0; r < p; r++)
            to[r] = (r + i) % p;
        rw_b_sendrecv_step(b, to, bytes);
    }
    free(to);
    return RW_OK;
}

static rw_status rdb(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    if (!rw_is_pow2(p))
        return rw_fail(RW_ERR_ARG, "allgather rdb is modelled for a power-of-two rank count, not %d", (int)p);
    int32_t *to = malloc((size_t)p * sizeof(int32_t));
    if (!to)
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    for (int32_t r = 0; r < p; r++)
        rw_b_local_copy(b, r, bytes);
    for (int32_t mask = 1; mask < p; mask <<= 1) {
        for (int32_t r = 0; r < p; r++)
            to[r] = r ^ mask;
        rw_b_sendrecv_step(b, to, (double)mask * bytes);
    }
    free(to);
    return RW_OK;
}

/* bruck: step k sends the 2^k blocks gathered so far to rank - 2^k; the
 * remainder P - 2^K blocks last; then the local rotation (two copies). */
static rw_status bruck(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    int32_t *to = malloc((size_t)p * sizeof(int32_t));
    if (!to)
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    int32_t pof2 = 1;
    for (; pof2 <= p / 2; pof2 *= 2) {
        for (int32_t r = 0; r < p; r++)
            to[r] = (r - pof2 + p) % p;
        rw_b_sendrecv_step(b, to, (double)pof2 * bytes);
    }
    if (p - pof2 > 0) {
        for (int32_t r = 0; r < p; r++)
            to[r] = (r - pof2 + p) % p;
        rw_b_sendrecv_step(b, to, (double)(p - pof2) * bytes);
    }
    for (int32_t r = 0; r < p; r++) {
        rw_b_local_copy(b, r, (double)(p - r) * bytes);
        if (r)
            rw_b_local_copy(b, r, (double)r * bytes);
    }
    free(to);
    return RW_OK;
}

rw_status rw_coll_allgather(rw_builder *b, const char *alg, double bytes)
{
    if (!strcmp(alg, "ring"))
        return ring(b, bytes);
    if (!strcmp(alg, "rdb"))
        return rdb(b, bytes);
    if (!strcmp(alg, "bruck"))
        return bruck(b, bytes);
    return rw_fail(RW_ERR_ARG, "unknown allgather algorithm '%s' (known: ring, rdb, bruck)", alg);
}
