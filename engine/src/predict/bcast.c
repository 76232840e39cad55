/* Broadcast schedules, message patterns of SimGrid 3.32 SMPI's
 * bcast:binomial_tree, NTSL (chain), scatter_LR_allgather and
 * scatter_rdb_allgather; knomial is the k-ary generalisation of the
 * binomial tree (radix 2: binomial_tree), flat its radix-P case (SMPI's
 * flattree). */
#include "predict_internal.h"

#include <stdlib.h>
#include <string.h>

/* Binomial tree from root: rank with relative rank v receives from v - lowbit(v),
 * then sends (blocking, largest subtree first) to v + mask for each mask below
 * its lowest set bit. Ranks are visited in increasing relative rank, so a
 * parent's front is final before its children's transfers are made. */
void rw_b_binomial_bcast(rw_builder *b, int32_t root, double bytes)
{
    int32_t p = b->p;
    for (int32_t v = 0; v < p; v++) {
        int32_t r = (v + root) % p;
        int32_t mask = 1;
        while (mask < p && !(v & mask))
            mask <<= 1;
        /* mask: lowest set bit of v (p for the root) */
        for (int32_t m = mask >> 1; m > 0; m >>= 1) {
            if (v + m >= p)
                continue;
            rw_b_send(b, r, (v + m + root) % p, bytes);
        }
    }
}

/* k-nomial tree: relative rank v's parent clears its lowest nonzero base-k
 * digit; a node sends to v + j k^i (j = 1..k-1) for every digit position i
 * below its lowest nonzero digit, highest position first. Blocking sends,
 * or (isend) a digit position's k - 1 sends posted at once and waited for
 * together before the next position's: MVAPICH2's k-nomial (SMPI's
 * mvapich2_knomial_intra_node, the "knomial" of the ompi selector; at and
 * above the eager limit its transfers overlap, where blocking sends queue)
 * and, with one position, SMPI's flattree. */
static rw_status knomial(rw_builder *b, double bytes, int32_t k, int isend)
{
    int32_t p = b->p, root = b->opt.root;
    if (k < 2)
        return rw_fail(RW_ERR_ARG, "knomial bcast needs a radix >= 2, not %d", (int)k);
    for (int32_t v = 0; v < p; v++) {
        int32_t r = (v + root) % p;
        int64_t span = 1; /* k^(lowest nonzero digit position of v), p for the root */
        while (span < p && (v / span) % k == 0)
            span *= k;
        for (int64_t m = span / k; m >= 1; m /= k) {
            for (int32_t j = 1; j < k; j++) {
                int64_t cv = v + j * m;
                if (cv >= p)
                    break;
                int32_t c = (int32_t)((cv + root) % p);
                if (isend) {
                    int64_t id = rw_b_xfer(b, r, c, bytes, 0.0);
                    rw_b_set(b, c, id);
                    rw_b_send_done(b, r, id, bytes);
                } else {
                    rw_b_send(b, r, c, bytes);
                }
            }
            rw_b_commit(b); /* the position's waitall */
            if (m == 1)
                break;
        }
    }
    return RW_OK;
}

/* Chain (SMPI NTSL): the root first hands the message to rank 0 when it is
 * not 0; then 0 -> 1 -> ... -> P-1 in segments of opt.segment bytes, every
 * receive posted at once, each segment forwarded as soon as it arrives. A
 * message of at most one segment travels whole; the remainder of a message
 * that is not a multiple of the segment follows by a binomial bcast. */
static rw_status chain(rw_builder *b, double bytes)
{
    int32_t p = b->p, root = b->opt.root;
    double seg = (double)b->opt.segment;
    if (seg <= 0)
        return rw_fail(RW_ERR_ARG, "chain bcast needs a segment > 0 bytes, not %lld", (long long)b->opt.segment);
    if (root != 0) {
        rw_b_send(b, root, 0, bytes);
    }
    if (p == 1)
        return RW_OK;
    if (bytes <= seg) {
        for (int32_t r = 0; r + 1 < p; r++)
            rw_b_send(b, r, r + 1, bytes);
        return RW_OK;
    }
    int64_t pipe = (int64_t)(bytes / seg);
    double rest = bytes - (double)pipe * seg;
    /* Segment i leaves rank r once it has arrived there (rank 0: once rank 0
     * reached the bcast); every receive is posted at the receiver's start. */
    int64_t *prev = malloc((size_t)pipe * sizeof(int64_t));
    int64_t *deps = malloc((size_t)(b->front[0].n + 1 + 64) * sizeof(int64_t));
    if (!prev || !deps) {
        free(prev);
        free(deps);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    }
    for (int32_t r = 0; r + 1 < p && b->err == RW_OK; r++) {
        rw_idlist *fd = &b->front[r + 1];
        int64_t *dd = fd->n > 64 ? realloc(deps, (size_t)(b->front[0].n + 1 + fd->n) * sizeof(int64_t)) : deps;
        if (!dd) {
            b->err = rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
            break;
        }
        deps = dd;
        for (int64_t i = 0; i < pipe && b->err == RW_OK; i++) {
            int32_t k = 0;
            if (r == 0)
                for (int32_t j = 0; j < b->front[0].n; j++)
                    deps[k++] = b->front[0].v[j];
            else
                deps[k++] = prev[i];
            int32_t n_sender = k;
            for (int32_t j = 0; j < fd->n; j++)
                deps[k++] = fd->v[j];
            b->err = rw_sched_add(b->s, r, r + 1, seg, 0.0, k, deps, &prev[i]);
            if (b->err == RW_OK) {
                b->s->detached[prev[i]] = seg < (double)b->opt.eager_threshold;
                b->s->n_sdeps[prev[i]] = n_sender;
                b->s->preposted[prev[i]] = 1; /* NTSL posts every receive first */
            }
        }
    }
    /* The last rank ends with the last segment; the others' isends are
     * waited for at the end (waitall), which the last segment bounds. */
    if (b->err == RW_OK)
        for (int32_t r = 1; r < p; r++)
            rw_b_set(b, r, prev[pipe - 1]);
    free(prev);
    free(deps);
    if (rest > 0)
        rw_b_binomial_bcast(b, root, rest);
    return b->err;
}

/* Binomial scatter of `total` bytes from root in blocks of ceil(total / P):
 * have[r] receives the bytes rank r holds afterwards (its subtree's). */
void rw_b_binomial_scatter_blocks(rw_builder *b, int32_t root, double total, double *have)
{
    int32_t p = b->p;
    double block = (double)(((int64_t)total + p - 1) / p);
    for (int32_t r = 0; r < p; r++)
        have[r] = 0;
    have[root] = total;
    for (int32_t v = 0; v < p; v++) {
        int32_t r = (v + root) % p;
        int32_t mask = 1;
        while (mask < p && !(v & mask))
            mask <<= 1;
        double cur = have[r];
        for (int32_t m = mask >> 1; m > 0; m >>= 1) {
            if (v + m >= p)
                continue;
            double send = cur - block * m;
            if (send <= 0)
                continue;
            int32_t c = (v + m + root) % p;
            rw_b_send(b, r, c, send);
            have[c] = send;
            cur -= send;
        }
        have[r] = cur;
    }
}

/* Ring allgather (scatter_LR_allgather's second half): P - 1 steps, each rank
 * sends to its right neighbour the block it received last (block[] bytes of
 * the block that started at each rank). */
void rw_b_ring_allgather(rw_builder *b, const double *block)
{
    int32_t p = b->p;
    for (int32_t i = 1; i < p; i++) {
        for (int32_t r = 0; r < p; r++) {
            int32_t src = ((r - i + 1) % p + p) % p; /* block rank r forwards in step i */
            int64_t id = rw_b_xfer(b, r, (r + 1) % p, block[src], 0.0);
            rw_b_next(b, (r + 1) % p, id);
            rw_b_send_done(b, r, id, block[src]);
        }
        rw_b_commit(b);
    }
}

static rw_status scatter_allgather(rw_builder *b, double bytes, int rdb)
{
    int32_t p = b->p, root = b->opt.root;
    if (rdb && !rw_is_pow2(p))
        return rw_fail(RW_ERR_ARG, "bcast scatter_rdb_allgather is modelled for a power-of-two rank count, not %d",
                       (int)p);
    double *have = malloc((size_t)p * sizeof(double));
    double *block = malloc((size_t)p * sizeof(double));
    if (!have || !block) {
        free(have);
        free(block);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    }
    rw_b_binomial_scatter_blocks(b, root, bytes, have);
    double blk = (double)(((int64_t)bytes + p - 1) / p);
    /* Block of relative rank v: what is left of the message at offset v * blk. */
    for (int32_t v = 0; v < p; v++) {
        double left = bytes - (double)v * blk;
        block[(v + root) % p] = left < 0 ? 0 : (left > blk ? blk : left);
    }
    if (!rdb) {
        rw_b_ring_allgather(b, block);
    } else {
        /* Recursive doubling: in step `mask` relative ranks v and v ^ mask
         * swap the mask blocks of their aligned group. */
        for (int32_t mask = 1; mask < p; mask <<= 1) {
            for (int32_t v = 0; v < p; v++) {
                int32_t base = v & ~(mask - 1);
                double send = 0;
                for (int32_t j = base; j < base + mask; j++)
                    send += block[(j + root) % p];
                int32_t r = (v + root) % p, d = ((v ^ mask) + root) % p;
                int64_t id = rw_b_xfer(b, r, d, send, 0.0);
                rw_b_next(b, d, id);
                rw_b_send_done(b, r, id, send);
            }
            rw_b_commit(b);
        }
    }
    free(have);
    free(block);
    return RW_OK;
}

rw_status rwp_sched_bcast(rw_builder *b, const char *alg, double bytes)
{
    if (b->opt.root < 0 || b->opt.root >= b->p)
        return rw_fail(RW_ERR_ARG, "bcast root %d outside ranks 0..%d", (int)b->opt.root, (int)b->p - 1);
    if (!strcmp(alg, "binomial")) {
        rw_b_binomial_bcast(b, b->opt.root, bytes);
        return RW_OK;
    }
    if (!strcmp(alg, "knomial"))
        return knomial(b, bytes, b->opt.radix, 0);
    if (!strcmp(alg, "knomial_isend"))
        return knomial(b, bytes, b->opt.radix, 1);
    if (!strcmp(alg, "flat")) /* the root isends to every rank, 1, 2, ... in order */
        return knomial(b, bytes, b->p > 2 ? b->p : 2, 1);
    if (!strcmp(alg, "chain"))
        return chain(b, bytes);
    if (!strcmp(alg, "scatter_allgather"))
        return scatter_allgather(b, bytes, 0);
    if (!strcmp(alg, "scatter_rdb_allgather"))
        return scatter_allgather(b, bytes, 1);
    return rw_fail(RW_ERR_ARG,
                   "unknown bcast algorithm '%s' (known: binomial, knomial, knomial_isend, flat, chain, scatter_allgather, "
                   "scatter_rdb_allgather)", alg);
}
