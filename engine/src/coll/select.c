/* Choosing a rooted collective's algorithm: the MPI's own choice (Open MPI's
 * tuned decision as SimGrid 3.32 SMPI's `ompi` selector makes it) against
 * rankwise's trees, all scored by the predictor. */
#include "registry.h"
#include "tune_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- Open MPI's choice */

/* Thresholds of smpi_openmpi_selector.cpp, bcast__ompi (names are what the
 * function table runs: 1 NTSL = chain, 2-3 ompi_pipeline, 4 split_bintree,
 * 5 NTSB = binary, 6 binomial_tree, 7 mvapich2 k-nomial, 8 scatter_rdb_allgather). */
static const char *ompi_bcast(int32_t p, double s)
{
    static const char *NAME[] = {"", "chain", "pipeline", "pipeline", "split_binary", "binary",
                                 "binomial", "knomial", "scatter_rdb_allgather"};
    int alg;
    if (p < 4)
        alg = s < 32 ? 3 : s < 256 ? 5 : s < 512 ? 3 : s < 1024 ? 7 : s < 32768 ? 1 : s < 131072 ? 5
            : s < 262144 ? 2 : s < 524288 ? 1 : s < 1048576 ? 6 : 5;
    else if (p < 8)
        alg = s < 64 ? 5 : s < 128 ? 6 : s < 2048 ? 5 : s < 8192 ? 6 : s < 1048576 ? 1 : 2;
    else if (p < 16)
        alg = s < 8 ? 7 : s < 64 ? 5 : s < 4096 ? 7 : s < 16384 ? 5 : s < 32768 ? 6 : 1;
    else if (p < 32)
        alg = s < 4096 ? 7 : s < 1048576 ? 6 : 8;
    else if (p < 64)
        alg = s < 2048 ? 6 : 7;
    else if (p < 128)
        alg = 7;
    else if (p < 256)
        alg = s < 2 ? 6 : s < 16384 ? 5 : s < 32768 ? 1 : s < 65536 ? 5 : 7;
    else if (p < 1024)
        alg = s < 16384 ? 7 : s < 32768 ? 4 : 7;
    else if (p < 2048)
        alg = s < 524288 ? 7 : 8;
    else if (p < 4096)
        alg = s < 262144 ? 7 : 8;
    else
        alg = s < 8192 ? 7 : s < 16384 ? 5 : s < 262144 ? 7 : 8;
    return NAME[alg];
}

/* reduce__ompi, commutative operations (1 linear, 2 chain, 3 pipeline,
 * 4 binary, 5 binomial, 6 in-order binary, 7 linear). */
static const char *ompi_reduce(int32_t p, double s)
{
    static const char *NAME[] = {"", "linear", "chain", "pipeline", "binary", "binomial", "in_order_binary",
                                 "linear"};
    int alg;
    if (p < 4)
        alg = s < 8 ? 7 : s < 16 ? 4 : s < 32 ? 3 : s < 262144 ? 1 : s < 524288 ? 3 : s < 1048576 ? 2 : 3;
    else if (p < 8)
        alg = s < 4096 ? 4 : s < 65536 ? 2 : s < 262144 ? 5 : s < 524288 ? 1 : s < 1048576 ? 5 : 1;
    else if (p < 16)
        alg = s < 8192 ? 4 : 5;
    else if (p < 32)
        alg = s < 4096 ? 4 : 5;
    else if (p < 256)
        alg = 5;
    else if (p < 512)
        alg = s < 8192 ? 5 : s < 16384 ? 6 : 5;
    else if (p < 2048)
        alg = 5;
    else if (p < 4096)
        alg = s < 512 ? 5 : s < 1024 ? 6 : s < 8192 ? 5 : s < 16384 ? 6 : 5;
    else
        alg = s < 16 ? 5 : s < 32 ? 6 : s < 1024 ? 5 : s < 2048 ? 6 : s < 8192 ? 5 : s < 16384 ? 6 : 5;
    return NAME[alg];
}

/* gather__ompi (1 basic_linear, 2 binomial, 3 linear_sync). */
static const char *ompi_gather(int32_t p, double s)
{
    static const char *NAME[] = {"", "linear", "binomial", "linear_sync"};
    int alg;
    if (p < 4)
        alg = s < 2 ? 3 : s < 4 ? 1 : s < 32768 ? 2 : s < 65536 ? 1 : s < 131072 ? 2 : 3;
    else if (p < 8)
        alg = s < 1024 ? 2 : s < 8192 ? 1 : s < 32768 ? 2 : s < 262144 ? 1 : 3;
    else if (p < 256)
        alg = 2;
    else if (p < 512)
        alg = s < 2048 ? 2 : s < 8192 ? 1 : 2;
    else
        alg = 2;
    return NAME[alg];
}

/* scatter__ompi (1 basic_linear, 2 binomial, 3 linear_nb). */
static const char *ompi_scatter(int32_t p, double s)
{
    static const char *NAME[] = {"", "linear", "binomial", "linear_nb"};
    int alg;
    if (p < 4)
        alg = s < 2 ? 3 : s < 131072 ? 1 : s < 262144 ? 3 : 1;
    else if (p < 8)
        alg = s < 2048 ? 2 : s < 4096 ? 1 : s < 8192 ? 2 : s < 32768 ? 1 : s < 1048576 ? 3 : 1;
    else if (p < 16)
        alg = s < 16384 ? 2 : s < 1048576 ? 3 : 1;
    else if (p < 32)
        alg = s < 16384 ? 2 : s < 32768 ? 1 : 3;
    else if (p < 64)
        alg = s < 512 ? 2 : s < 8192 ? 3 : s < 16384 ? 2 : 3;
    else
        alg = s < 512 ? 2 : 3;
    return NAME[alg];
}

/* allreduce__ompi, commutative operations (1 basic_linear and 2
 * nonoverlapping both run redbcast in SMPI, 3 rdb, 4 lr, 5
 * ompi_ring_segmented, 6 rab_rdb). bytes: the whole vector. */
static const char *ompi_allreduce(int32_t p, double s)
{
    static const char *NAME[] = {"", "basic_linear", "nonoverlapping", "recursive_doubling", "ring",
                                 "segmented_ring", "rabenseifner"};
    int alg;
    if (p < 4)
        alg = s < 8 ? 4 : s < 4096 ? 3 : s < 8192 ? 4 : s < 16384 ? 3 : s < 65536 ? 4 : s < 262144 ? 5 : 6;
    else if (p < 8)
        alg = s < 16 ? 4 : s < 8192 ? 3 : 6;
    else if (p < 16)
        alg = s < 8192 ? 3 : 6;
    else if (p < 32)
        alg = s < 64 ? 5 : s < 4096 ? 3 : 6;
    else if (p < 64)
        alg = s < 128 ? 5 : 6;
    else if (p < 128)
        alg = s < 262144 ? 3 : 6;
    else if (p < 256)
        alg = s < 131072 ? 2 : s < 262144 ? 3 : 6;
    else if (p < 512)
        alg = s < 4096 ? 2 : 6;
    else if (p < 2048)
        alg = s < 2048 ? 2 : s < 16384 ? 3 : 6;
    else if (p < 4096)
        alg = s < 2048 ? 2 : s < 4096 ? 5 : s < 16384 ? 3 : 6;
    else
        alg = s < 2048 ? 2 : s < 16384 ? 5 : s < 32768 ? 3 : 6;
    return NAME[alg];
}

/* allgather__ompi (1 NTSLR_NB, 2 bruck, 3 rdb, 4 ring, 5
 * ompi_neighborexchange, 6 pair). bytes: one rank's block. */
static const char *ompi_allgather(int32_t p, double s)
{
    static const char *NAME[] = {"", "linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"};
    int alg;
    if (p == 2)
        alg = 6;
    else if (p < 32)
        alg = 3;
    else if (p < 64)
        alg = s < 1024 ? 3 : s < 65536 ? 5 : 4;
    else if (p < 128)
        alg = s < 512 ? 3 : s < 65536 ? 5 : 4;
    else if (p < 256)
        alg = s < 512 ? 3 : s < 131072 ? 5 : s < 524288 ? 4 : s < 1048576 ? 5 : 4;
    else if (p < 512)
        alg = s < 32 ? 3 : s < 128 ? 2 : s < 1024 ? 3 : s < 131072 ? 5 : s < 524288 ? 4 : s < 1048576 ? 5 : 4;
    else if (p < 1024)
        alg = s < 64 ? 3 : s < 256 ? 2 : s < 2048 ? 3 : 5;
    else if (p < 2048)
        alg = s < 4 ? 3 : s < 8 ? 2 : s < 16 ? 3 : s < 32 ? 2 : s < 256 ? 3 : s < 512 ? 2 : s < 4096 ? 3 : 5;
    else if (p < 4096)
        alg = s < 32 ? 2 : s < 128 ? 3 : s < 512 ? 2 : s < 4096 ? 3 : 5;
    else
        alg = s < 2 ? 3 : s < 8 ? 2 : s < 16 ? 3 : s < 512 ? 2 : s < 4096 ? 3 : 5;
    return NAME[alg];
}

/* alltoall__ompi as SimGrid 3.32 has it (Open MPI 4's decision table; 1
 * linear, 2 pairwise = SMPI's pair, 3 modified bruck = bruck, 4 linear_sync
 * and 5 two_proc = basic linear): at 1 MiB per pair basic linear below 64
 * ranks, pair from 64 to 127 (measured so under SMPI). bytes: per pair. */
static const char *ompi_alltoall(int32_t p, double s)
{
    static const char *NAME[] = {"", "linear", "pair", "bruck", "linear", "linear"};
    /* per communicator-size band: ascending byte thresholds and the algorithm below each, then the last */
    static const struct {
        int32_t below_p;
        int n;
        double lim[10];
        int alg[11];
    } T[] = {
        {3, 9, {2, 4, 16, 64, 256, 4096, 32768, 262144, 1048576}, {2, 5, 2, 5, 2, 5, 2, 4, 5, 2}},
        {8, 5, {8192, 16384, 65536, 524288, 1048576}, {4, 1, 4, 1, 2, 1}},
        {16, 1, {262144}, {4, 1}},
        {32, 6, {4, 512, 8192, 32768, 262144, 524288}, {4, 3, 4, 1, 4, 1, 4}},
        {64, 2, {512, 524288}, {3, 1, 4}},
        {128, 4, {1024, 2048, 4096, 262144}, {3, 1, 4, 1, 2}},
        {256, 3, {1024, 2048, 262144}, {3, 4, 1, 2}},
        {512, 3, {1024, 8192, 32768}, {3, 4, 1, 2}},
        {1024, 5, {512, 8192, 16384, 131072, 262144}, {3, 4, 1, 4, 1, 2}},
        {2048, 5, {512, 1024, 2048, 16384, 262144}, {3, 4, 1, 4, 1, 4}},
        {4096, 4, {1024, 4096, 8192, 131072}, {3, 4, 1, 4, 1}},
        {INT32_MAX, 5, {2048, 8192, 16384, 32768, 65536}, {3, 4, 1, 4, 1, 4}},
    };
    size_t b = 0;
    while (p >= T[b].below_p)
        b++;
    int i = 0;
    while (i < T[b].n && s >= T[b].lim[i])
        i++;
    return NAME[T[b].alg[i]];
}

static int rw_coll_is_rooted(const char *op)
{
    return rw_op_rooted(rw_op_parse(op));
}

const char *rw_coll_ompi_algorithm(const char *op, int32_t comm_size, double bytes)
{
    static const char *(*const DECISION[RW_N_OPS])(int32_t, double) = {
        [RW_COLL_BCAST] = ompi_bcast,         [RW_COLL_REDUCE] = ompi_reduce, [RW_COLL_GATHER] = ompi_gather,
        [RW_COLL_SCATTER] = ompi_scatter,     [RW_COLL_ALLREDUCE] = ompi_allreduce,
        [RW_COLL_ALLGATHER] = ompi_allgather, [RW_COLL_ALLTOALL] = ompi_alltoall};
    int k = rw_op_parse(op);
    return k >= 0 ? DECISION[k](comm_size, bytes) : NULL;
}

/* ---------------------------------------------- the passthrough, modelled */

/* The tree and segment an Open MPI algorithm follows (over the ranks in
 * their order), or shape NULL when the predictor's own schedule of the same
 * name stands for it (bcast chain = SMPI's NTSL, scatter + allgather). */
static void ompi_as_tree(const char *op, const char *alg, double bytes, int32_t p, const char **shape,
                         int64_t *segment)
{
    *shape = NULL;
    *segment = 0;
    int bcast = rw_op_parse(op) == RW_COLL_BCAST;
    if (!strcmp(alg, "binomial")) {
        *shape = rw_op_parse(op) != RW_COLL_SCATTER ? "binomial" : "inorder_binomial";
        /* ompi_binomial reduce's segments (SMPI 3.32 reduce-ompi.cpp): 1 KiB from 2 KiB
         * while p > 0.6016 / 1024 * bytes + 1.3496, except below 20 KiB on fewer than 8 ranks */
        if (rw_op_parse(op) == RW_COLL_REDUCE && bytes >= 2048 && !(p < 8 && bytes < 20480) && bytes / 4 > 1 &&
            p > 0.6016 / 1024.0 * bytes + 1.3496)
            *segment = 1024;
    } else if (!strcmp(alg, "knomial")) {
        *shape = bcast ? NULL : "knomial"; /* bcast: MVAPICH2's, a position's sends at once (knomial_isend) */
    } else if (!strcmp(alg, "binary") || !strcmp(alg, "in_order_binary")) {
        *shape = "binary";
        *segment = bcast ? 8192 : 0; /* NTSB's segment */
    } else if (!strcmp(alg, "split_binary")) {
        *shape = "binary"; /* two halves down a binary tree, then exchanged: a binary pipeline */
        *segment = bytes < 370728 ? 1024 : 8192;
    } else if (!strcmp(alg, "pipeline")) {
        *shape = "chain";
        if (bcast) { /* ompi_pipeline's segment from the communicator size */
            *segment = 1024 << 7;
            if (!(p < 1.6134e-6 * bytes + 2.1102))
                *segment = p < 2.3679e-6 * bytes + 1.1787 ? 1024 << 6 : 1024 << 4;
        }
    } else if (!strcmp(alg, "chain") && !bcast) {
        *shape = "chain";
    } else if (!strcmp(alg, "linear") || !strcmp(alg, "linear_sync") || !strcmp(alg, "linear_nb")) {
        *shape = "flat";
    }
}

static double predict_named(const rw_pnet *net, const char *op, const char *alg, double bytes, int32_t root,
                            const rw_tune_options *opt)
{
    rw_coll_options c = rw_tune_coll_options(opt);
    c.root = root;
    const char *name = alg;
    if (!strcmp(alg, "scatter_rdb_allgather") && !rw_is_pow2(net->n_ranks))
        name = "scatter_allgather";
    if (rw_op_parse(op) == RW_COLL_BCAST && !strcmp(alg, "knomial"))
        name = "knomial_isend";
    rw_sim_result r;
    if (rw_predict_collective(net, op, name, bytes, &c, RW_SIM_SHARED, &r) != RW_OK)
        return INFINITY;
    return r.time;
}

/* Open MPI's fanout tree (coll_tuned_topo build_tree, as SMPI 3.32 has it),
 * which its generic reduce follows (ompi_binary: fanout 2): shifted rank s
 * on level L (levels of fanout^L ranks) has children s + fanout^L (i + 1);
 * the reduce receives them in that order, so they are listed last to
 * first (the tree schedule receives in reverse child order). */
static rw_status ompi_fanout_tree(int32_t n, int32_t root, int32_t fanout, rw_tree **out)
{
    int32_t *parent = malloc((size_t)n * sizeof *parent), *order = malloc((size_t)n * sizeof *order);
    if (!parent || !order) {
        free(parent);
        free(order);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d ranks", (int)n);
    }
    parent[root] = -1;
    order[root] = 0;
    int64_t delta = 1, level_end = 1; /* level of s: delta = fanout^L, first rank of the next level */
    for (int32_t s = 0; s < n; s++) {
        while (s >= level_end) {
            delta *= fanout;
            level_end += delta;
        }
        for (int32_t i = 0; i < fanout; i++) {
            int64_t c = s + delta * (i + 1);
            if (c >= n)
                break;
            parent[(c + root) % n] = (s + root) % n;
            order[(c + root) % n] = fanout - 1 - i;
        }
    }
    rw_status st = rw_tree_from_parents(n, root, parent, order, out);
    free(parent);
    free(order);
    return st;
}

/* The rooted passthrough: a tree (*tree, owned by the caller) or the
 * predictor's schedule of the same name (*tree NULL); its predicted time. */
static rw_status passthrough_rooted(const rw_pnet *net, const char *op, const char *ompi, int32_t root,
                                    double bytes, const rw_tune_options *o, rw_tree **tree, int64_t *segment,
                                    double *time)
{
    const char *shape;
    int64_t seg;
    *tree = NULL;
    ompi_as_tree(op, ompi, bytes, net->n_ranks, &shape, &seg);
    if (shape) {
        rw_status st = rw_op_parse(op) == RW_COLL_REDUCE && !strcmp(ompi, "binary")
                           ? ompi_fanout_tree(net->n_ranks, root, 2, tree)
                           : rw_tree_by_name(shape, net->n_ranks, root, 4, tree);
        if (st != RW_OK)
            return st;
        *segment = seg;
        /* Open MPI's binary and binomial reduces pre-post the next child's receive; its
         * gathers take their children one blocking receive after the other */
        int k = rw_op_parse(op);
        int generic = k == RW_COLL_REDUCE && (!strcmp(ompi, "binary") || !strcmp(ompi, "binomial"));
        const char *as = generic || k == RW_COLL_GATHER ? rw_op_ompi_name(k) : op;
        *time = rw_tune_score(net, as, *tree, bytes, seg, o);
    } else {
        *segment = strcmp(ompi, "chain") ? 0 : 8192;
        *time = predict_named(net, op, ompi, bytes, root, o);
    }
    return RW_OK;
}

/* Rooted op from rank 0 as Open MPI chooses it (allreduce's redbcast). */
static double ompi_rooted_time(const rw_pnet *net, const char *op, double bytes, const rw_tune_options *o)
{
    rw_tree *t = NULL;
    int64_t seg;
    double time = INFINITY;
    passthrough_rooted(net, op, rw_coll_ompi_algorithm(op, net->n_ranks, bytes), 0, bytes, o, &t, &seg, &time);
    rw_tree_free(t);
    return time;
}

/* Open MPI's allreduce and allgather as SMPI runs them under the ompi
 * selector: the predictor's schedule of the same algorithm. lr (ring and
 * segmented_ring below P MiB, where SMPI's segmented ring is lr) with fewer
 * 4-byte elements than ranks runs redbcast, and its leftover count mod P
 * elements take a second allreduce; redbcast is Open MPI's reduce to 0
 * then its bcast from 0, costed one after the other. +inf where the
 * predictor has no schedule (rdb allgather off a power of two, linear). */
static double ompi_all_time(const rw_pnet *net, const char *op, const char *alg, double bytes,
                            const rw_tune_options *o)
{
    int32_t p = net->n_ranks;
    if (bytes <= 0 || p == 1) /* nothing moves */
        return 0.0;
    if (rw_op_parse(op) == RW_COLL_ALLGATHER) {
        const char *name = !strcmp(alg, "recursive_doubling") || !strcmp(alg, "two_proc") ? "rdb"
                           : !strcmp(alg, "neighbor")                                  ? "neighborexchange"
                           : !strcmp(alg, "linear")                                    ? NULL
                                                                                       : alg;
        return name ? predict_named(net, op, name, bytes, 0, o) : INFINITY;
    }
    if (!strcmp(alg, "recursive_doubling"))
        return predict_named(net, op, "rdb", bytes, 0, o);
    if (!strcmp(alg, "rabenseifner"))
        return predict_named(net, op, "rabenseifner", bytes, 0, o);
    int64_t count = (int64_t)(bytes / 4);
    if ((!strcmp(alg, "ring") || !strcmp(alg, "segmented_ring")) && count >= p) {
        double t = predict_named(net, op, "ring", bytes, 0, o);
        int64_t rest = count % p;
        if (rest)
            t += ompi_all_time(net, op, rw_coll_ompi_algorithm(op, p, (double)rest * 4), (double)rest * 4, o);
        return t;
    }
    return ompi_rooted_time(net, rw_op_name(RW_COLL_REDUCE), bytes, o) +
           ompi_rooted_time(net, rw_op_name(RW_COLL_BCAST), bytes, o);
}

rw_status rw_coll_check_decision(const char *fn, const rw_pnet *net, const char *op, double bytes,
                                 const rw_tune_options *opt, rw_tune_options *o, const char **fixed)
{
    *o = opt ? *opt : rw_tune_options_default();
    if (!net || net->n_ranks < 1)
        return rw_fail(RW_ERR_ARG, "%s: a network with a placement is required", fn);
    *fixed = rw_coll_ompi_algorithm(op, net->n_ranks, bytes);
    char known[160];
    if (!*fixed)
        return rw_fail(RW_ERR_ARG, "unknown collective '%s' (known: %s)", op ? op : "(null)",
                       rw_op_names(known, sizeof known, RW_OPS_ALL, ", "));
    if (!(bytes >= 0 && bytes < 9.0e15))
        return rw_fail(RW_ERR_ARG, "%s: message size %g bytes (0 to 8 PB)", op, bytes);
    if (!(o->min_gain >= 0 && o->min_gain < 1) || o->eager_limit < 0 || !(o->gamma >= 0))
        return rw_fail(RW_ERR_ARG, "%s: min_gain %g (0 to 1), eager limit %lld and gamma %g (>= 0)", op, o->min_gain,
                       (long long)o->eager_limit, o->gamma);
    return RW_OK;
}

/* The MPI's own algorithm alg for op, as the MPI runs it (a rooted one from
 * root): what every decision compares against and rescores. */
static double passthrough_time(const rw_pnet *net, const char *op, const char *alg, int32_t root, double bytes,
                               const rw_tune_options *o, int64_t *segment)
{
    *segment = 0;
    if (rw_op_parse(op) == RW_COLL_ALLTOALL)
        return net->n_ranks > 1 && bytes > 0 ? predict_named(net, op, alg, bytes, 0, o) : 0.0;
    if (!rw_coll_is_rooted(op))
        return ompi_all_time(net, op, alg, bytes, o);
    rw_tree *t = NULL;
    double time = INFINITY;
    if (passthrough_rooted(net, op, alg, root, bytes, o, &t, segment, &time) != RW_OK)
        time = INFINITY;
    rw_tree_free(t);
    return time;
}

double rw_coll_ompi_time(const rw_pnet *net, const char *op, const char *alg, double bytes,
                         const rw_tune_options *o, int64_t *segment)
{
    return passthrough_time(net, op, alg, 0, bytes, o, segment);
}

static double library_time(const rw_pnet *net, const char *op, const char *alg, int32_t root, double bytes,
                           const rw_tune_options *o)
{
    rw_coll_options c = rw_tune_coll_options(o);
    rw_sim_result r;
    if (rw_coll_is_rooted(op))
        c.root = root; /* rooted: from the decision's root (trinary) */
    if (rw_predict_library(net, op, alg, bytes, &c, RW_SIM_SHARED, &r) != RW_OK)
        return INFINITY;
    return r.time;
}

/* ---------------------------------------------------------------- decide */

void rw_coll_decision_free(rw_coll_decision *d)
{
    if (!d)
        return;
    for (int32_t i = 0; i < d->n_candidates; i++)
        rw_tree_free(d->candidates[i].tree);
    free(d->candidates);
    free(d);
}

static rw_status add(rw_coll_decision *d, const char *alg, const char *source, int64_t segment, double time,
                     rw_tree *tree)
{
    rw_coll_candidate *c = &d->candidates[d->n_candidates++];
    snprintf(c->algorithm, sizeof c->algorithm, "%s", alg);
    snprintf(c->source, sizeof c->source, "%s", source);
    c->segment = segment;
    c->time = time;
    c->tree = tree;
    return RW_OK;
}

/* A copy of t, children in the same order. */
static rw_status copy_tree(const rw_tree *t, rw_tree **out)
{
    int32_t *order = malloc((size_t)t->n_ranks * sizeof *order);
    if (!order)
        return rw_fail(RW_ERR_NOMEM, "out of memory for a tree of %d ranks", (int)t->n_ranks);
    order[t->root] = 0;
    for (int32_t r = 0; r < t->n_ranks; r++)
        for (int32_t k = t->first_child[r]; k < t->first_child[r + 1]; k++)
            order[t->child[k]] = k - t->first_child[r];
    rw_status st = rw_tree_from_parents(t->n_ranks, t->root, t->parent, order, out);
    free(order);
    return st;
}

#define MAX_CANDIDATES 8

/* The library's algorithms the registry has the tuner weigh for op, by
 * name, in its order; the long-message ones from the eager limit on. */
static void library_candidates(rw_coll_decision *d, const rw_pnet *net, int op, int32_t root, double bytes,
                               const rw_tune_options *o)
{
    const rw_algo_info *a;
    for (int i = 0; (a = rw_algo_at(i)) != NULL; i++)
        if ((a->tuned & RW_OP_BIT(op)) && (!(a->flags & RW_ALGO_LONG) || bytes >= (double)o->eager_limit))
            add(d, a->name, a->name, 0, library_time(net, rw_op_name(op), a->name, root, bytes, o), NULL);
}

/* Ranks in the largest subtree below t's root: a scatter sends that many
 * blocks in its largest message. */
static int32_t largest_subtree(const rw_tree *t)
{
    int32_t n = t->n_ranks, best = 0;
    int32_t *bfs = rw_tree_bfs(t), *size = malloc((size_t)n * sizeof *size);
    if (!bfs || !size) {
        free(bfs);
        free(size);
        return n; /* no memory to tell: as large as can be */
    }
    rw_tree_sizes(t, bfs, size);
    for (int32_t k = t->first_child[t->root]; k < t->first_child[t->root + 1]; k++)
        if (size[t->child[k]] > best)
            best = size[t->child[k]];
    free(bfs);
    free(size);
    return best;
}

/* Whether the predictor's time of candidate c can be acted on. Scatter
 * trees whose messages reach the eager limit are not: their rendezvous
 * subtree messages are not costed as SMPI runs them. Measured
 * (docs/results/coll.md, "Collectives"): at and above the limit they gained
 * 0.1 % on average, 42 of 97 rows more than 2 % slower than Open MPI's
 * choice where the predictor saw x1.07-x2.6; below it, trees of 16 KiB
 * blocks whose largest message held 4 blocks (64 KiB) ran 4-5 % slower
 * than Open MPI where the predictor saw 12-21 % faster. */
static int trusted(const char *op, const rw_coll_candidate *c, double bytes, const rw_tune_options *o)
{
    if (rw_op_parse(op) != RW_COLL_SCATTER)
        return 1;
    if (bytes >= (double)o->eager_limit)
        return 0;
    return !c->tree || bytes * largest_subtree(c->tree) < (double)o->eager_limit;
}

/* Candidate i's time on net2 (as rw_coll_decide costed it on the network). */
static double rescore(const rw_coll_decision *d, int32_t i, const rw_pnet *net2, const char *op, int32_t root,
                      double bytes, const rw_tune_options *o)
{
    const rw_coll_candidate *c = &d->candidates[i];
    int64_t segment;
    if (i == 0)
        return passthrough_time(net2, op, c->algorithm, root, bytes, o, &segment);
    if (c->tree)
        return rw_tune_score(net2, op, c->tree, bytes, c->segment, o);
    return library_time(net2, op, c->algorithm, root, bytes, o);
}

struct rescore_ctx {
    const rw_coll_decision *d;
    const char *op;
    int32_t root;
    double bytes;
    const rw_tune_options *o;
};

static double rescore_on(int32_t i, const rw_pnet *view, void *ctx)
{
    const struct rescore_ctx *c = ctx;
    return rescore(c->d, i, view, c->op, c->root, c->bytes, c->o);
}

rw_status rw_coll_decide(const rw_pnet *net, const char *op, int32_t root, double bytes,
                         const rw_tune_options *opt, rw_coll_decision **out)
{
    if (!out)
        return rw_fail(RW_ERR_ARG, "rw_coll_decide: out is NULL");
    *out = NULL;
    rw_tune_options o;
    const char *ompi = NULL;
    rw_status checked = rw_coll_check_decision("rw_coll_decide", net, op, bytes, opt, &o, &ompi);
    if (checked != RW_OK)
        return checked;
    if (root < 0 || root >= net->n_ranks)
        return rw_fail(RW_ERR_ARG, "%s: root %d is not a rank of %d", op, (int)root, (int)net->n_ranks);
    rw_coll_decision *d = calloc(1, sizeof *d);
    if (!d || !(d->candidates = calloc(MAX_CANDIDATES, sizeof *d->candidates))) {
        free(d);
        return rw_fail(RW_ERR_NOMEM, "out of memory for a decision");
    }
    int32_t p = net->n_ranks;
    rw_status st = RW_OK;
    rw_tree *t = NULL;
    int64_t seg;

    int k_op = rw_op_parse(op);
    if (k_op == RW_COLL_ALLTOALL) {
        /* [0] the MPI's own, then the library's own (no trees) */
        add(d, ompi, "passthrough", 0, passthrough_time(net, op, ompi, root, bytes, &o, &seg), NULL);
        library_candidates(d, net, k_op, root, bytes, &o);
        goto choose;
    }
    if (!rw_coll_is_rooted(op)) {
        /* [0] the MPI's own, [1] the library's binomial, then its others. */
        add(d, ompi, "passthrough", 0, passthrough_time(net, op, ompi, root, bytes, &o, &seg), NULL);
        library_candidates(d, net, k_op, root, bytes, &o);
        goto choose;
    }
    /* [0] the passthrough as the MPI runs it. */
    double pass_time;
    if ((st = passthrough_rooted(net, op, ompi, root, bytes, &o, &t, &seg, &pass_time)) != RW_OK)
        goto fail;
    add(d, ompi, "passthrough", seg, pass_time, t);
    /* [1] rankwise's binomial over the ranks. */
    if ((st = rw_tree_by_name("binomial", p, root, 2, &t)) != RW_OK)
        goto fail;
    add(d, "tree", "binomial", 0, rw_tune_score(net, op, t, bytes, 0, &o), t);
    /* The model's trees. */
    const rw_tree *starts[2];
    int n_starts = 0;
    if (o.start_tree)
        starts[n_starts++] = o.start_tree;
    if (d->candidates[0].tree) /* the MPI's own tree: the search can only better it */
        starts[n_starts++] = d->candidates[0].tree;
    if ((st = rw_tree_eager_from(net, op, root, bytes, &o, starts, n_starts, &t)) != RW_OK)
        goto fail;
    add(d, "tree", "eager", 0, rw_tune_score(net, op, t, bytes, 0, &o), t);
    if (k_op == RW_COLL_GATHER || k_op == RW_COLL_SCATTER) {
        if ((st = rw_model_tree_volume(net, op, root, bytes, &o, &t)) != RW_OK)
            goto fail;
        add(d, "tree", "volume", 0, rw_tune_score(net, op, t, bytes, 0, &o), t);
    }
    if (k_op == RW_COLL_BCAST && bytes >= (double)o.eager_limit) {
        rw_status (*build[2])(const rw_pnet *, int32_t, rw_tree **) = {rw_model_tree_chain, rw_model_tree_binary};
        const char *name[2] = {"chain", "binary"};
        for (int k = 0; k < 2; k++) {
            if ((st = build[k](net, root, &t)) != RW_OK)
                goto fail;
            seg = rw_model_segment(net, t, bytes, &o);
            add(d, "tree", name[k], seg, rw_tune_score(net, op, t, bytes, seg, &o), t);
        }
        /* The eager tree pipelined too. */
        const rw_tree *e = d->candidates[2].tree;
        seg = rw_model_segment(net, e, bytes, &o);
        if (seg > 0) {
            if ((st = copy_tree(e, &t)) != RW_OK)
                goto fail;
            add(d, "tree", "eager", seg, rw_tune_score(net, op, t, bytes, seg, &o), t);
        }
    }
    /* the library's own by name after the trees (trinary: the three trees, reversed for reduce) */
    library_candidates(d, net, k_op, root, bytes, &o);
choose:;
    double pass = d->candidates[0].time;
    double times[MAX_CANDIDATES];
    uint8_t eligible[MAX_CANDIDATES];
    for (int32_t i = 0; i < d->n_candidates; i++) {
        times[i] = d->candidates[i].time;
        eligible[i] = (uint8_t)trusted(op, &d->candidates[i], bytes, &o);
    }
    struct rescore_ctx ctx = {d, op, root, bytes, &o};
    rw_coll_gain_rule rule = {net, d->n_candidates, times, eligible, o.min_gain, rescore_on, &ctx};
    if ((st = rw_coll_pick(&rule, &d->chosen)) != RW_OK)
        goto fail;
    d->gain = pass > 0 && isfinite(pass) ? 1.0 - d->candidates[d->chosen].time / pass : 0.0;
    *out = d;
    return RW_OK;
fail:
    rw_coll_decision_free(d);
    return st;
}
