/* Allreduce: SimGrid 3.32 SMPI's allreduce:rdb (recursive doubling), lr
 * (ring: reduce-scatter then allgather around the ring) and rab_rdb
 * (Rabenseifner: recursive halving reduce-scatter, recursive doubling
 * allgather). bytes per rank; the reduction costs opt.gamma s per byte. */
#include "predict_internal.h"

#include <stdlib.h>
#include <string.h>

/* Non-power-of-two prologue shared by rdb and rab_rdb: of the first 2 rem
 * ranks the even ones hand their data to the odd ones and sit out. Returns
 * pof2; newrank[r] = rank in the power-of-two group or -1; real[nr] = its rank. */
static int32_t fold_in(rw_builder *b, double bytes, int32_t *newrank, int32_t *real)
{
    int32_t p = b->p, pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int32_t rem = p - pof2;
    for (int32_t r = 0; r < p; r++) {
        if (r < 2 * rem) {
            if (r % 2 == 0) {
                int64_t id = rw_b_xfer(b, r, r + 1, bytes, 0.0);
                rw_b_set(b, r + 1, id);
                if (bytes >= (double)b->opt.eager_threshold)
                    rw_b_set(b, r, id);
                newrank[r] = -1;
            } else {
                newrank[r] = r / 2;
            }
        } else {
            newrank[r] = r - rem;
        }
        if (newrank[r] >= 0)
            real[newrank[r]] = r;
    }
    return pof2;
}

/* Epilogue: the odd ranks give the result back to the even ones. */
static void fold_out(rw_builder *b, double bytes, int32_t pof2)
{
    int32_t rem = b->p - pof2;
    for (int32_t r = 1; r < 2 * rem; r += 2) {
        int64_t id = rw_b_xfer(b, r, r - 1, bytes, 0.0);
        rw_b_set(b, r - 1, id);
    }
}

static rw_status rdb(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    int32_t *newrank = malloc((size_t)p * sizeof(int32_t)), *real = malloc((size_t)p * sizeof(int32_t));
    if (!newrank || !real) {
        free(newrank);
        free(real);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    }
    double compute = b->opt.gamma * bytes;
    for (int32_t r = 0; r < p; r++)
        rw_b_local_copy(b, r, bytes); /* sendrecv to itself */
    int32_t pof2 = fold_in(b, bytes, newrank, real);
    for (int32_t mask = 1; mask < pof2; mask <<= 1) {
        for (int32_t nr = 0; nr < pof2; nr++) {
            int32_t r = real[nr], d = real[nr ^ mask];
            int64_t id = rw_b_xfer(b, r, d, bytes, mask > 1 ? compute : 0.0);
            rw_b_next(b, d, id);
            rw_b_send_done(b, r, id, bytes);
        }
        rw_b_commit(b);
        /* a rank whose partner is above it copies the result back to itself */
        for (int32_t nr = 0; nr < pof2; nr++) {
            int32_t r = real[nr], d = real[nr ^ mask];
            if (d > r)
                rw_b_local_copy(b, r, bytes);
        }
    }
    fold_out(b, bytes, pof2);
    free(newrank);
    free(real);
    return RW_OK;
}

/* lr: a local copy of one chunk, P - 1 reduce-scatter steps and P - 1
 * allgather steps, each sending one chunk (bytes / P, the element count
 * rounded down; the remainder's own allreduce is left out) to rank + 1. */
static rw_status ring(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    double chunk = (double)((int64_t)(bytes / 4) / p) * 4; /* floats, as the benchmark sends */
    if (chunk <= 0 && p > 1)
        return rw_fail(RW_ERR_ARG, "allreduce ring needs at least one 4-byte element per rank (%g bytes, %d ranks)",
                       bytes, (int)p);
    int32_t *to = malloc((size_t)p * sizeof(int32_t));
    if (!to)
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    for (int32_t r = 0; r < p; r++)
        rw_b_local_copy(b, r, chunk);
    for (int32_t r = 0; r < p; r++)
        to[r] = (r + 1) % p;
    double compute = b->opt.gamma * chunk;
    for (int32_t phase = 0; phase < 2; phase++)
        for (int32_t i = 0; i + 1 < p; i++) {
            for (int32_t r = 0; r < p; r++) {
                int64_t id = rw_b_xfer(b, r, to[r], chunk, phase == 0 && i > 0 ? compute : 0.0);
                rw_b_next(b, to[r], id);
                rw_b_send_done(b, r, id, chunk);
            }
            rw_b_commit(b);
        }
    free(to);
    return RW_OK;
}

/* rab_rdb: reduce-scatter by recursive halving (partner distance 1 first,
 * half the data), then allgather by recursive doubling (the reverse). */
static rw_status rabenseifner(rw_builder *b, double bytes)
{
    int32_t p = b->p;
    int32_t *newrank = malloc((size_t)p * sizeof(int32_t)), *real = malloc((size_t)p * sizeof(int32_t));
    if (!newrank || !real) {
        free(newrank);
        free(real);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    }
    int32_t pof2 = fold_in(b, bytes, newrank, real);
    double elems = (double)(int64_t)(bytes / 4);
    double prev = 0;
    for (int32_t mask = 1; mask < pof2; mask <<= 1) {
        double piece = (double)(int64_t)(elems / pof2) * 4 * (pof2 / (2 * mask));
        for (int32_t nr = 0; nr < pof2; nr++) {
            int32_t r = real[nr], d = real[nr ^ mask];
            int64_t id = rw_b_xfer(b, r, d, piece, b->opt.gamma * prev);
            rw_b_next(b, d, id);
            rw_b_send_done(b, r, id, piece);
        }
        rw_b_commit(b);
        prev = piece;
    }
    for (int32_t mask = pof2 >> 1; mask > 0; mask >>= 1) {
        double piece = (double)(int64_t)(elems / pof2) * 4 * (pof2 / (2 * mask));
        for (int32_t nr = 0; nr < pof2; nr++) {
            int32_t r = real[nr], d = real[nr ^ mask];
            int64_t id = rw_b_xfer(b, r, d, piece, mask == (pof2 >> 1) ? b->opt.gamma * prev : 0.0);
            rw_b_next(b, d, id);
            rw_b_send_done(b, r, id, piece);
        }
        rw_b_commit(b);
    }
    fold_out(b, bytes, pof2);
    free(newrank);
    free(real);
    return RW_OK;
}

rw_status rw_coll_allreduce(rw_builder *b, const char *alg, double bytes)
{
    if (!strcmp(alg, "rdb"))
        return rdb(b, bytes);
    if (!strcmp(alg, "ring"))
        return ring(b, bytes);
    if (!strcmp(alg, "rabenseifner"))
        return rabenseifner(b, bytes);
    return rw_fail(RW_ERR_ARG, "unknown allreduce algorithm '%s' (known: rdb, ring, rabenseifner)", alg);
}
