/* Allreduce: SimGrid 3.32 SMPI's allreduce:rdb (recursive doubling), lr
 * (ring: reduce-scatter then allgather around the ring) and rab_rdb
 * (Rabenseifner: recursive halving reduce-scatter, recursive doubling
 * allgather). bytes per rank; the reduction costs opt.gamma s per byte. */
#include "predict_internal.h"

#include <stdlib.h>
#include <string.h>

/* Rank i of the group (ranks NULL: i itself). */
static inline int32_t grp(const int32_t *ranks, int32_t i)
{
    return ranks ? ranks[i] : i;
}

/* Non-power-of-two prologue shared by rdb and rab_rdb, among the group's m
 * ranks: of the first 2 rem the even ones hand their data to the odd ones
 * and sit out. Returns pof2 and *real (malloc'd): real[nr] is the rank of
 * the power-of-two group's rank nr; -1 when out of memory. */
static int32_t fold_in(rw_builder *b, const int32_t *ranks, int32_t m, double bytes, int32_t **real_out)
{
    int32_t pof2 = 1;
    while (pof2 * 2 <= m)
        pof2 *= 2;
    int32_t rem = m - pof2;
    int32_t *real = malloc((size_t)pof2 * sizeof(int32_t));
    if (!(*real_out = real)) {
        b->err = rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
        return -1;
    }
    for (int32_t r = 0; r < m; r++) {
        if (r < 2 * rem && r % 2 == 0) {
            rw_b_send(b, grp(ranks, r), grp(ranks, r + 1), bytes);
        } else {
            real[r < 2 * rem ? r / 2 : r - rem] = grp(ranks, r);
        }
    }
    return pof2;
}

/* Epilogue: the odd ranks give the result back to the even ones. */
static void fold_out(rw_builder *b, const int32_t *ranks, int32_t m, double bytes, int32_t pof2, int32_t *real)
{
    int32_t rem = m - pof2;
    for (int32_t r = 1; r < 2 * rem; r += 2) {
        rw_b_send(b, grp(ranks, r), grp(ranks, r - 1), bytes);
    }
    free(real);
}

/* One step inside the power-of-two group: rank nr and nr XOR mask swap
 * `bytes`, each after `delay` (the reduction of what it received last). */
static void group_step(rw_builder *b, const int32_t *real, int32_t pof2, int32_t mask, double bytes, double delay)
{
    for (int32_t nr = 0; nr < pof2; nr++) {
        int32_t r = real[nr], d = real[nr ^ mask];
        int64_t id = rw_b_xfer(b, r, d, bytes, delay);
        rw_b_next(b, d, id);
        rw_b_send_done(b, r, id, bytes);
    }
    rw_b_commit(b);
}

rw_status rw_b_allreduce_rdb(rw_builder *b, const int32_t *ranks, int32_t m, double bytes)
{
    int32_t *real;
    int32_t pof2 = fold_in(b, ranks, m, bytes, &real);
    if (pof2 < 0)
        return b->err;
    for (int32_t mask = 1; mask < pof2; mask <<= 1)
        group_step(b, real, pof2, mask, bytes, mask > 1 ? b->opt.gamma * bytes : 0.0);
    fold_out(b, ranks, m, bytes, pof2, real);
    return RW_OK;
}

/* lr: P - 1 reduce-scatter steps and P - 1 allgather steps, each sending
 * one chunk (bytes / P, the element count rounded down; the remainder's own
 * allreduce is left out) to rank + 1; a reduce-scatter step reduces what
 * the previous one received before sending. */
static rw_status ring(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    double chunk = (double)((int64_t)(bytes / 4) / p) * 4; /* floats, as the benchmark sends */
    if (chunk <= 0 && p > 1)
        return rw_fail(RW_ERR_ARG, "allreduce ring needs at least one 4-byte element per rank (%g bytes, %d ranks)",
                       bytes, (int)p);
    double compute = b->opt.gamma * chunk;
    for (int32_t phase = 0; phase < 2; phase++)
        for (int32_t i = 0; i + 1 < p; i++)
            rw_b_peer_step(b, RW_PEER_SHIFT, 1, chunk, phase == 0 && i > 0 ? compute : 0.0);
    return RW_OK;
}

/* rab_rdb: reduce-scatter by recursive halving (partner distance 1 first,
 * half the data), then allgather by recursive doubling (the reverse). */
static rw_status rabenseifner(rw_builder *b, double bytes)
{
    int32_t *real;
    int32_t pof2 = fold_in(b, NULL, b->p, bytes, &real);
    if (pof2 < 0)
        return b->err;
    double elems = (double)(int64_t)(bytes / 4);
    double prev = 0;
    for (int32_t mask = 1; mask < pof2; mask <<= 1) {
        double piece = (double)(int64_t)(elems / pof2) * 4 * (pof2 / (2 * mask));
        group_step(b, real, pof2, mask, piece, b->opt.gamma * prev);
        prev = piece;
    }
    for (int32_t mask = pof2 >> 1; mask > 0; mask >>= 1) {
        double piece = (double)(int64_t)(elems / pof2) * 4 * (pof2 / (2 * mask));
        group_step(b, real, pof2, mask, piece, mask == (pof2 >> 1) ? b->opt.gamma * prev : 0.0);
    }
    fold_out(b, NULL, b->p, bytes, pof2, real);
    return RW_OK;
}

rw_status rwp_sched_allreduce(rw_builder *b, const char *alg, double bytes)
{
    if (!strcmp(alg, "rdb"))
        return rw_b_allreduce_rdb(b, NULL, b->p, bytes);
    if (!strcmp(alg, "ring"))
        return ring(b, bytes);
    if (!strcmp(alg, "rabenseifner"))
        return rabenseifner(b, bytes);
    return rw_fail(RW_ERR_ARG, "unknown allreduce algorithm '%s' (known: rdb, ring, rabenseifner)", alg);
}
