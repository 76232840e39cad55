/* The collectives library's own allreduce and allgather (engine/mpi/coll,
 * rankwise_coll.h) as schedules, message for message, so that selection
 * compares them with the MPI's choice on equal terms:
 *   ring       allreduce: reduce-scatter then allgather around the ring,
 *              block b of count / P elements (+1 for b < count mod P), 4-byte
 *              elements assumed; fewer elements than ranks: recursive doubling.
 *              allgather: P - 1 steps, each sending one block to rank + 1.
 *   recursive_doubling  allreduce: SMPI's rdb pattern (the same fold of the
 *              first 2 rem ranks); allgather: XOR partners, mask blocks
 *              (power-of-two P, else ring).
 *   hier       allreduce: reduce over a binomial tree inside each node to its
 *              lowest rank, recursive doubling among those leaders (by rank),
 *              bcast inside the node; allgather: gather + bcast over the
 *              two-level tree (binomial between leaders, binomial inside).
 *   multiring  allgather: each block in parts, part k along ring k (forward,
 *              backward) through the ranks in the network's order
 *              (multiring_sched.c).
 *   binomial, knomial (radix 4, the library's default), chain
 *              reduce (allreduce) or gather (allgather) to rank 0 over the
 *              tree, then bcast of the result (P blocks) over the same tree.
 *   pairwise, symmetric  alltoall (bytes per rank pair): SMPI's ring steps
 *              (send to r + s, receive from r - s), and the symmetric
 *              sub-phases of alltoall_symmetric.c capped by rw_a2a_cap(net),
 *              as the library caps them with that network as its model. */
#include "predict_internal.h"
#include "rankwise_coll_tune.h"
#include "multiring_sched.h"
#include "trinary_sched.h"
#include "alltoall_symmetric.h"
#include "../coll/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rw_status over_tree(rw_builder *b, int allreduce, const rw_tree *t, double bytes)
{
    int32_t *bfs = rw_tree_bfs(t);
    int32_t *size = malloc((size_t)t->n_ranks * sizeof *size);
    if (!bfs || !size) {
        free(bfs);
        free(size);
        return rw_fail(RW_ERR_NOMEM, "schedule: out of memory for a tree of %d ranks", (int)t->n_ranks);
    }
    rw_tree_sizes(t, bfs, size);
    if (allreduce)
        rw_b_tree_reduce(b, t, bfs, NULL, bytes);
    else
        rw_b_tree_gather(b, t, bfs, size, NULL, bytes);
    rw_b_tree_bcast(b, t, bfs, NULL, allreduce ? bytes : bytes * t->n_ranks);
    free(bfs);
    free(size);
    return RW_OK;
}

/* One ring step: every rank sends len(block (r - shift) mod P) elements to
 * r + 1 and receives from r - 1 (MPI_Sendrecv). */
static void ring_step(rw_builder *b, int64_t count, int32_t shift, double elem)
{
    int32_t p = b->p;
    for (int32_t r = 0; r < p; r++) {
        int32_t blk = (int32_t)((((int64_t)r - shift) % p + p) % p);
        double sz = (double)(count / p + (blk < count % p)) * elem;
        int32_t to = (r + 1) % p;
        int64_t id = rw_b_xfer(b, r, to, sz, 0.0);
        rw_b_next(b, to, id);
        rw_b_send_done(b, r, id, sz);
    }
    rw_b_commit(b);
}

static rw_status allreduce_ring(rw_builder *b, double bytes)
{
    int64_t count = (int64_t)(bytes / 4);
    if (count < b->p)
        return rw_b_allreduce_rdb(b, NULL, b->p, bytes);
    for (int32_t s = 0; s < b->p - 1; s++) /* reduce-scatter: send block r - s */
        ring_step(b, count, s, 4.0);
    for (int32_t s = 0; s < b->p - 1; s++) /* allgather: send block r + 1 - s */
        ring_step(b, count, s - 1, 4.0);
    return RW_OK;
}

/* Ranks grouped by node (node_of), each node's ranks increasing; leader =
 * lowest rank. */
static rw_status allreduce_hier(rw_builder *b, const int32_t *node_of, double bytes)
{
    int32_t p = b->p;
    int32_t *lead = malloc((size_t)p * sizeof *lead), *leaders = malloc((size_t)p * sizeof *leaders);
    int32_t *members = malloc((size_t)p * sizeof *members);
    rw_tree **trees = calloc((size_t)p, sizeof *trees);
    int32_t **bfs = calloc((size_t)p, sizeof *bfs);
    int32_t *first = malloc((size_t)(p + 1) * sizeof *first);
    rw_status st = lead && leaders && members && trees && bfs && first
                       ? RW_OK
                       : rw_fail(RW_ERR_NOMEM, "schedule: out of memory for %d ranks", (int)p);
    int32_t m = 0;
    /* leaders in rank order, each node's members in rank order */
    for (int32_t r = 0; st == RW_OK && r < p; r++) {
        lead[r] = r;
        for (int32_t i = 0; i < m; i++)
            if (node_of[leaders[i]] == node_of[r]) {
                lead[r] = leaders[i];
                break;
            }
        if (lead[r] == r)
            leaders[m++] = r;
    }
    int32_t k = 0;
    for (int32_t i = 0; st == RW_OK && i < m; i++) {
        first[i] = k;
        for (int32_t r = leaders[i]; r < p; r++)
            if (lead[r] == leaders[i])
                members[k++] = r;
        st = rw_tree_shape_build(RW_SHAPE_BINOMIAL, k - first[i], 0, 2, &trees[i]);
        if (st == RW_OK && !(bfs[i] = rw_tree_bfs(trees[i])))
            st = rw_fail(RW_ERR_NOMEM, "schedule: out of memory");
    }
    if (st == RW_OK) {
        first[m] = k;
        for (int32_t i = 0; i < m; i++)
            rw_b_tree_reduce(b, trees[i], bfs[i], members + first[i], bytes);
        st = rw_b_allreduce_rdb(b, leaders, m, bytes);
        for (int32_t i = 0; st == RW_OK && i < m; i++)
            rw_b_tree_bcast(b, trees[i], bfs[i], members + first[i], bytes);
    }
    for (int32_t i = 0; trees && bfs && i < m; i++) {
        rw_tree_free(trees[i]);
        free(bfs[i]);
    }
    free(lead);
    free(leaders);
    free(members);
    free(trees);
    free(bfs);
    free(first);
    return st;
}

static rw_status allgather_ring(rw_builder *b, double bytes)
{
    for (int32_t s = 0; s < b->p - 1; s++)
        rw_b_peer_step(b, RW_PEER_SHIFT, 1, bytes, 0.0);
    return RW_OK;
}

static rw_status allgather_rd(rw_builder *b, double bytes)
{
    if (!rw_is_pow2(b->p))
        return allgather_ring(b, bytes);
    for (int32_t mask = 1; mask < b->p; mask <<= 1)
        rw_b_peer_step(b, RW_PEER_XOR, mask, (double)mask * bytes, 0.0);
    return RW_OK;
}

static rw_status sched_alltoall(const rw_pnet *net, int op, const rw_algo_info *a, double bytes,
                                const rw_coll_options *opt, rw_sched **out)
{
    rw_builder b;
    rw_status st = rw_builder_init(&b, net->n_ranks, opt);
    if (st != RW_OK)
        return st;
    if (a->id == RW_ALGO_PAIRWISE && bytes > 0)
        for (int32_t s = 1; s < b.p; s++)
            rw_b_peer_step(&b, RW_PEER_SHIFT, s, bytes, 0.0);
    else if (a->id == RW_ALGO_SYMMETRIC)
        st = rw_b_alltoall_symmetric(&b, net, 0, bytes);
    if (st != RW_OK && b.err == RW_OK)
        b.err = st;
    return rw_builder_finish(&b, out);
}

/* three trees at once, laid along the network (trinary_sched.c) */
static rw_status sched_trinary(const rw_pnet *net, int op, const rw_algo_info *a, double bytes,
                               const rw_coll_options *opt, rw_sched **out)
{
    return rw_sched_trinary(net, op, bytes, opt, out);
}

/* parts along rings in the network's order (multiring_sched.c) */
static rw_status sched_multiring(const rw_pnet *net, int op, const rw_algo_info *a, double bytes,
                                 const rw_coll_options *opt, rw_sched **out)
{
    return rw_sched_multiring(net, bytes, opt, out);
}

/* allreduce and allgather over a tree shape (the library's default radix
 * 4), in steps (ring, recursive doubling) or over the nodes (hier). */
static rw_status sched_steps(const rw_pnet *net, int op, const rw_algo_info *a, double bytes,
                             const rw_coll_options *opt, rw_sched **out)
{
    int allreduce = op == RW_COLL_ALLREDUCE;
    int32_t p = net->n_ranks;
    rw_tree *t = NULL;
    rw_status st = RW_OK;
    if (a->shape >= 0)
        st = rw_tree_shape_build((rw_tree_shape)a->shape, p, 0, 4, &t);
    else if (a->id == RW_ALGO_HIER && !allreduce)
        st = rw_tree_hierarchical(p, 0, net->node_of, RW_SHAPE_BINOMIAL, RW_SHAPE_BINOMIAL, 2, &t);
    if (st != RW_OK)
        return st;
    rw_builder b;
    st = rw_builder_init(&b, p, opt);
    if (st == RW_OK) {
        if (p == 1 || bytes == 0)
            st = RW_OK; /* nothing moves */
        else if (t)
            st = over_tree(&b, allreduce, t, bytes);
        else if (a->id == RW_ALGO_RING)
            st = allreduce ? allreduce_ring(&b, bytes) : allgather_ring(&b, bytes);
        else if (a->id == RW_ALGO_RECURSIVE_DOUBLING)
            st = allreduce ? rw_b_allreduce_rdb(&b, NULL, p, bytes) : allgather_rd(&b, bytes);
        else
            st = allreduce_hier(&b, net->node_of, bytes);
        if (st != RW_OK && b.err == RW_OK)
            b.err = st;
        st = rw_builder_finish(&b, out);
    }
    rw_tree_free(t);
    return st;
}

#define BOTH_ALL (RW_OP_BIT(RW_COLL_ALLREDUCE) | RW_OP_BIT(RW_COLL_ALLGATHER))

/* The schedule of each algorithm of the registry (src/coll/registry.c)
 * the predictor can build: the library's algorithms message for message,
 * for the operations the registry lets them run, within `only` (a tree
 * shape's rooted operations are costed along their tree: rw_sched_tree). */
static const struct {
    int id;
    unsigned only;
    rw_status (*build)(const rw_pnet *, int, const rw_algo_info *, double, const rw_coll_options *, rw_sched **);
} SCHED[] = {
    {RW_ALGO_BINOMIAL, BOTH_ALL, sched_steps},
    {RW_ALGO_KNOMIAL, BOTH_ALL, sched_steps},
    {RW_ALGO_CHAIN, BOTH_ALL, sched_steps},
    {RW_ALGO_HIER, BOTH_ALL, sched_steps},
    {RW_ALGO_RING, RW_OPS_ALL, sched_steps},
    {RW_ALGO_RECURSIVE_DOUBLING, RW_OPS_ALL, sched_steps},
    {RW_ALGO_TRINARY, RW_OPS_ALL, sched_trinary},
    {RW_ALGO_MULTIRING, RW_OPS_ALL, sched_multiring},
    {RW_ALGO_PAIRWISE, RW_OPS_ALL, sched_alltoall},
    {RW_ALGO_SYMMETRIC, RW_OPS_ALL, sched_alltoall},
};
#define N_SCHED (sizeof SCHED / sizeof *SCHED)

/* The operations schedule i builds. */
static unsigned sched_ops_of(size_t i)
{
    return rw_algo_by_id(SCHED[i].id)->ops & SCHED[i].only;
}

/* The operations with a schedule of any algorithm; the algorithms of op's. */
static unsigned sched_ops(void)
{
    unsigned ops = 0;
    for (size_t i = 0; i < N_SCHED; i++)
        ops |= sched_ops_of(i);
    return ops;
}

static const char *sched_algs(int op, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_SCHED; i++)
        if (sched_ops_of(i) & RW_OP_BIT(op)) {
            int k = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", rw_algo_by_id(SCHED[i].id)->name);
            if (k > 0)
                len = len + (size_t)k < size ? len + (size_t)k : size - 1;
        }
    return buf;
}

rw_status rw_sched_library(const rw_pnet *net, const char *op_name, const char *alg, double bytes,
                           const rw_coll_options *opt, rw_sched **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_sched_library: out is NULL");
    *out = NULL;
    if (!net || !op_name || !alg || net->n_ranks < 1)
        return rw_fail(RW_ERR_ARG, "rw_sched_library: a placed network, an operation and an algorithm are required");
    int op = rw_op_parse(op_name);
    char known[160];
    if (op < 0 || !(sched_ops() & RW_OP_BIT(op)))
        return rw_fail(RW_ERR_ARG, "unknown collective '%s' of the library's own (known: %s)", op_name,
                       rw_op_names(known, sizeof known, sched_ops(), ", "));
    if (!(bytes >= 0.0 && bytes < 9.0e15))
        return rw_fail(RW_ERR_ARG, "%s: message size %g bytes (0 to 8 PB)", op_name, bytes);
    const rw_algo_info *a = rw_algo_by_name(alg);
    if (a && strcmp(a->name, alg))
        a = NULL; /* the full name only */
    for (size_t i = 0; a && i < N_SCHED; i++)
        if (SCHED[i].id == a->id && (sched_ops_of(i) & RW_OP_BIT(op)))
            return SCHED[i].build(net, op, a, bytes, opt, out);
    for (size_t i = 0; a && i < N_SCHED; i++)
        if (SCHED[i].id == a->id)
            return rw_fail(RW_ERR_ARG, "%s is not an algorithm of %s (%s)", alg, op_name,
                           rw_op_names(known, sizeof known, sched_ops_of(i), ", "));
    return rw_fail(RW_ERR_ARG, "unknown %s algorithm '%s' of the library (known: %s)", op_name, alg,
                   sched_algs(op, known, sizeof known));
}

rw_status rw_predict_library(const rw_pnet *net, const char *op, const char *alg, double bytes,
                             const rw_coll_options *opt, rw_sim_mode mode, rw_sim_result *out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_predict_library: out is NULL");
    rw_sched *s = NULL;
    rw_status st = rw_sched_library(net, op, alg, bytes, opt, &s);
    if (st == RW_OK)
        st = rw_simulate(net, s, mode, out, NULL);
    rw_sched_free(s);
    return st;
}
